// Package fanout hands what one goroutine publishes to every subscriber,
// without ever waiting for one: the API server's write traces and the demo's
// reactions reach the TUI through it, and a TUI that falls behind must not
// slow a write or an informer down.
package fanout

import (
	"sync"
	"sync/atomic"
)

// Hub fans values out. A subscriber whose buffer is full misses the value,
// and the hub counts it in Dropped. The zero Hub is ready to use.
type Hub[T any] struct {
	mu      sync.Mutex
	subs    map[*subscriber[T]]struct{}
	closed  bool
	dropped atomic.Uint64
	// count is len(subs), read without the lock by publishers that do
	// the work of a value only when someone will receive it.
	count atomic.Int32
}

// subscriber hands a value over without blocking, or says it could not.
type subscriber[T any] struct {
	offer func(T) bool
	end   func()
}

// Subscribe is Map without a conversion.
func (h *Hub[T]) Subscribe(buffer int) (<-chan T, func()) {
	return Map(h, buffer, func(v T) T { return v })
}

// Map subscribes to h with a channel of buffer values of f(v): a consumer
// of another type needs no goroutine to convert. f runs in the publisher's
// goroutine, under the hub's lock: it must be cheap and must not block.
// cancel ends the subscription and closes the channel; it may be called
// more than once, and after Close. On a closed hub the channel comes closed.
func Map[T, U any](h *Hub[T], buffer int, f func(T) U) (values <-chan U, cancel func()) {
	ch := make(chan U, buffer)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		close(ch)
		return ch, func() {}
	}
	s := &subscriber[T]{
		offer: func(v T) bool {
			select {
			case ch <- f(v):
				return true
			default:
				return false
			}
		},
		end: func() { close(ch) },
	}
	if h.subs == nil {
		h.subs = map[*subscriber[T]]struct{}{}
	}
	h.subs[s] = struct{}{}
	h.count.Store(int32(len(h.subs)))
	return ch, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if _, ok := h.subs[s]; ok { // not yet ended by Close
			delete(h.subs, s)
			h.count.Store(int32(len(h.subs)))
			s.end()
		}
	}
}

// Subscribers is how many subscriptions are open. A publisher asks it to
// skip building values nobody would receive.
func (h *Hub[T]) Subscribers() int { return int(h.count.Load()) }

// Publish offers v to every subscriber and returns at once.
func (h *Hub[T]) Publish(v T) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		if !s.offer(v) {
			h.dropped.Add(1)
		}
	}
}

// Dropped is how many values subscribers missed, all of them together.
func (h *Hub[T]) Dropped() uint64 { return h.dropped.Load() }

// Close ends every subscription, after the values already buffered, and
// every later one at once. Publish after Close does nothing.
func (h *Hub[T]) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for s := range h.subs {
		s.end()
	}
	clear(h.subs)
	h.count.Store(0)
}

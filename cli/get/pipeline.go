package get

import (
	"context"
	"runtime"
	"sync"

	"github.com/etcdscope/etcdscope/etcdview"
)

// chunk is a run of consecutive values of a listing, worked on by one
// worker.
type chunk[T any] struct {
	kvs  []etcdview.KV
	out  T
	err  error // the first value the work failed on, in key order
	done chan struct{}
}

// listChunkSize, listChunkBytes and listReadAhead bound the work in
// flight: chunks small enough to keep every core busy to the last page
// (250 values, fewer when they pass listChunkBytes), and a page of them
// queued, so that etcd's next page comes while this one is worked on.
const (
	listChunkSize  = 250
	listChunkBytes = 512 << 10
	listReadAhead  = etcdview.ValuesPage / listChunkSize
)

// chunkLen is how many of kvs, at least one, make the next chunk.
func chunkLen(kvs []etcdview.KV) int {
	n, size := 0, 0
	for n < len(kvs) && n < listChunkSize && (n == 0 || size+len(kvs[n].Value) <= listChunkBytes) {
		size += len(kvs[n].Value)
		n++
	}
	return n
}

func (c *chunk[T]) run(ctx context.Context, work func([]etcdview.KV) (T, error)) {
	defer close(c.done)
	if c.err = ctx.Err(); c.err != nil {
		return // the listing is abandoned: a chunk that waited is not worked on
	}
	c.out, c.err = work(c.kvs)
	c.kvs = nil
}

// inOrder runs work over the values pages yields, read ahead and worked on
// every core a chunk at a time, and hands each chunk's result to emit in
// key order as they are done, so that memory holds a few pages, and etcd,
// the work and the output overlap. A chunk's error ends the listing after
// its result is emitted (work returns what it made of the values before
// it); so does the end of ctx (Ctrl-C), at once: no chunk is waited for
// that a worker has not started.
func inOrder[T any](ctx context.Context, pages etcdview.Pager, work func([]etcdview.KV) (T, error), emit func(T) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	queue := make(chan *chunk[T], listReadAhead)
	ordered := make(chan *chunk[T], listReadAhead)
	var workers sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		workers.Go(func() {
			for c := range queue {
				c.run(ctx, work)
			}
		})
	}
	var readErr error // set before ordered is closed
	go func() {
		defer close(ordered)
		defer close(queue)
		readErr = pages(ctx, func(p etcdview.Page) error {
			kvs := p.Keys
			for len(kvs) > 0 {
				n := chunkLen(kvs)
				c := &chunk[T]{kvs: kvs[:n], done: make(chan struct{})}
				kvs = kvs[n:]
				// The queue first: a chunk the writer waits for is
				// always one a worker will finish.
				for _, ch := range []chan *chunk[T]{queue, ordered} {
					select {
					case ch <- c:
					case <-ctx.Done():
						return ctx.Err()
					}
				}
			}
			return nil
		})
	}()
	err := emitInOrder(ctx, ordered, emit)
	if err != nil {
		cancel()
		for range ordered {
		}
	}
	workers.Wait()
	if err == nil {
		err = readErr
	}
	return err
}

// emitInOrder emits the chunks' results in the order the chunks come.
func emitInOrder[T any](ctx context.Context, chunks <-chan *chunk[T], emit func(T) error) error {
	for c := range chunks {
		select {
		case <-c.done:
		case <-ctx.Done():
			return ctx.Err()
		}
		if err := emit(c.out); err != nil {
			return err
		}
		if c.err != nil {
			return c.err
		}
	}
	return nil
}

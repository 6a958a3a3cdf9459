package uitest

import (
	"context"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/etcdscope/etcdscope/etcdview"
)

// watcher is one Watch: the changes below prefix from revision from on,
// queued without bound until its reader takes them, so that a write never
// waits for a reader.
type watcher struct {
	prefix string
	from   int64

	mu    sync.Mutex
	queue []etcdview.Batch
	wake  chan struct{} // holds a token while the queue may have grown
}

func newWatcher(prefix string) *watcher {
	return &watcher{prefix: prefix, wake: make(chan struct{}, 1)}
}

// offer queues w's change when the watch covers it.
func (wt *watcher) offer(w write) {
	if w.kv.ModRevision >= wt.from && strings.HasPrefix(w.kv.Key, wt.prefix) {
		wt.push(etcdview.Batch{Revision: w.kv.ModRevision, Events: []etcdview.Event{w.event()}})
	}
}

func (wt *watcher) push(b etcdview.Batch) {
	wt.mu.Lock()
	wt.queue = append(wt.queue, b)
	wt.mu.Unlock()
	select {
	case wt.wake <- struct{}{}:
	default:
	}
}

// take waits for queued batches and returns them all; false once ctx ends.
func (wt *watcher) take(ctx context.Context) ([]etcdview.Batch, bool) {
	for {
		wt.mu.Lock()
		q := wt.queue
		wt.queue = nil
		wt.mu.Unlock()
		if len(q) > 0 {
			return q, true
		}
		select {
		case <-wt.wake:
		case <-ctx.Done():
			return nil, false
		}
	}
}

// Watch sends the changes below prefix from opts.Rev on (0: from the next
// write), one batch a revision, then every change as it is written, until
// ctx ends. A start before the compaction gets the error batch first, and
// ends there unless opts.ContinueAfterCompaction, as Live and File do.
func (s *Source) Watch(ctx context.Context, prefix string, opts etcdview.WatchOptions) <-chan etcdview.Batch {
	out := make(chan etcdview.Batch)
	wt := newWatcher(prefix)
	s.mu.Lock()
	wt.from = opts.Rev
	if wt.from == 0 {
		wt.from = s.rev + 1
	}
	ends := false
	if wt.from < s.compacted {
		wt.push(etcdview.Batch{Revision: s.compacted, Err: &etcdview.CompactedError{Rev: wt.from, Compacted: s.compacted}})
		ends = !opts.ContinueAfterCompaction
		wt.from = s.compacted
	}
	if !ends {
		first := sort.Search(len(s.writes), func(i int) bool { return s.writes[i].kv.ModRevision >= wt.from })
		for _, w := range s.writes[first:] {
			wt.offer(w)
		}
		s.watchers = append(s.watchers, wt)
	}
	s.mu.Unlock()
	go func() {
		defer close(out)
		defer s.unwatch(wt)
		for {
			bs, ok := wt.take(ctx)
			if !ok {
				return
			}
			for _, b := range bs {
				select {
				case out <- b:
				case <-ctx.Done():
					return
				}
			}
			if ends {
				return
			}
		}
	}()
	return out
}

func (s *Source) unwatch(wt *watcher) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.watchers = slices.DeleteFunc(s.watchers, func(w *watcher) bool { return w == wt })
}

package etcdview

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Watch streams the changes below prefix. A broken stream, a member without
// a leader or a restarted member do not end it: it is opened again from the
// revision after the last one delivered, and events already delivered are
// dropped, so every revision arrives once and in order. It ends when ctx
// does, on an error retrying cannot fix, or after a compacted Rev unless
// opts.ContinueAfterCompaction.
func (l *Live) Watch(ctx context.Context, prefix string, opts WatchOptions) <-chan Batch {
	out := make(chan Batch, 16)
	w := &liveWatch{l: l, out: out, next: opts.Rev, opts: opts}
	w.key, w.end = prefixRange(prefix)
	if w.opts.ProgressInterval <= 0 {
		w.opts.ProgressInterval = 5 * time.Second
	}
	go w.run(ctx)
	return out
}

type liveWatch struct {
	l        *Live
	out      chan<- Batch
	key, end string
	opts     WatchOptions
	// next is the first revision not yet delivered; 0 until the first
	// stream tells the revision it started at.
	next int64
	term uint64 // Raft term of the last response, to see leader changes
	note string // said with the next batch
}

// Backoff between attempts to reopen a failed stream.
const (
	minBackoff = 100 * time.Millisecond
	maxBackoff = 2 * time.Second
)

func (w *liveWatch) run(ctx context.Context) {
	defer close(w.out)
	backoff := minBackoff
	for ctx.Err() == nil {
		delivered, err := w.stream(ctx)
		if ctx.Err() != nil {
			return
		}
		var compacted *CompactedError
		switch {
		case errors.As(err, &compacted):
			if !w.send(ctx, Batch{Err: err, Revision: compacted.Compacted}) || !w.opts.ContinueAfterCompaction {
				return
			}
			w.next = compacted.Compacted
			w.note = fmt.Sprintf("continuing from revision %d, the oldest etcd still holds", w.next)
			continue
		case isTerminal(err):
			w.send(ctx, Batch{Err: fmt.Errorf("watch %s: %w", describeRange(w.key, w.end), plainError(err))})
			return
		}
		if delivered {
			backoff = minBackoff
		}
		w.note = fmt.Sprintf("stream interrupted (%v), resumed at revision %d", plainError(err), w.next)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// stream runs one etcd watch until it fails, and says whether it delivered
// anything. WithRequireLeader makes a member cut off from its leader cancel
// the watch instead of keeping it silently stale, as kube-apiserver asks.
func (w *liveWatch) stream(ctx context.Context) (delivered bool, err error) {
	ctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	opts := []clientv3.OpOption{
		clientv3.WithRange(w.end), clientv3.WithPrevKV(),
		clientv3.WithProgressNotify(), clientv3.WithCreatedNotify(),
	}
	if w.next > 0 {
		opts = append(opts, clientv3.WithRev(w.next))
	}
	wc := w.l.c.Watch(ctx, w.key, opts...)
	tick := time.NewTicker(w.opts.ProgressInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return delivered, ctx.Err()
		case <-tick.C:
			// Progress requests go to the stream of ctx's metadata: the
			// one this watch runs on.
			w.l.c.RequestProgress(ctx)
		case resp, ok := <-wc:
			if !ok {
				return delivered, errors.New("watch channel closed")
			}
			if resp.CompactRevision != 0 {
				return delivered, &CompactedError{Rev: w.next, Compacted: resp.CompactRevision}
			}
			if err := resp.Err(); err != nil {
				return delivered, err
			}
			if w.handle(resp) {
				delivered = true
				if !w.send(ctx, w.batch(resp)) {
					return delivered, ctx.Err()
				}
			}
		}
	}
}

// handle notes what a response says about the stream, and whether it holds
// anything to deliver.
func (w *liveWatch) handle(resp clientv3.WatchResponse) bool {
	if t := resp.Header.RaftTerm; t != 0 {
		if w.term != 0 && t > w.term {
			w.addNote(fmt.Sprintf("leader changed (Raft term %d → %d)", w.term, t))
		}
		w.term = max(w.term, t)
	}
	if resp.Created {
		// A watch from now starts after the revision it was created at.
		if w.next == 0 {
			w.next = resp.Header.Revision + 1
		}
		return w.note != ""
	}
	return true
}

func (w *liveWatch) addNote(n string) {
	if w.note != "" {
		n = w.note + "; " + n
	}
	w.note = n
}

// batch turns a response into a Batch, dropping events of revisions already
// delivered by an earlier stream. A progress notification moves the head but
// not next: etcd before 3.4.24 could send one ahead of pending events
// (etcd-io/etcd#15220), so only delivered events move the resume point.
func (w *liveWatch) batch(resp clientv3.WatchResponse) Batch {
	b := Batch{Revision: resp.Header.Revision, Note: w.note}
	w.note = ""
	for _, ev := range resp.Events {
		if ev.Kv.ModRevision < w.next {
			continue
		}
		b.Events = append(b.Events, eventOf(ev))
	}
	if n := len(b.Events); n > 0 {
		w.next = b.Events[n-1].KV.ModRevision + 1
	}
	b.Progress = len(b.Events) == 0 && b.Note == ""
	return b
}

func eventOf(ev *clientv3.Event) Event {
	e := Event{Type: Modified, KV: fromProto(ev.Kv)}
	switch {
	case ev.Type == mvccpb.DELETE:
		e.Type = Deleted
		e.KV = KV{Key: e.KV.Key, ModRevision: e.KV.ModRevision}
	case ev.IsCreate():
		e.Type = Added
	}
	if ev.PrevKv != nil {
		prev := fromProto(ev.PrevKv)
		e.Prev = &prev
	}
	return e
}

func (w *liveWatch) send(ctx context.Context, b Batch) bool {
	select {
	case w.out <- b:
		return true
	case <-ctx.Done():
		return false
	}
}

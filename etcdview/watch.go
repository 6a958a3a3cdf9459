package etcdview

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Watch streams the changes below prefix. A broken stream, a member without
// a leader or a restarted member do not end it: it is opened again from the
// revision after the last one delivered, and events already delivered are
// dropped, so every revision arrives once and in order. When etcd compacted
// that revision meanwhile, the prefix is re-read and what was lost is marked
// (Batch.Gap). It ends when ctx does, on an error retrying cannot fix, or
// after a compacted opts.Rev unless opts.ContinueAfterCompaction.
func (l *Live) Watch(ctx context.Context, prefix string, opts WatchOptions) <-chan Batch {
	out := make(chan Batch, 16)
	w := &liveWatch{l: l, out: out, prefix: prefix, next: opts.Rev, opts: opts}
	w.key, w.end = prefixRange(prefix)
	if w.opts.ProgressInterval <= 0 {
		w.opts.ProgressInterval = 5 * time.Second
	}
	go w.run(ctx)
	return out
}

type liveWatch struct {
	l                *Live
	out              chan<- Batch
	prefix, key, end string
	opts             WatchOptions
	// next is the first revision not yet delivered; 0 until the first
	// stream tells the revision it started at.
	next int64
	term uint64 // Raft term of the last response, to see leader changes
	note string // said with the next batch
	// ordered says that every member answers progress requests only after
	// the events it has still to send, so that the answers may move next;
	// orderedc brings it, once the members' versions are known.
	ordered  bool
	orderedc <-chan bool
	keys     keyCount
}

// Backoff between attempts to reopen a failed stream.
const (
	minBackoff = 100 * time.Millisecond
	maxBackoff = 2 * time.Second
)

func (w *liveWatch) run(ctx context.Context) {
	defer close(w.out)
	if !w.checkStart(ctx) {
		return
	}
	w.orderedc = w.askOrdered(ctx)
	backoff := minBackoff
	for ctx.Err() == nil {
		w.catchUp(ctx)
		delivered, err := w.stream(ctx)
		var compacted *CompactedError
		if errors.As(err, &compacted) {
			err = w.fillGap(ctx, compacted.Compacted)
			if err == nil {
				continue
			}
		}
		if ctx.Err() != nil {
			return
		}
		if isTerminal(err) {
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

// checkStart reads the prefix at opts.Rev before the first stream, and says
// whether to go on. etcd answers a watch from a compacted revision as it
// answers a resume whose revision it compacted meanwhile; only the first is
// the caller's to hear about as an error.
func (w *liveWatch) checkStart(ctx context.Context) bool {
	if w.opts.Rev == 0 {
		return true
	}
	_, err := w.l.Get(ctx, w.key, w.opts.Rev)
	var compacted *CompactedError
	if !errors.As(err, &compacted) {
		return true
	}
	err = fmt.Errorf("watch %s: %w", describeRange(w.key, w.end), compacted)
	if !w.send(ctx, Batch{Err: err, Revision: compacted.Compacted}) || !w.opts.ContinueAfterCompaction {
		return false
	}
	w.next = compacted.Compacted
	w.note = fmt.Sprintf("continuing from revision %d, the oldest etcd still holds", w.next)
	return true
}

// askOrdered asks every member's version in the background, and brings
// whether all of them order progress notifications after pending events.
// A member that cannot be asked counts as one that does not.
func (w *liveWatch) askOrdered(ctx context.Context) <-chan bool {
	ch := make(chan bool, 1)
	go func() {
		ordered := true
		for _, ep := range w.l.c.Endpoints() {
			sctx, cancel := context.WithTimeout(ctx, w.l.timeout)
			st, err := w.l.c.Status(sctx, ep)
			cancel()
			if ordered = err == nil && progressOrdered(st.Version); !ordered {
				break
			}
		}
		ch <- ordered
	}()
	return ch
}

// progressOrdered says whether etcd of this version answers a progress
// request only after the events it has still to send. Before 3.4.31 and
// 3.5.13 it could answer with a revision whose events were still queued, or
// not yet read for a watch catching up (etcd-io/etcd#15220, #17507): the
// answer would move the resume point, this watch's and clientv3's own, past
// events not yet delivered. kube-apiserver asks for progress only from the
// later versions (endpointSupportsRequestWatchProgress, in
// k8s.io/apiserver/pkg/storage/feature).
func progressOrdered(version string) bool {
	var major, minor, patch int
	if _, err := fmt.Sscanf(version, "%d.%d.%d", &major, &minor, &patch); err != nil {
		return false
	}
	switch {
	case major != 3:
		return major > 3
	case minor == 4:
		return patch >= 31
	case minor == 5:
		return patch >= 13
	}
	return minor > 5
}

// stream runs one etcd watch until it fails, and says whether it delivered
// anything. WithRequireLeader makes a member cut off from its leader cancel
// the watch instead of keeping it silently stale, as kube-apiserver asks.
func (w *liveWatch) stream(ctx context.Context) (delivered bool, err error) {
	sctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	opts := []clientv3.OpOption{
		clientv3.WithRange(w.end), clientv3.WithProgressNotify(), clientv3.WithCreatedNotify(),
	}
	if !w.opts.WithoutPrevious {
		opts = append(opts, clientv3.WithPrevKV())
	}
	if w.next > 0 {
		opts = append(opts, clientv3.WithRev(w.next))
	}
	wc := w.l.c.Watch(sctx, w.key, opts...)
	tick := time.NewTicker(w.opts.ProgressInterval)
	defer tick.Stop()
	for {
		select {
		case <-sctx.Done():
			return delivered, sctx.Err()
		case w.ordered = <-w.orderedc:
			w.orderedc = nil
		case a := <-w.keys.answer:
			w.keys.settle(a)
		case <-tick.C:
			// Asked now rather than at the start, where it would share
			// etcd with the first reads of whoever opened the watch.
			w.keys.ask(ctx, w.l, w.prefix, w.next)
			if w.ordered {
				// Progress requests go to the stream of sctx's
				// metadata: the one this watch runs on.
				w.l.c.RequestProgress(sctx)
			}
		case resp, ok := <-wc:
			if !ok {
				return delivered, errors.New("watch channel closed")
			}
			if resp.CompactRevision != 0 {
				return delivered, &CompactedError{Rev: w.next, Compacted: resp.CompactRevision}
			}
			if err := resp.Err(); err != nil {
				return delivered, refusal(err)
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

// refusals are the reasons etcd gives for refusing to create a watch
// (serverWatchStream.recvLoop's isWatchPermitted check).
var refusals = []error{
	rpctypes.ErrGRPCPermissionDenied, rpctypes.ErrGRPCInvalidAuthToken,
	rpctypes.ErrGRPCAuthOldRevision, rpctypes.ErrGRPCUserEmpty,
}

// refusal is err as the rpctypes error it stands for, when it is a watch
// etcd refused. etcd puts the text of its gRPC error in the response's
// CancelReason ("rpc error: code = PermissionDenied desc = etcdserver:
// permission denied"), which clientv3 hands on as a plain error of that
// text: neither errors.Is nor rpctypes.Error recognise it, and the watch
// would be retried, silently, forever.
func refusal(err error) error {
	for _, r := range refusals {
		if err.Error() == r.Error() {
			return rpctypes.Error(r)
		}
	}
	return err
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
// delivered by an earlier stream. A progress notification moves next past
// its revision: it comes only after every event up to it, from an etcd
// that orders requested notifications (only those are asked for) and from
// etcd's own periodic ones, which it sends to a watch that has caught up,
// through the queue its events take.
func (w *liveWatch) batch(resp clientv3.WatchResponse) Batch {
	b := Batch{Revision: resp.Header.Revision, Note: w.note}
	w.note = ""
	for _, ev := range resp.Events {
		if ev.Kv.ModRevision < w.next {
			continue
		}
		e := eventOf(ev)
		w.keys.apply(e)
		b.Events = append(b.Events, e)
	}
	if n := len(b.Events); n > 0 {
		w.next = b.Events[n-1].KV.ModRevision + 1
	}
	if resp.IsProgressNotify() {
		w.next = max(w.next, resp.Header.Revision+1)
	}
	b.Progress = len(b.Events) == 0 && b.Note == ""
	b.Delivered = max(w.next-1, 0)
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

package etcdview

import (
	"context"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// A watch far behind etcd's head catches up at etcd's pace, which is
// slow: etcd syncs a watch that is behind every 100 ms, each time reading
// every event from the watch's revision to the head from its backend and
// sending the first 1000 revisions of them (watchableStore.syncWatchers,
// rangeEvents, watchBatchMaxRevs in etcd's storage/mvcc, 3.4 to 3.7). One
// watch reads a backlog of 150,000 puts at about 5,000 events a second,
// and more slowly the longer the backlog. Several watches, each from its
// own window of the backlog, are synced in the same rounds from the same
// read: eight of them read that backlog at 30,000 events a second.
//
// A window's events are delivered only once they are known whole: its
// watch sent an event after the window, or the window's last revision.
// etcd sends a watch's events in revision order, so nothing of the window
// can follow. A window that gives no such sign (a prefix with no event
// after it up to the head, a compacted revision, a stream that fails)
// ends the catch-up there: the ordinary stream goes on from that window's
// first revision, and does what it does with those cases.
const (
	// catchUpWindow is the revisions of one window: what etcd sends a
	// watch behind in one round, so that a window is read in one.
	catchUpWindow = 1000
	// catchUpWindows is how many windows are read at once. Each holds its
	// events until the ones before are delivered: eight rounds of
	// events in memory at most.
	catchUpWindows = 8
	// catchUpPatience is how long the first windows are waited for, before
	// any was seen whole; after, three times the slowest whole window.
	catchUpPatience = 10 * time.Second
	minPatience     = 500 * time.Millisecond
)

// window is one stretch of a backlog, [from, to), read by a watch of its
// own.
type window struct {
	from, to int64
	began    time.Time
	done     chan struct{} // closed when the watch ended, whole or not
	// Set before done closes.
	events []Event
	head   int64 // the newest revision etcd stamped the responses with
	whole  bool
	took   time.Duration
}

// catchUp delivers the backlog from w.next through windows read at once,
// when w.opts.CatchUp asked for it, the source is etcd (kine reads its
// history in its own way) and the backlog holds more than two windows. It
// moves w.next past what it delivered, and returns when caught up to
// within two windows of the head it read first, when a window gave no sign
// it was whole, or when ctx ended.
func (w *liveWatch) catchUp(ctx context.Context) {
	if !w.opts.CatchUp || w.next == 0 {
		return
	}
	if kine, err := w.l.kineServer(ctx); err != nil || kine {
		return
	}
	head, err := w.head(ctx)
	if err != nil || head-w.next < 2*catchUpWindow {
		return
	}
	// The last stretch is left to the stream: it is read in one round,
	// and a window at the head would wait for writes to say it is whole.
	end := head - catchUpWindow
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel() // ends the windows read but not delivered
	var pending []*window
	start, patience := w.next, catchUpPatience
	for {
		for len(pending) < catchUpWindows && start < end {
			win := &window{from: start, to: min(start+catchUpWindow, end), began: time.Now(), done: make(chan struct{})}
			go w.read(wctx, win)
			pending, start = append(pending, win), win.to
		}
		if len(pending) == 0 {
			return
		}
		win := pending[0]
		select {
		case <-win.done:
		case <-ctx.Done():
			return
		case <-time.After(time.Until(win.began.Add(patience))):
			// done may have closed meanwhile: select picks at random.
			select {
			case <-win.done:
			default:
				return
			}
		}
		if !win.whole {
			return
		}
		patience = max(minPatience, 3*win.took)
		if !w.deliver(ctx, win) {
			return
		}
		pending = pending[1:]
	}
}

// head is etcd's revision now, from the header of a one-key read.
func (w *liveWatch) head(ctx context.Context) (int64, error) {
	rctx, cancel := w.l.commandTimeout().bound(ctx)
	defer cancel()
	resp, err := w.l.c.Get(rctx, w.key, clientv3.WithLimit(1), clientv3.WithKeysOnly())
	if err != nil {
		return 0, err
	}
	return resp.Header.Revision, nil
}

// read watches win's revisions until it knows them whole, or the watch
// ends.
func (w *liveWatch) read(ctx context.Context, win *window) {
	defer close(win.done)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	opts := []clientv3.OpOption{clientv3.WithRange(w.end), clientv3.WithRev(win.from)}
	if !w.opts.WithoutPrevious {
		opts = append(opts, clientv3.WithPrevKV())
	}
	for resp := range w.l.c.Watch(wctx, w.key, opts...) {
		if resp.CompactRevision != 0 || resp.Err() != nil {
			return
		}
		win.head = max(win.head, resp.Header.Revision)
		for _, ev := range resp.Events {
			if ev.Kv.ModRevision >= win.to {
				win.whole, win.took = true, time.Since(win.began)
				return
			}
			win.events = append(win.events, eventOf(ev))
		}
		// A response holds every event of each revision it holds.
		if n := len(resp.Events); n > 0 && resp.Events[n-1].Kv.ModRevision == win.to-1 {
			win.whole, win.took = true, time.Since(win.began)
			return
		}
	}
}

// deliver sends a whole window's events as one batch: every change up to
// its last revision is then delivered.
func (w *liveWatch) deliver(ctx context.Context, win *window) bool {
	for _, e := range win.events {
		w.keys.apply(e)
	}
	w.next = win.to
	w.l.windowsRead.Add(1)
	b := Batch{Events: win.events, Revision: win.head, Delivered: w.next - 1, Note: w.note}
	w.note = ""
	b.Progress = len(b.Events) == 0 && b.Note == ""
	return w.send(ctx, b)
}

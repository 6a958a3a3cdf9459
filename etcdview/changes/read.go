package changes

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/etcdview"
	coordinationv1 "k8s.io/api/coordination/v1"
)

// Range is the window of revisions to read: since a time, or from a
// revision, up to a revision.
type Range struct {
	Prefix string // keys below it; "" for every key
	// Since, when > 0, starts the window at the revision estimated at
	// Now - Since (TimeMap.Start); else From is the first revision.
	Since time.Duration
	From  int64
	To    int64 // the last revision; 0 for the head when the read starts
	// Now is the time Since counts back from; zero means the newest time
	// the store records (for a data file, whose head is in the past).
	Now time.Time
}

// progressInterval is how often a live watch that has caught up is asked
// for its revision, so that the read ends soon after the window's last
// revision when nothing below the prefix changed after it.
const progressInterval = 100 * time.Millisecond

// Progress is how far a read has come, for the screen to show while it
// runs: a window of 100k revisions takes seconds to replay.
type Progress struct{ from, to, at atomic.Int64 }

// Load is the window's first and last revisions, 0 until they are known,
// and the last revision the watch has reached.
func (p *Progress) Load() (from, to, at int64) { return p.from.Load(), p.to.Load(), p.at.Load() }

func (p *Progress) window(from, to int64) {
	if p != nil {
		p.from.Store(from)
		p.to.Store(to)
	}
}

func (p *Progress) reached(rev int64) {
	if p != nil && rev > p.at.Load() {
		p.at.Store(rev)
	}
}

// Read reads the changes of r from src: a watch from the window's first
// revision (etcdview.Source.Watch; a data file replays its history), ended
// at its last. A live etcd reads every revision of the window from its
// backend, and each event's previous value, to send those below the
// prefix: the cost of `etcdctl watch --prev-kv --rev`. Nothing is written.
// d decodes what the report shows; the times come from the Leases at the
// head and the values of the window. p, when not nil, records how far the
// read has come, for a screen to show while it runs.
func Read(ctx context.Context, src etcdview.Source, d decode.Decoder, r Range, p *Progress) (Window, error) {
	st, err := src.Status(ctx)
	if err != nil {
		return Window{}, err
	}
	w := Window{Head: st.Revision, To: r.To, From: r.From, Times: &TimeMap{}}
	if w.To == 0 {
		w.To = w.Head
	}
	if w.To > w.Head {
		return w, fmt.Errorf("--to-rev %d is after the head revision %d", w.To, w.Head)
	}
	clock, err := headTimes(ctx, src, d, st.Revision, w.Times)
	if err != nil {
		return w, err
	}
	if r.Since > 0 {
		recorded, err := w.recordedSince(ctx, src, r)
		if err == nil && !recorded {
			err = w.since(ctx, src, d, r, clock, st.CompactRevision)
		}
		if err != nil {
			return w, err
		}
	}
	if w.From < 1 {
		return w, fmt.Errorf("the first revision %d is not a revision: revisions start at 1", w.From)
	}
	p.window(w.From, w.To)
	if w.From <= w.To {
		if err := w.watch(ctx, src, r.Prefix, p); err != nil {
			return w, err
		}
	}
	w.report(d)
	return w, nil
}

// headTimes records what the Leases at revision rev say of time, and picks
// the clock among them: the Lease written most often, a node's renewed
// every 10 s or a leader election's every 2 s, each write with the
// holder's time. Leases are few (one a node, one a controller) and
// their renewals are the most recent times a store holds.
func headTimes(ctx context.Context, src etcdview.Source, d decode.Decoder, rev int64, times *TimeMap) (*etcdview.KV, error) {
	res, _ := decode.LookupResource("Lease")
	prefix := ""
	if len(d.Keys.Prefixes) > 0 {
		prefix = d.Keys.Prefixes[0]
	}
	d.JSONOnly = true
	var clock *etcdview.KV
	pages := etcdview.Pages(src, res.KeyPrefix(prefix, ""), rev, etcdview.Paging{Values: true})
	err := pages(ctx, func(p etcdview.Page) error {
		for _, kv := range p.Keys {
			o := d.DecodeAt(kv.Key, kv.Value, kv.ModRevision)
			times.Observe(o, kv.ModRevision, kv.CreateRevision)
			l, ok := o.Object.(*coordinationv1.Lease)
			if !ok || l.Spec.RenewTime == nil {
				continue
			}
			if clock == nil || kv.Version > clock.Version || kv.Version == clock.Version && kv.ModRevision > clock.ModRevision {
				clock = &kv
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the Leases at revision %d: %w", rev, err)
	}
	return clock, nil
}

// since sets w.From to the revision estimated at r.Now - r.Since: the clock
// Lease's renewals are searched for that time (TimeMap.SearchClock),
// then the map says which revision follows the last one recorded before it.
func (w *Window) since(ctx context.Context, src etcdview.Source, d decode.Decoder, r Range, clock *etcdview.KV, compacted int64) error {
	now, what := r.Now, "now"
	if now.IsZero() {
		newest, ok := w.Times.Newest()
		if !ok {
			return fmt.Errorf("--since needs the times objects record, and no Lease at revision %d records one: give --from-rev", w.Head)
		}
		now, what = newest.Time, "the newest time the store records"
	}
	t := now.Add(-r.Since)
	for clock != nil {
		lo := max(compacted, clock.CreateRevision, 1)
		err := w.Times.SearchClock(lo, clock.ModRevision, t, clockRead(ctx, src, d, clock.Key))
		// A compaction the Status did not know of (etcdctl compact
		// leaves no compact_rev_key) shows on the first read before it.
		var ce *etcdview.CompactedError
		if errors.As(err, &ce) && ce.Compacted > compacted {
			compacted = ce.Compacted
			continue
		}
		if err != nil {
			return err
		}
		break
	}
	from, ok := w.Times.Start(t)
	w.From = from
	w.Since = fmt.Sprintf("since %s, %s before %s (%s), estimated from the Leases' renew times", t.UTC().Format(time.RFC3339), r.Since, what, now.UTC().Format(time.RFC3339))
	if !ok {
		w.From = max(compacted, 1)
		w.Since = fmt.Sprintf("since %s: no object records a time before it, so the window starts at the oldest revision etcd holds", t.UTC().Format(time.RFC3339))
	}
	return nil
}

// clockRead reads the clock Lease's renew time as of a revision.
func clockRead(ctx context.Context, src etcdview.Source, d decode.Decoder, key string) ClockRead {
	d.JSONOnly = true
	return func(rev int64) (int64, time.Time, error) {
		kv, err := src.Get(ctx, key, rev)
		if err != nil {
			return 0, time.Time{}, fmt.Errorf("read the Lease %s at revision %d: %w", decode.EscapeKey(key), rev, err)
		}
		l, ok := d.DecodeAt(kv.Key, kv.Value, kv.ModRevision).Object.(*coordinationv1.Lease)
		if !ok || l.Spec.RenewTime == nil {
			return 0, time.Time{}, fmt.Errorf("the Lease %s at revision %d records no renew time", decode.EscapeKey(key), rev)
		}
		return kv.ModRevision, l.Spec.RenewTime.Time, nil
	}
}

// watch adds the window's events: a watch from w.From, ended after w.To. A live watch never ends by itself: it ends at an event after w.To,
// or when the watch has delivered everything up to it (Batch.Delivered).
func (w *Window) watch(ctx context.Context, src etcdview.Source, prefix string, p *Progress) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches := src.Watch(ctx, prefix, etcdview.WatchOptions{Rev: w.From, ContinueAfterCompaction: true, ProgressInterval: progressInterval})
	for b := range batches {
		var compacted *etcdview.CompactedError
		switch {
		case errors.As(b.Err, &compacted) && w.CompactedAt == 0 && w.Events == 0:
			w.CompactedAt, w.From = compacted.Compacted, compacted.Compacted
			p.window(w.From, w.To)
			continue
		case b.Err != nil:
			return b.Err
		}
		if b.Note != "" {
			w.Notes = append(w.Notes, b.Note)
		}
		// A live batch's Revision is the head when it was sent, not how
		// far the replay has come: its last event says that.
		at := b.Revision
		if n := len(b.Events); n > 0 {
			at = b.Events[n-1].KV.ModRevision
		}
		p.reached(min(at, w.To))
		for _, ev := range b.Events {
			if ev.KV.ModRevision > w.To {
				return nil
			}
			w.add(ev)
		}
		// Not Revision, the head: a response of events delivered
		// before carries it too, with the window's still on their way.
		if b.Delivered >= w.To {
			return nil
		}
		if n := len(b.Events); n > 0 && b.Events[n-1].KV.ModRevision == w.To {
			return nil
		}
	}
	return ctx.Err()
}

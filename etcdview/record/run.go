package record

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/etcdscope/etcdscope/etcdview"
)

// Options configure Run.
type Options struct {
	// StatusInterval is how often Status gets the recording's state; 0
	// means a minute.
	StatusInterval time.Duration
	// Status, when set, is called with the state every StatusInterval,
	// with each gap as it is recorded, and with each note of the watch.
	Status func(Status)
	// Now is the clock of the arrival times; nil means time.Now.
	Now func() time.Time
	// Keep, when set, bounds the recording to the revisions that arrived
	// in the last Keep; MaxSize, when set, to the revisions whose pages
	// in use fit in MaxSize bytes (a file's alone). The oldest go first, and the recording
	// then starts later, with every key as of its new start (see trim).
	Keep    time.Duration
	MaxSize int64
	// RetainEvery is how often the bounds are checked, after the check at
	// the start; 0 means every 10 seconds.
	RetainEvery time.Duration
}

// Status is where a recording stands.
type Status struct {
	Revision int64   // the etcd revision the file is whole up to
	Events   int64   // events written since the last status
	Rate     float64 // of them, a second
	Size     int64   // the file's bytes and its log's
	// Lag is how many revisions etcd's last answer was ahead of Revision.
	Lag int64
	// Gap, when set, is a gap just recorded; Note a note of the watch
	// (a resume, a leader change). Either makes the status an event of its
	// own rather than the periodic one.
	Gap  *Gap
	Note string
}

// maxGroup is how many events at most one transaction writes: batches that
// wait are written together, one commit for them all, so that the
// recorder keeps up when etcd writes faster than it commits.
const maxGroup = 10000

// Run records src below the file's prefix until ctx ends: a snapshot first
// when the file has none, then every change from the file's head on,
// through the resuming watch. When etcd no longer holds the revisions
// after the head (a restart after compaction, a watch cut for longer than
// etcd keeps history), it records the gap and a new snapshot. What was
// written is committed, batch by batch: a cancelled ctx ends Run with nil
// after the last commit.
func (f *File) Run(ctx context.Context, src etcdview.Source, opts Options) error {
	if opts.StatusInterval <= 0 {
		opts.StatusInterval = time.Minute
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Status == nil {
		opts.Status = func(Status) {}
	}
	if opts.RetainEvery <= 0 {
		opts.RetainEvery = retainEvery
	}
	// A size is of a SQLite file's pages in use. PostgreSQL keeps a
	// table's size after a DELETE (VACUUM lets later rows reuse the
	// space), so that no trim would bring it under a bound.
	if opts.MaxSize > 0 && f.pg != nil {
		return fmt.Errorf("--max-size bounds a recording in a file: PostgreSQL keeps a table's size after its rows go, so bound %s with --keep", f.path)
	}
	r := &run{f: f, opts: opts, db: context.WithoutCancel(ctx), since: opts.Now()}
	// Where it stopped goes out once more when it is ended: a recording
	// shorter than the interval says it too.
	defer func() {
		if ctx.Err() != nil && f.head > 0 {
			opts.Status(r.status(nil, ""))
		}
	}()
	checked := false
	for ctx.Err() == nil {
		if f.head == 0 || r.resync {
			_, gap, err := f.snapshot(ctx, src, opts.Now())
			if ctx.Err() != nil {
				return nil
			}
			if err != nil {
				return err
			}
			if gap != nil {
				opts.Status(r.status(gap, ""))
			}
			r.resync = false
		}
		if !checked {
			if err := r.retain(r.db); err != nil {
				return fmt.Errorf("record to %s: %w", f.path, err)
			}
			checked = true
		}
		if err := r.follow(ctx, src); err != nil || !r.resync {
			return err
		}
	}
	return nil
}

type run struct {
	f    *File
	opts Options
	// db is the context of the file's writes, which a signal does not
	// cancel: what was read is committed.
	db     context.Context
	resync bool
	// seen is the newest revision etcd answered with, for the lag.
	seen   int64
	events int64
	since  time.Time
	// retained is when the bounds were last checked.
	retained time.Time
}

// follow writes the watch's batches from the file's head on, until ctx
// ends, the watch fails, or a gap calls for a new snapshot (r.resync).
func (r *run) follow(ctx context.Context, src etcdview.Source) error {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The file holds each key's row before: its create revision and
	// lease are read from there (insert), not sent again by etcd. A
	// recorder started again after a while reads etcd's backlog through
	// several watches at once (CatchUp), which one watch reads at about
	// 5,000 events a second.
	batches := src.Watch(wctx, r.f.prefix, etcdview.WatchOptions{Rev: r.f.head + 1, WithoutPrevious: true, CatchUp: true})
	tick := time.NewTicker(r.opts.StatusInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
			r.opts.Status(r.status(nil, ""))
		case b, ok := <-batches:
			if !ok {
				if ctx.Err() != nil {
					return nil
				}
				return errors.New("the watch ended")
			}
			group := r.group(b, batches)
			if err := r.write(group); err != nil || r.resync {
				return err
			}
		}
	}
}

// group is b and the batches that wait behind it, up to maxGroup events.
func (r *run) group(b etcdview.Batch, batches <-chan etcdview.Batch) []etcdview.Batch {
	group, n := []etcdview.Batch{b}, len(b.Events)
	for n < maxGroup {
		select {
		case b, ok := <-batches:
			if !ok {
				return group
			}
			group, n = append(group, b), n+len(b.Events)
		default:
			return group
		}
	}
	return group
}

// write writes a group of batches in one transaction. A batch that says
// changes were lost (a compacted start revision, a gap) ends the group
// and asks for a new snapshot; the events before it are kept.
func (r *run) write(group []etcdview.Batch) error {
	at := r.opts.Now()
	t, err := r.f.begin(r.db)
	if err != nil {
		return fmt.Errorf("record to %s: %w", r.f.path, err)
	}
	defer t.rollback()
	head := r.f.head
	var notes []string
	var failed error
	for _, b := range group {
		if b.Note != "" {
			notes = append(notes, b.Note)
		}
		if errors.Is(b.Err, etcdview.ErrCompacted) || b.Gap != nil {
			r.resync = true
			break
		}
		if b.Err != nil {
			failed = b.Err
			break
		}
		r.seen = max(r.seen, b.Revision)
		for _, ev := range b.Events {
			// A revision the file holds already: a txn's keys share
			// theirs, and all arrive in one response.
			if ev.KV.ModRevision <= r.f.head {
				continue
			}
			if err := t.appendRow(r.db, rowOf(ev, at)); err != nil {
				return fmt.Errorf("record revision %d to %s: %w", ev.KV.ModRevision, r.f.path, err)
			}
			head = ev.KV.ModRevision
			r.events++
		}
		// A quiet prefix moves on progress alone: its head resumes the
		// watch after etcd compacted what lies before it, without a gap.
		head = max(head, b.Delivered)
	}
	// A head that did not move wrote no row: nothing to commit.
	if head != r.f.head {
		if err := t.commit(r.db, head); err != nil {
			return fmt.Errorf("record to %s: %w", r.f.path, err)
		}
	}
	if at.Sub(r.retained) >= r.opts.RetainEvery {
		if err := r.retain(r.db); err != nil {
			return fmt.Errorf("record to %s: %w", r.f.path, err)
		}
	}
	for _, n := range notes {
		r.opts.Status(r.status(nil, n))
	}
	return failed
}

// rowOf is the row of a watch's event; a deletion's create revision and
// lease are the previous value's: the watch's, where a source sent it,
// else the key's row before in the file (insert).
func rowOf(ev etcdview.Event, at time.Time) row {
	r := row{rev: ev.KV.ModRevision, key: ev.KV.Key, created: ev.Type == etcdview.Added, deleted: ev.Type == etcdview.Deleted,
		createRev: ev.KV.CreateRevision, lease: ev.KV.Lease, value: ev.KV.Value, at: at}
	if ev.Prev != nil && r.deleted {
		r.createRev, r.lease = ev.Prev.CreateRevision, ev.Prev.Lease
	}
	return r
}

// status is the state now; a periodic one (no gap, no note) starts the
// next count of events.
func (r *run) status(gap *Gap, note string) Status {
	now := r.opts.Now()
	s := Status{Revision: r.f.head, Events: r.events, Size: r.f.Size(), Lag: max(r.seen-r.f.head, 0), Gap: gap, Note: note}
	if d := now.Sub(r.since).Seconds(); d > 0 {
		s.Rate = float64(r.events) / d
	}
	if gap == nil && note == "" {
		r.events, r.since = 0, now
	}
	return s
}

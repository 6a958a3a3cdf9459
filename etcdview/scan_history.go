package etcdview

import (
	"context"
	"fmt"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// replayHeld delivers, as Retained records, every revision etcd holds below
// prefix up to rev: no read RPC lists them. Compaction at C keeps each key's
// newest revision at or before C, and drops it when it is a deletion unless
// the deletion is at C itself (mvcc's keyIndex.compact): that is the keys as
// a range at C reads them, the deletions at C, and every revision after C,
// which a watch from C replays. A watch from revision 1 tells C
// (WatchResponse.CompactRevision), or, when nothing was ever compacted, is
// the replay of everything. It returns C, 0 for none.
func (l *Live) replayHeld(ctx context.Context, prefix string, rev int64, fn func([]ScanRecord) error, report func(ScanProgress)) (int64, error) {
	if err := l.checkOrdered(ctx); err != nil {
		return 0, err
	}
	key, end := prefixRange(prefix)
	compacted, err := l.replayRange(ctx, key, end, 1, 0, rev, fn, report)
	if err != nil || compacted == 0 {
		return 0, err
	}
	units, err := l.scanUnits(ctx, prefix, compacted)
	if err != nil {
		return compacted, err
	}
	if err := l.readUnits(ctx, units, compacted, fn, ScanRecord{Retained: true}); err != nil {
		return compacted, err
	}
	// kine refuses a watch from its compaction revision, and keeps no
	// deletion at it: its replay starts after.
	from := compacted
	if kine, err := l.kineServer(ctx); err != nil {
		return compacted, err
	} else if kine {
		from++
	}
	again, err := l.replayRange(ctx, key, end, from, compacted, rev, fn, report)
	if err == nil && again != 0 {
		err = fmt.Errorf("history of %s: etcd compacted to revision %d during the read: read it again", describeRange(key, end), again)
	}
	return compacted, err
}

// checkOrdered refuses a replay on an etcd that may answer a progress
// request before the replay has caught up: the answer would end it with
// revisions still to come (see progressOrdered).
func (l *Live) checkOrdered(ctx context.Context) error {
	for _, ep := range l.c.Endpoints() {
		sctx, cancel := l.commandTimeout().bound(ctx)
		st, err := l.c.Status(sctx, ep)
		cancel()
		if err != nil {
			return fmt.Errorf("history: status of %s: %w", ep, requestError(sctx, err))
		}
		if !progressOrdered(st.Version) {
			return fmt.Errorf("history: etcd %s at %s may answer a progress request before a replay has caught up (etcd-io/etcd#15220, fixed in 3.4.31 and 3.5.13): "+
				"the revisions it holds cannot be counted live; read a snapshot of it with --db", st.Version, ep)
		}
	}
	return nil
}

// progressEvery is how often a replay asks etcd for a progress notification:
// the one answered at or past the scan's revision ends a replay whose last
// events are older (checkOrdered).
const progressEvery = 200 * time.Millisecond

// replayRange replays the changes in [key, end) from revision from up to to,
// as Retained records, through one watch, but for the puts at revision read
// (the compaction revision, which a range read; 0 for none). A compacted
// from ends it at once with the compaction revision. The command timeout
// bounds the wait for each answer.
func (l *Live) replayRange(ctx context.Context, key, end string, from, read, to int64, fn func([]ScanRecord) error, report func(ScanProgress)) (int64, error) {
	if from > to {
		return 0, nil
	}
	wctx, cancel, touch := l.idleBound(ctx)
	defer cancel()
	// kine answers progress requests only once every watch of the stream
	// told it is synced, which a watch does by asking for notifications.
	wc := l.c.Watch(wctx, key, clientv3.WithRange(end), clientv3.WithRev(from), clientv3.WithFragment(), clientv3.WithCreatedNotify(), clientv3.WithProgressNotify())
	tick := time.NewTicker(progressEvery)
	defer tick.Stop()
	fail := func(err error) error {
		return fmt.Errorf("history of %s from revision %d: %w", describeRange(key, end), from, requestError(wctx, idleError(wctx, err)))
	}
	for {
		select {
		case resp, ok := <-wc:
			if !ok {
				return 0, fail(context.Cause(wctx))
			}
			touch()
			if resp.CompactRevision != 0 {
				return resp.CompactRevision, nil
			}
			if err := resp.Err(); err != nil {
				return 0, fail(err)
			}
			recs, past := heldRecords(resp.Events, read, to)
			if len(recs) > 0 {
				if err := fn(recs); err != nil {
					return 0, err
				}
				report(ScanProgress{Phase: ScanHistory, Done: recs[len(recs)-1].ModRevision - from + 1, Total: to - from + 1})
			}
			if past || resp.IsProgressNotify() && resp.Header.Revision >= to {
				return 0, nil
			}
		case <-tick.C:
			l.c.RequestProgress(wctx)
		}
	}
}

// heldRecords are the events up to revision to as Retained records, but
// for the puts at revision read, which a range read (0: none); past says an
// event after to came, so none older is pending.
func heldRecords(events []*clientv3.Event, read, to int64) (recs []ScanRecord, past bool) {
	for _, ev := range events {
		if ev.Kv.ModRevision > to {
			return recs, true
		}
		if read > 0 && ev.Kv.ModRevision == read && ev.Type != mvccpb.DELETE {
			continue
		}
		like := ScanRecord{Retained: true, Tombstone: ev.Type == mvccpb.DELETE}
		recs = append(recs, recordOf(ev.Kv, like))
	}
	return recs, false
}

package etcdview

import (
	"context"
	"fmt"
	"slices"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// History reads every revision of key etcd still holds. No read RPC lists a
// key's revisions, and a range at the revision before a re-creation finds
// nothing that leads to the deleted generation, so the revisions come from a
// watch of the one key from the oldest retained revision: etcd replays every
// put and delete of the key it still holds, in revision order. The replay
// ends at the key's current revision, or, for a key that is gone, at a
// progress notification (etcd sends it only once the replay has caught up
// since 3.4.24/3.5.8, etcd-io/etcd#15220; older servers may answer before
// the replay and cut a deleted key's history short).
func (l *Live) History(ctx context.Context, key string) (History, error) {
	cur, err := l.rangeKeys(ctx, rangeRequest{key: key})
	if err != nil {
		return History{}, err
	}
	h := History{Key: key, Revision: cur.rev}
	var last int64 // the key's newest revision, when it exists
	if len(cur.kvs) > 0 {
		last = cur.kvs[0].ModRevision
	}
	ctx, cancel := l.commandTimeout().bound(ctx)
	defer cancel()
	entries, compacted, err := l.replay(ctx, key, 1, cur.rev, last)
	if err != nil {
		return h, fmt.Errorf("history of %s: %w", key, requestError(ctx, err))
	}
	if compacted > 0 {
		h.CompactedAt = compacted
		// Compaction keeps each key's newest revision at or before the
		// compaction revision: read it, then replay what came after.
		base, err := l.rangeKeys(ctx, rangeRequest{key: key, rev: compacted})
		if err != nil {
			return h, err
		}
		if entries, _, err = l.replay(ctx, key, compacted, cur.rev, last); err != nil {
			return h, fmt.Errorf("history of %s: %w", key, requestError(ctx, err))
		}
		if len(base.kvs) > 0 && (len(entries) == 0 || entries[0].KV.ModRevision > base.kvs[0].ModRevision) {
			entries = append([]Entry{{KV: base.kvs[0]}}, entries...)
		}
	}
	slices.Reverse(entries)
	h.Entries = entries
	return h, nil
}

// replay watches key from revision from and returns its changes up to head,
// oldest first, or the compaction revision when from was compacted. last is
// the key's current revision (0 when it is gone): once its event arrives
// nothing older is pending.
func (l *Live) replay(ctx context.Context, key string, from, head, last int64) ([]Entry, int64, error) {
	if last != 0 && last < from {
		return nil, 0, nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wc := l.c.Watch(ctx, key, clientv3.WithRev(from), clientv3.WithCreatedNotify())
	var (
		entries []Entry
		tick    <-chan time.Time
	)
	if last == 0 {
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case resp, ok := <-wc:
			if !ok {
				return nil, 0, fmt.Errorf("watch ended: %w", context.Cause(ctx))
			}
			if resp.CompactRevision != 0 {
				return nil, resp.CompactRevision, nil
			}
			if err := resp.Err(); err != nil {
				return nil, 0, err
			}
			for _, ev := range resp.Events {
				if ev.Kv.ModRevision > head {
					return entries, 0, nil
				}
				entries = append(entries, entryOf(ev))
				if last != 0 && ev.Kv.ModRevision >= last {
					return entries, 0, nil
				}
			}
			if last == 0 && resp.IsProgressNotify() && resp.Header.Revision >= head {
				return entries, 0, nil
			}
		case <-tick:
			// etcd answers a progress request of an unsynced watcher once
			// it has caught up; asking again covers a request sent before
			// the watcher existed on the server.
			l.c.RequestProgress(ctx)
		}
	}
}

func entryOf(ev *clientv3.Event) Entry {
	if ev.Type == mvccpb.DELETE {
		return Entry{KV: KV{Key: string(ev.Kv.Key), ModRevision: ev.Kv.ModRevision}, Deleted: true}
	}
	return Entry{KV: fromProto(ev.Kv)}
}

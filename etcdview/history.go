package etcdview

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/etcdscope/etcdscope/decode"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// History reads the revisions of key etcd still holds. The current
// incarnation, or for a deleted key the last one and its deletion
// (deletion), is walked back by ranges at the revisions below each version
// (walk), and whether earlier incarnations exist is probed by ranges too
// (probeEarlier): none of them makes etcd read more than the key. With
// opts.AllIncarnations the history comes from a replay instead.
func (l *Live) History(ctx context.Context, key string, opts HistoryOptions) (History, error) {
	h, err := l.history(ctx, key, opts)
	numberVersions(h.Entries)
	return h, err
}

// numberVersions gives the entries of kine, which reports every Version as
// 0, the versions etcd would report: 1 at a creation, one more at each
// write after it, newest first as History holds them. The writes of an
// incarnation whose creation compaction removed keep 0: how many came
// before is not known. etcd's entries have their versions already.
func numberVersions(entries []Entry) {
	var v int64
	for i := len(entries) - 1; i >= 0; i-- {
		kv := &entries[i].KV
		switch {
		case entries[i].Deleted:
			v = 0
			continue
		case kv.CreateRevision == kv.ModRevision:
			v = 1
		case v > 0:
			v++
		}
		if kv.Version == 0 {
			kv.Version = v
		}
	}
}

func (l *Live) history(ctx context.Context, key string, opts HistoryOptions) (History, error) {
	cur, err := l.rangeKeys(ctx, rangeRequest{key: key})
	if err != nil {
		return History{}, err
	}
	h := History{Key: key, Revision: cur.rev}
	if opts.AllIncarnations {
		return l.replayHistory(ctx, h, cur, opts.Progress)
	}
	var newest KV
	if len(cur.kvs) > 0 {
		newest = cur.kvs[0]
	} else {
		earlier, seen, err := l.probeEarlier(ctx, key, cur.rev)
		if err != nil || earlier != EarlierUnread {
			h.Earlier = earlier
			return h, wrapHistory(key, err)
		}
		var deleted int64
		if newest, deleted, err = l.deletion(ctx, key, seen, cur.rev); err != nil {
			return h, wrapHistory(key, err)
		}
		h.Entries = []Entry{{KV: KV{Key: key, ModRevision: deleted}, Deleted: true}}
	}
	entries, compacted, err := l.walk(ctx, newest)
	h.Entries, h.CompactedAt = append(h.Entries, entries...), compacted
	if err != nil {
		return h, wrapHistory(key, err)
	}
	if h.CompactedAt != 0 {
		// The incarnation began before the compaction, and compaction
		// keeps nothing of a key's generations that ended before it
		// (mvcc keyIndex.compact).
		h.Earlier = EarlierNone
		return h, nil
	}
	// A key is absent at the revision before its creation: the deletion
	// of the incarnation before, if any, came earlier.
	h.Earlier, h.EarlierSeenAt, err = l.probeEarlier(ctx, key, newest.CreateRevision-1)
	return h, wrapHistory(key, err)
}

// wrapHistory names the key in err; nil stays nil.
func wrapHistory(key string, err error) error {
	if err != nil {
		return fmt.Errorf("history of %s: %w", key, err)
	}
	return nil
}

// deletion finds the end of an incarnation of key between revision seen,
// at which the key exists, and absent, at which it does not: the version
// it last had and the revision of its deletion. A bisection by count-only
// ranges keeps a revision the key exists at below one it is absent at,
// until they are next to each other: the deletion is the second. Where
// several incarnations lived between seen and absent it finds the end of
// one of them, the newest unless one lived and died between two of the
// revisions read.
func (l *Live) deletion(ctx context.Context, key string, seen, absent int64) (KV, int64, error) {
	lo, hi := seen, absent
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		resp, err := l.getAt(ctx, key, mid, clientv3.WithCountOnly())
		if err != nil {
			return KV{}, 0, l.readError(ctx, "read "+decode.EscapeKey(key), key, mid, err)
		}
		if resp.Count > 0 {
			lo = mid
		} else {
			hi = mid
		}
	}
	resp, err := l.getAt(ctx, key, lo)
	if err != nil {
		return KV{}, 0, l.readError(ctx, "read "+decode.EscapeKey(key), key, lo, err)
	}
	if len(resp.Kvs) == 0 {
		return KV{}, 0, fmt.Errorf("read %s at revision %d: etcd no longer has the version it had", decode.EscapeKey(key), lo)
	}
	return fromProto(resp.Kvs[0]), hi, nil
}

// replayHistory reads every revision of the key etcd holds through a watch
// from the oldest retained revision: no read RPC lists a key's revisions,
// and a range at the revision before a re-creation finds nothing that
// leads to the deleted generation. etcd replays every put and delete of the
// key it still holds, in revision order. The replay ends at the key's
// current revision, or, for a key that is gone, at a progress notification
// (etcd sends it only once the replay has caught up since 3.4.24/3.5.8,
// etcd-io/etcd#15220; older servers may answer before the replay and cut a
// deleted key's history short). It has no command timeout, as etcdctl's
// watch has none: the caller's ctx ends it.
func (l *Live) replayHistory(ctx context.Context, h History, cur rangeResult, progress func(ReplayProgress)) (History, error) {
	r := replay{l: l, key: h.Key, head: h.Revision, progress: progress}
	if len(cur.kvs) > 0 {
		r.last = cur.kvs[0].ModRevision
	}
	entries, compacted, err := r.run(ctx, 1)
	if err != nil {
		return h, fmt.Errorf("history of %s: %w", h.Key, requestError(ctx, err))
	}
	if compacted > 0 {
		h.CompactedAt = compacted
		// Compaction keeps each key's newest revision at or before the
		// compaction revision: read it, then replay what came after
		// (kine refuses a watch from the compaction revision itself).
		base, err := l.rangeKeys(ctx, rangeRequest{key: h.Key, rev: compacted})
		if err != nil {
			return h, err
		}
		if entries, _, err = r.run(ctx, compacted+1); err != nil {
			return h, fmt.Errorf("history of %s: %w", h.Key, requestError(ctx, err))
		}
		if len(base.kvs) > 0 && (len(entries) == 0 || entries[0].KV.ModRevision > base.kvs[0].ModRevision) {
			entries = append([]Entry{{KV: base.kvs[0]}}, entries...)
		}
	}
	slices.Reverse(entries)
	h.Entries, h.Earlier = entries, EarlierRead
	return h, nil
}

// replay is one key's replay through a watch, up to head. last is the
// key's current revision (0 when it is gone): once its event arrives
// nothing older is pending.
type replay struct {
	l          *Live
	key        string
	head, last int64
	progress   func(ReplayProgress)
}

// run watches the key from revision from and returns its changes up to
// head, oldest first, or the compaction revision when from was compacted.
func (r replay) run(ctx context.Context, from int64) ([]Entry, int64, error) {
	if r.last != 0 && r.last < from {
		return nil, 0, nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// kine sends a progress notification only once every watch of the
	// stream told it is synced, which a watch does by asking for them.
	wc := r.l.c.Watch(ctx, r.key, clientv3.WithRev(from), clientv3.WithCreatedNotify(), clientv3.WithProgressNotify())
	p := ReplayProgress{From: from, Head: r.head, Reached: from - 1}
	r.report(ctx, p)
	var entries []Entry
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
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
				if ev.Kv.ModRevision > r.head {
					return entries, 0, nil
				}
				entries = append(entries, entryOf(ev))
				p.Reached, p.Found = ev.Kv.ModRevision, len(entries)
				if r.last != 0 && ev.Kv.ModRevision >= r.last {
					return entries, 0, nil
				}
			}
			if r.last == 0 && resp.IsProgressNotify() && resp.Header.Revision >= r.head {
				return entries, 0, nil
			}
			r.report(ctx, p)
		case <-tick.C:
			if r.last == 0 {
				// etcd answers a progress request of an unsynced
				// watcher once it has caught up; asking again covers
				// a request sent before the watcher existed on the
				// server.
				r.l.c.RequestProgress(ctx)
			}
			r.report(ctx, p)
		case <-ctx.Done():
			return nil, 0, context.Cause(ctx)
		}
	}
}

// report passes p on, until ctx ends.
func (r replay) report(ctx context.Context, p ReplayProgress) {
	if r.progress != nil && ctx.Err() == nil {
		r.progress(p)
	}
}

func entryOf(ev *clientv3.Event) Entry {
	if ev.Type == mvccpb.DELETE {
		return Entry{KV: KV{Key: string(ev.Kv.Key), ModRevision: ev.Kv.ModRevision}, Deleted: true}
	}
	return Entry{KV: fromProto(ev.Kv)}
}

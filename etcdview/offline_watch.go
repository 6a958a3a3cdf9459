package etcdview

import (
	"context"
	"fmt"
	"sort"

	bolt "go.etcd.io/bbolt"
	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/server/v3/storage/schema"
	"google.golang.org/protobuf/proto"
)

// Watch replays the changes below prefix the file holds from opts.Rev on, in
// revision order, then closes the channel: a data file does not change. The
// bucket is ordered by revision, so the replay is one cursor walk. Rev 0
// (changes from now on) delivers only the head.
func (f *File) Watch(ctx context.Context, prefix string, opts WatchOptions) <-chan Batch {
	return replayFile(ctx, f.path, f.revBounds, prefix, opts, func(from int64, key, end string, send func(Batch) bool) error {
		return f.view(func(tx *bolt.Tx) error { return f.replay(tx, from, key, end, send) })
	})
}

// replayFile is the Watch of an offline file, whose replay sends the
// events in [key, end) from revision from on: the head alone for Rev 0, and
// a *CompactedError first for a revision the file no longer holds.
func replayFile(ctx context.Context, path string, b revBounds, prefix string, opts WatchOptions, replay func(from int64, key, end string, send func(Batch) bool) error) <-chan Batch {
	out := make(chan Batch, 16)
	go func() {
		defer close(out)
		// A file's replay is whole and in revision order, each batch one
		// revision: every batch but an error is delivered up to its own.
		send := func(b Batch) bool {
			if b.Err == nil {
				b.Delivered = b.Revision
			}
			select {
			case out <- b:
				return true
			case <-ctx.Done():
				return false
			}
		}
		from := opts.Rev
		if from == 0 {
			send(Batch{Revision: b.rev, Progress: true})
			return
		}
		if from < b.compacted {
			err := &CompactedError{Rev: from, Compacted: b.compacted, Kine: b.kine, Recording: b.recording}
			if !send(Batch{Err: err, Revision: b.compacted}) || !opts.ContinueAfterCompaction {
				return
			}
			from = b.compacted
		}
		key, end := prefixRange(prefix)
		if err := replay(from, key, end, send); err != nil {
			send(Batch{Err: fmt.Errorf("replay %s: %w", path, err)})
		}
	}()
	return out
}

// replay sends the events in [key, end) from revision from on, one batch per
// revision.
func (f *File) replay(tx *bolt.Tx, from int64, key, end string, send func(Batch) bool) error {
	c := tx.Bucket(schema.Key.Name()).Cursor()
	var b Batch
	flush := func() bool {
		if len(b.Events) == 0 {
			return true
		}
		ok := send(b)
		b = Batch{}
		return ok
	}
	for k, v := c.Seek(revision{main: from}.bucketKey()); k != nil; k, v = c.Next() {
		r, err := parseRevision(k)
		if err != nil {
			return err
		}
		if r.main != b.Revision && !flush() {
			return nil
		}
		b.Revision = r.main
		ev, ok, err := f.event(tx, r, v, key, end)
		if err != nil {
			return err
		}
		if ok {
			b.Events = append(b.Events, ev)
		}
	}
	flush()
	return nil
}

// event is the change at revision r, stored as v, if its key is in
// [key, end). The change is all in v; the key's index gives the revision
// before it, found by binary search, so that a key with many revisions (a
// lease renewed every 10 s) costs the same per event as any other.
func (f *File) event(tx *bolt.Tx, r revision, v []byte, key, end string) (Event, bool, error) {
	var stored mvccpb.KeyValue
	if err := proto.Unmarshal(v, &stored); err != nil {
		return Event{}, false, fmt.Errorf("revision %d: %w", r.main, err)
	}
	k := string(stored.Key)
	if !inRange(k, key, end) {
		return Event{}, false, nil
	}
	ev := Event{Type: Modified, KV: KV{Key: k, Value: stored.Value, CreateRevision: stored.CreateRevision,
		ModRevision: r.main, Version: stored.Version, Lease: stored.Lease}}
	switch {
	case r.tombstone:
		ev.Type, ev.KV = Deleted, KV{Key: k, ModRevision: r.main}
	case stored.CreateRevision == r.main:
		ev.Type = Added
	}
	if before, ok := f.before(k, r); ok {
		prev, err := f.kv(tx, k, before, true)
		if err != nil {
			return ev, false, err
		}
		ev.Prev = &prev
	}
	return ev, true, nil
}

// before is key's revision before r, when the key existed then and the file
// still holds it. r itself need not be in the index.
func (f *File) before(key string, r revision) (revision, bool) {
	k, ok := f.find(key)
	if !ok {
		return revision{}, false
	}
	i := sort.Search(len(k.revs), func(i int) bool {
		return k.revs[i].main > r.main || k.revs[i].main == r.main && k.revs[i].sub >= r.sub
	})
	if i == 0 || k.revs[i-1].tombstone {
		return revision{}, false
	}
	return k.revs[i-1], true
}

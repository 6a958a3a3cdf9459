package etcdview

import (
	"context"
	"fmt"

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
	out := make(chan Batch, 16)
	go func() {
		defer close(out)
		send := func(b Batch) bool {
			select {
			case out <- b:
				return true
			case <-ctx.Done():
				return false
			}
		}
		from := opts.Rev
		if from == 0 {
			send(Batch{Revision: f.rev, Progress: true})
			return
		}
		if from < f.compacted {
			err := &CompactedError{Rev: from, Compacted: f.compacted}
			if !send(Batch{Err: err, Revision: f.compacted}) || !opts.ContinueAfterCompaction {
				return
			}
			from = f.compacted
		}
		key, end := prefixRange(prefix)
		err := f.db.View(func(tx *bolt.Tx) error { return f.replay(tx, from, key, end, send) })
		if err != nil {
			send(Batch{Err: fmt.Errorf("replay %s: %w", f.path, err)})
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
// [key, end).
func (f *File) event(tx *bolt.Tx, r revision, v []byte, key, end string) (Event, bool, error) {
	var stored mvccpb.KeyValue
	if err := proto.Unmarshal(v, &stored); err != nil {
		return Event{}, false, fmt.Errorf("revision %d: %w", r.main, err)
	}
	if !inRange(string(stored.Key), key, end) {
		return Event{}, false, nil
	}
	k, _ := f.find(string(stored.Key))
	i := 0
	for i < len(k.revs) && (k.revs[i].main != r.main || k.revs[i].sub != r.sub) {
		i++
	}
	cur := k.revs[i]
	ev := Event{Type: Modified}
	switch {
	case cur.tombstone:
		ev.Type = Deleted
	case cur.create == cur.main:
		ev.Type = Added
	}
	var err error
	if ev.KV, err = f.kv(tx, k.key, cur, true); err != nil {
		return ev, false, err
	}
	if i > 0 && !k.revs[i-1].tombstone {
		prev, err := f.kv(tx, k.key, k.revs[i-1], true)
		if err != nil {
			return ev, false, err
		}
		ev.Prev = &prev
	}
	return ev, true, nil
}

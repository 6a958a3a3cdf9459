package etcdview

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/dustin/go-humanize"
	bolt "go.etcd.io/bbolt"
	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/server/v3/storage/backend"
	"go.etcd.io/etcd/server/v3/storage/mvcc"
	"go.etcd.io/etcd/server/v3/storage/schema"
	"google.golang.org/protobuf/proto"
)

// File is the Source of an offline etcd data file: a member's member/snap/db
// or an `etcdctl snapshot save` file. It holds every revision the file
// retains, so it can show the store as of any of them.
//
// etcd's mvcc layer keeps all revisions in the bbolt bucket "key", keyed by
// revision (8-byte big-endian main, '_', 8-byte sub, and a trailing 't' for a
// deletion), each value an mvccpb.KeyValue. The key-to-revisions index etcd
// builds in memory when it starts (its treeIndex) is built here the same way,
// by one pass over that bucket.
type File struct {
	reads
	path      string
	size      int64
	db        *bolt.DB
	index     []keyRevisions // sorted by key
	rev       int64          // the newest revision
	compacted int64          // revisions before it are gone
	raftIndex uint64
	raftTerm  uint64
	version   string
}

// keyRevisions is one key and its retained revisions, oldest first.
type keyRevisions struct {
	key  string
	revs []revision
}

// revision is one retained revision of a key.
type revision struct {
	main, sub   int64
	tombstone   bool
	create, ver int64
	lease       int64
}

// lockTimeout is how long OpenFile waits for the file lock: a running etcd
// holds it exclusively for as long as it runs.
const lockTimeout = time.Second

// OpenFile opens an etcd data file read-only: it works on a read-only file
// and never changes the one it reads.
func OpenFile(path string) (*File, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("open etcd data file: %w", err)
	}
	db, err := bolt.Open(path, 0o400, &bolt.Options{ReadOnly: true, Timeout: lockTimeout})
	if errors.Is(err, bolt.ErrTimeout) {
		return nil, fmt.Errorf("open etcd data file %s: a running etcd holds it locked: stop the member, or read a copy (etcdctl snapshot save)", path)
	}
	if err != nil {
		return nil, fmt.Errorf("open etcd data file %s: %w", path, err)
	}
	f := &File{path: path, size: fi.Size(), db: db}
	f.reads = reads{f}
	if err := db.View(f.load); err != nil {
		db.Close()
		return nil, fmt.Errorf("read etcd data file %s: %w", path, err)
	}
	return f, nil
}

// Close closes the file.
func (f *File) Close() error { return f.db.Close() }

func (f *File) load(tx *bolt.Tx) error {
	keys := tx.Bucket(schema.Key.Name())
	if keys == nil {
		return errors.New(`no "key" bucket: not an etcd v3 data file`)
	}
	byKey := map[string]int{}
	err := keys.ForEach(func(k, v []byte) error {
		r, err := parseRevision(k)
		if err != nil {
			return err
		}
		var kv mvccpb.KeyValue
		if err := proto.Unmarshal(v, &kv); err != nil {
			return fmt.Errorf("revision %d: %w", r.main, err)
		}
		r.create, r.ver, r.lease = kv.CreateRevision, kv.Version, kv.Lease
		i, ok := byKey[string(kv.Key)]
		if !ok {
			i = len(f.index)
			byKey[string(kv.Key)] = i
			f.index = append(f.index, keyRevisions{key: string(kv.Key)})
		}
		f.index[i].revs = append(f.index[i].revs, r)
		f.rev = r.main
		return nil
	})
	if err != nil {
		return err
	}
	sort.Slice(f.index, func(i, j int) bool { return f.index[i].key < f.index[j].key })

	meta := boltReader{tx}
	finished, _ := mvcc.UnsafeReadFinishedCompact(meta)
	scheduled, _ := mvcc.UnsafeReadScheduledCompact(meta)
	// A compaction scheduled but not finished may have removed part of what
	// it covers already: treat it as done, as etcd does on restart.
	f.compacted = max(finished, scheduled)
	// etcd's store revision never goes below its compaction
	// (mvcc.store.restore).
	f.rev = max(f.rev, f.compacted)
	f.raftIndex, f.raftTerm = schema.UnsafeReadConsistentIndex(meta)
	if v := schema.ReadStorageVersionFromSnapshot(tx); v != nil {
		f.version = v.String()
	}
	return nil
}

// parseRevision reads a key of the "key" bucket, checked first because
// mvcc.BytesToBucketKey panics on a malformed one.
func parseRevision(k []byte) (revision, error) {
	if (len(k) != 17 && len(k) != 18) || k[8] != '_' {
		return revision{}, fmt.Errorf("bucket key holds %q, not a revision: not an etcd v3 data file", k)
	}
	r := mvcc.BytesToRev(k)
	return revision{main: r.Main, sub: r.Sub, tombstone: mvcc.IsTombstone(k)}, nil
}

func (r revision) bucketKey() []byte {
	return mvcc.RevToBytes(mvcc.Revision{Main: r.main, Sub: r.sub}, mvcc.NewRevBytes())
}

// at is the key's revision in effect at rev: false when it did not exist
// then.
func (k keyRevisions) at(rev int64) (revision, bool) {
	i := sort.Search(len(k.revs), func(i int) bool { return k.revs[i].main > rev })
	if i == 0 || k.revs[i-1].tombstone {
		return revision{}, false
	}
	return k.revs[i-1], true
}

func (f *File) find(key string) (keyRevisions, bool) {
	i := sort.Search(len(f.index), func(i int) bool { return f.index[i].key >= key })
	if i < len(f.index) && f.index[i].key == key {
		return f.index[i], true
	}
	return keyRevisions{}, false
}

// checkRev resolves rev 0 to the newest revision and refuses what the file
// cannot answer, in etcd's words.
func (f *File) checkRev(rev int64) (int64, error) {
	switch {
	case rev == 0:
		return f.rev, nil
	case rev < f.compacted:
		return 0, &CompactedError{Rev: rev, Compacted: f.compacted}
	case rev > f.rev:
		return 0, fmt.Errorf("revision %d is in the future: the file ends at revision %d", rev, f.rev)
	}
	return rev, nil
}

func (f *File) rangeKeys(ctx context.Context, r rangeRequest) (rangeResult, error) {
	rev, err := f.checkRev(r.rev)
	if err != nil {
		return rangeResult{}, fmt.Errorf("read %s: %w", describeRange(r.key, r.end), err)
	}
	res := rangeResult{rev: rev}
	err = f.db.View(func(tx *bolt.Tx) error {
		i := sort.Search(len(f.index), func(i int) bool { return f.index[i].key >= r.key })
		for ; i < len(f.index) && inRange(f.index[i].key, r.key, r.end); i++ {
			kr, ok := f.index[i].at(rev)
			if !ok {
				continue
			}
			if r.countOnly {
				res.count++
				continue
			}
			if r.limit > 0 && int64(len(res.kvs)) == r.limit {
				res.more = true
				break
			}
			kv, err := f.kv(tx, f.index[i].key, kr, !r.keysOnly)
			if err != nil {
				return err
			}
			res.kvs = append(res.kvs, kv)
		}
		return nil
	})
	return res, err
}

// kv is key at revision r, its value read from the bucket when withValue.
func (f *File) kv(tx *bolt.Tx, key string, r revision, withValue bool) (KV, error) {
	kv := KV{Key: key, CreateRevision: r.create, ModRevision: r.main, Version: r.ver, Lease: r.lease}
	if r.tombstone {
		return KV{Key: key, ModRevision: r.main}, nil
	}
	if !withValue {
		return kv, nil
	}
	var stored mvccpb.KeyValue
	if err := proto.Unmarshal(tx.Bucket(schema.Key.Name()).Get(r.bucketKey()), &stored); err != nil {
		return kv, fmt.Errorf("value of %s at revision %d: %w", key, r.main, err)
	}
	kv.Value = stored.Value
	return kv, nil
}

// History reads every revision of key the file holds, straight from the
// bucket.
func (f *File) History(ctx context.Context, key string) (History, error) {
	h := History{Key: key, Revision: f.rev, CompactedAt: f.compacted}
	kr, ok := f.find(key)
	if !ok {
		return h, nil
	}
	err := f.db.View(func(tx *bolt.Tx) error {
		for i := len(kr.revs) - 1; i >= 0; i-- {
			kv, err := f.kv(tx, key, kr.revs[i], true)
			if err != nil {
				return err
			}
			h.Entries = append(h.Entries, Entry{KV: kv, Deleted: kr.revs[i].tombstone})
		}
		return nil
	})
	return h, err
}

// Status describes the file as the one member whose data it is.
func (f *File) Status(ctx context.Context) (Cluster, error) {
	return Cluster{
		Description:     fmt.Sprintf("offline data file %s (%s)", f.path, humanize.IBytes(uint64(f.size))),
		Revision:        f.rev,
		CompactRevision: f.compacted,
		Members: []Member{{
			Name:      "data file",
			Endpoint:  f.path,
			Version:   f.version,
			DBSize:    f.size,
			RaftTerm:  f.raftTerm,
			RaftIndex: f.raftIndex,
			Applied:   f.raftIndex,
			Revision:  f.rev,
		}},
	}, nil
}

// boltReader lets etcd's own readers of the meta bucket
// (mvcc.UnsafeReadFinishedCompact, schema.UnsafeReadConsistentIndex) read a
// bbolt transaction, as backend.UnsafeReader does: endKey nil reads key
// alone, otherwise [key, endKey) up to limit (0: no limit).
type boltReader struct{ tx *bolt.Tx }

func (r boltReader) UnsafeRange(bucket backend.Bucket, key, endKey []byte, limit int64) (keys, vals [][]byte) {
	b := r.tx.Bucket(bucket.Name())
	if b == nil {
		return nil, nil
	}
	if endKey == nil {
		if v := b.Get(key); v != nil {
			return [][]byte{key}, [][]byte{v}
		}
		return nil, nil
	}
	c := b.Cursor()
	for k, v := c.Seek(key); k != nil && bytes.Compare(k, endKey) < 0; k, v = c.Next() {
		keys, vals = append(keys, k), append(vals, v)
		if limit > 0 && int64(len(keys)) == limit {
			break
		}
	}
	return keys, vals
}

func (r boltReader) UnsafeForEach(bucket backend.Bucket, visitor func(k, v []byte) error) error {
	b := r.tx.Bucket(bucket.Name())
	if b == nil {
		return nil
	}
	return b.ForEach(visitor)
}

package etcdview

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
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
	path  string
	size  int64
	db    *bolt.DB
	index keyIndex
	revBounds
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
// and never changes the one it reads. The key index it builds is kept in a
// sidecar file for the next command on the same file (see sidecar).
func OpenFile(path string) (*File, error) {
	return OpenFileWith(path, FileOptions{})
}

// FileOptions say how OpenFileWith opens a data file.
type FileOptions struct {
	// NoIndexFile keeps the key index in memory only: no sidecar is read
	// or written, beside the file or in the cache directory (a copy of a
	// member's file kept as evidence gets nothing beside it).
	NoIndexFile bool
}

// OpenFileWith is OpenFile with options.
func OpenFileWith(path string, o FileOptions) (*File, error) {
	return openFile(path, o.sidecar(defaultSidecar()))
}

// sidecar is where o lets the index of a file go, given the default.
func (o FileOptions) sidecar(def sidecarOptions) sidecarOptions {
	if o.NoIndexFile {
		return sidecarOptions{minSize: math.MaxInt64}
	}
	return def
}

func openFile(path string, o sidecarOptions) (*File, error) {
	size, err := checkFile(path)
	if err != nil {
		return nil, err
	}
	var db *bolt.DB
	err = guardDamage(path, func() (err error) {
		db, err = bolt.Open(path, 0o400, &bolt.Options{ReadOnly: true, Timeout: lockTimeout})
		return err
	})
	if errors.Is(err, bolt.ErrTimeout) {
		return nil, fmt.Errorf("open etcd data file %s: a running etcd holds it locked: stop the member, or read a copy (etcdctl snapshot save)", path)
	}
	if err != nil {
		return nil, fmt.Errorf("open etcd data file %s: %w", path, err)
	}
	f := &File{path: path, size: size, db: db}
	f.reads = reads{f}
	// Identified once the lock is held: no etcd can write the file now.
	side, err := newSidecar(path, o)
	if err == nil {
		err = f.view(func(tx *bolt.Tx) error { return f.load(tx, side) })
	}
	var damaged *damagedError
	if err != nil && !errors.As(err, &damaged) {
		err = fmt.Errorf("read etcd data file %s: %w", path, err)
	}
	if err != nil {
		db.Close()
		return nil, err
	}
	return f, nil
}

// Close closes the file.
func (f *File) Close() error { return f.db.Close() }

// load reads the file's revision, compaction and Raft state from the meta
// bucket, and its key index from side or the "key" bucket.
func (f *File) load(tx *bolt.Tx, side sidecar) error {
	keys := tx.Bucket(schema.Key.Name())
	if keys == nil {
		return errors.New(`no "key" bucket: not an etcd v3 data file`)
	}
	// The bucket is ordered by revision: its last key is the newest.
	if last, _ := keys.Cursor().Last(); last != nil {
		r, err := parseRevision(last)
		if err != nil {
			return err
		}
		f.rev = r.main
	}
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
	var err error
	f.index, err = side.index(keys)
	return err
}

// buildIndex is the key index of the "key" bucket, by one pass over it.
func buildIndex(keys *bolt.Bucket) (keyIndex, error) {
	// Stats counts the bucket's entries from its pages' headers: a tenth
	// of the pass, which then finds those pages mapped.
	n := keys.Stats().KeyN
	if n > math.MaxInt32 {
		return keyIndex{}, fmt.Errorf("%d revisions: more than an index in memory can hold", n)
	}
	b := newIndexBuilder(n)
	err := keys.ForEach(func(k, v []byte) error {
		r, kv, err := parseEntry(k, v)
		if err != nil {
			return err
		}
		b.add(kv.key, r)
		return nil
	})
	if err != nil {
		return keyIndex{}, err
	}
	return b.index(), nil
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
	// Most reads are of the head, where most keys' last revision is in
	// effect: a Count of a million keys spends its time here.
	if n := len(k.revs); n > 0 && k.revs[n-1].main <= rev {
		return k.revs[n-1], !k.revs[n-1].tombstone
	}
	i := sort.Search(len(k.revs), func(i int) bool { return k.revs[i].main > rev })
	if i == 0 || k.revs[i-1].tombstone {
		return revision{}, false
	}
	return k.revs[i-1], true
}

func (f *File) find(key string) (keyRevisions, bool) { return f.index.find(key) }

// find is key and its revisions, when the index holds it.
func (x *keyIndex) find(key string) (keyRevisions, bool) {
	i := x.search(key)
	if i < x.len() && x.key(i) == key {
		return x.entry(i), true
	}
	return keyRevisions{}, false
}

// revBounds are the revisions an offline file holds.
type revBounds struct {
	rev       int64 // the newest revision
	compacted int64 // revisions before it are gone
	kine      bool  // kine's file, whose errors name kine
	recording bool  // a recording in kine's schema, whose errors name it
}

// checkRev resolves rev 0 to the newest revision and refuses what the file
// cannot answer, in etcd's words.
func (b revBounds) checkRev(rev int64) (int64, error) {
	switch {
	case rev == 0:
		return b.rev, nil
	case rev < b.compacted:
		return 0, &CompactedError{Rev: rev, Compacted: b.compacted, Kine: b.kine, Recording: b.recording}
	case rev > b.rev:
		return 0, fmt.Errorf("revision %d is in the future: the file ends at revision %d", rev, b.rev)
	}
	return rev, nil
}

func (f *File) rangeKeys(ctx context.Context, r rangeRequest) (rangeResult, error) {
	rev, err := f.checkRev(r.rev)
	if err != nil {
		return rangeResult{}, fmt.Errorf("read %s: %w", describeRange(r.key, r.end), err)
	}
	res, hits := f.index.rangeAt(r, rev)
	err = f.view(func(tx *bolt.Tx) error {
		for _, h := range hits {
			kv, err := f.kv(tx, h.key, h.rev, !r.keysOnly)
			if err != nil {
				return err
			}
			res.kvs = append(res.kvs, kv)
		}
		return nil
	})
	return res, err
}

// indexHit is a key a range found in an index, at its revision in effect.
type indexHit struct {
	key string
	rev revision
}

// rangeAt is what r finds in the index as of rev: the count, or the keys
// up to r's limit, with more set when the limit left keys out.
func (x *keyIndex) rangeAt(r rangeRequest, rev int64) (rangeResult, []indexHit) {
	res := rangeResult{rev: rev}
	var hits []indexHit
	from, to := x.span(r.key, r.end)
	for i := from; i < to; i++ {
		e := x.entry(i)
		kr, ok := e.at(rev)
		if !ok {
			continue
		}
		if r.countOnly {
			res.count++
			continue
		}
		if r.limit > 0 && int64(len(hits)) == r.limit {
			res.more = true
			break
		}
		hits = append(hits, indexHit{key: e.key, rev: kr})
	}
	return res, hits
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

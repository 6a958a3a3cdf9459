package etcdview

import (
	"context"
	"fmt"
	"hash/maphash"
	"os"
	"sort"

	bolt "go.etcd.io/bbolt"
	"go.etcd.io/etcd/server/v3/storage/schema"
)

// Layout is how a data file's pages are used, as bbolt's statistics give it.
type Layout struct {
	PageSize int
	// Size is bbolt's high-water mark, pages × page size: the DB size etcd
	// reports, and the one its quota is checked against
	// (storage.BackendQuota, backend.Size).
	Size int64
	// FileSize is the file's length, which bbolt grows ahead of Size.
	FileSize int64
	// FreePages are the pages below the high-water mark that no bucket
	// uses: what a defragmentation would give back. etcd finds them the
	// same way when it opens a file whose free list it never synced (it
	// runs bbolt with NoFreelistSync): every page not reachable from the
	// root, the two meta pages aside.
	FreePages int64
	// InUse is Size less the free pages, as etcd computes its in-use size
	// (backend.commit: size − FreePageN × page size).
	InUse   int64
	Buckets []BucketLayout // by name
}

// BucketLayout is one top-level bucket of a data file.
type BucketLayout struct {
	Name      string
	Keys      int   // entries, sub-buckets' included
	Pages     int   // branch and leaf pages, overflow pages included
	Allocated int64 // bytes of those pages
	InUse     int64 // bytes its entries and page headers fill
}

// scanBatchSize is how many records a File scan hands over at a time.
const scanBatchSize = 1024

// Scan reads every revision the file holds below prefix, up to opts.Rev, in
// one walk of the "key" bucket from the newest revision back: the first
// record met of a key is its revision as of opts.Rev (Current, unless a
// deletion), every record is Retained, so history bytes are exact. A set of
// the keys met is the memory it keeps; values are read and dropped, and fn
// may not keep a batch after it returns. The file's Layout comes with the
// result.
func (f *File) Scan(ctx context.Context, prefix string, opts ScanOptions, fn func([]ScanRecord) error) (ScanResult, error) {
	rev, err := f.checkRev(opts.Rev)
	if err != nil {
		return ScanResult{}, err
	}
	res := ScanResult{Revision: rev, CompactRevision: f.compacted, History: true}
	if res.Layout, err = f.layout(); err != nil {
		return res, err
	}
	report := func(ScanProgress) {}
	if opts.Progress != nil {
		report = opts.Progress
	}
	key, end := prefixRange(prefix)
	err = f.view(func(tx *bolt.Tx) error { return walkBack(ctx, tx, rev, key, end, fn, report) })
	if err != nil {
		return res, fmt.Errorf("scan %s of %s: %w", describeRange(key, end), f.db.Path(), err)
	}
	return res, nil
}

// walkBack hands fn the records of [key, end) at or before rev, newest
// first, a batch at a time. Of each stored KeyValue it parses the fields a
// record needs and skips the value (parseKVFields): the value is most of
// the bytes, and a copy of each would be most of the work.
func walkBack(ctx context.Context, tx *bolt.Tx, rev int64, key, end string, fn func([]ScanRecord) error, report func(ScanProgress)) error {
	b := tx.Bucket(schema.Key.Name())
	if b == nil {
		return fmt.Errorf(`no "key" bucket: not an etcd v3 data file`)
	}
	c := b.Cursor()
	first, _ := c.First()
	if first == nil {
		return nil
	}
	oldest, err := parseRevision(first)
	if err != nil {
		return err
	}
	w := newBackWalk(ctx, rev, oldest.main, fn, report)
	for k, v := seekBack(c, rev); k != nil; k, v = c.Prev() {
		r, kv, err := parseEntry(k, v)
		if err != nil {
			return err
		}
		if !inRange(string(kv.key), key, end) {
			continue
		}
		rec := ScanRecord{Key: string(kv.key), Size: int64(len(v)), CreateRevision: kv.create, ModRevision: r.main,
			Version: kv.version, Lease: kv.lease, Tombstone: r.tombstone, Retained: true}
		if err := w.add(rec, kv.key); err != nil {
			return err
		}
	}
	return w.end()
}

// backWalk hands the records of a walk from revision rev back to oldest to
// fn, a batch at a time, and marks each key's first record met Current,
// unless a deletion.
type backWalk struct {
	ctx         context.Context
	fn          func([]ScanRecord) error
	report      func(ScanProgress)
	rev, oldest int64
	seen        keySet
	batch       []ScanRecord
}

func newBackWalk(ctx context.Context, rev, oldest int64, fn func([]ScanRecord) error, report func(ScanProgress)) *backWalk {
	return &backWalk{ctx: ctx, fn: fn, report: report, rev: rev, oldest: oldest, seen: newKeySet(),
		batch: make([]ScanRecord, 0, scanBatchSize)}
}

// add adds rec, older than every record before it; key is rec.Key.
func (w *backWalk) add(rec ScanRecord, key []byte) error {
	rec.Current = w.seen.add(key) && !rec.Tombstone
	if w.batch = append(w.batch, rec); len(w.batch) == scanBatchSize {
		return w.flush(rec.ModRevision)
	}
	return nil
}

// end hands fn what is left: the walk is done.
func (w *backWalk) end() error { return w.flush(w.oldest) }

// flush hands fn the batch, the walk having come back to revision at.
func (w *backWalk) flush(at int64) error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	if err := w.fn(w.batch); err != nil {
		return err
	}
	w.report(ScanProgress{Phase: ScanHistory, Done: w.rev - at + 1, Total: w.rev - w.oldest + 1})
	w.batch = w.batch[:0]
	return nil
}

// keySet is the set of keys a walk met, by two 64-bit hashes of each under
// seeds of their own: 16 bytes a key, where the keys themselves would take
// a string each (a million keys of a cluster, a hundred MB). Two keys of the
// set would have to agree on 128 bits to be taken for one another.
type keySet struct {
	seeds [2]maphash.Seed
	set   map[[2]uint64]struct{}
}

func newKeySet() keySet {
	return keySet{seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}, set: map[[2]uint64]struct{}{}}
}

// add adds key and says whether it is new.
func (s keySet) add(key []byte) bool {
	h := [2]uint64{maphash.Bytes(s.seeds[0], key), maphash.Bytes(s.seeds[1], key)}
	if _, ok := s.set[h]; ok {
		return false
	}
	s.set[h] = struct{}{}
	return true
}

// seekBack puts c on the last entry at or before revision rev.
func seekBack(c *bolt.Cursor, rev int64) (k, v []byte) {
	if k, _ := c.Seek(revision{main: rev + 1}.bucketKey()); k == nil {
		return c.Last()
	}
	return c.Prev()
}

// layout reads the file's page statistics from bbolt: each bucket's
// (Bucket.Stats), and the whole tree's from the root bucket, which also
// counts the pages of the buckets in it.
func (f *File) layout() (*Layout, error) {
	l := &Layout{PageSize: f.db.Info().PageSize}
	if fi, err := os.Stat(f.db.Path()); err == nil {
		l.FileSize = fi.Size()
	}
	err := f.view(func(tx *bolt.Tx) error {
		l.Size = tx.Size()
		root := tx.Cursor().Bucket().Stats()
		used := 2 + int64(pages(root)) // the two meta pages
		l.FreePages = l.Size/int64(l.PageSize) - used
		l.InUse = used * int64(l.PageSize)
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			s := b.Stats()
			l.Buckets = append(l.Buckets, BucketLayout{Name: string(name), Keys: s.KeyN, Pages: pages(s),
				Allocated: int64(s.BranchAlloc + s.LeafAlloc), InUse: int64(s.BranchInuse + s.LeafInuse)})
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("page statistics of %s: %w", f.db.Path(), err)
	}
	sort.Slice(l.Buckets, func(i, j int) bool { return l.Buckets[i].Name < l.Buckets[j].Name })
	return l, nil
}

func pages(s bolt.BucketStats) int {
	return s.BranchPageN + s.BranchOverflowN + s.LeafPageN + s.LeafOverflowN
}

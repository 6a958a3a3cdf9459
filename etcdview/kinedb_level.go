package etcdview

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/etcdscope/etcdscope/etcdview/internal/sqlitefile"
)

// Children lists one level below prefix, every child counted. Until the
// key index is built, it is one walk of kine's index on names from the
// level's first key to its last (kinePages.live), which holds every key
// with its rows in order: the level and its counts cost a tenth of the
// index's build (ls -l on the bench's 100k keys), which the reads of
// values need, not a listing. Once built, or where the pages are not
// read, the skip-scan reads the key index.
func (f *KineFile) Children(ctx context.Context, prefix string, rev int64) (Level, error) {
	lvl := Level{Prefix: prefix}
	err := f.eachLive(ctx, prefix, rev, &lvl.Revision, func(key []byte) {
		rest := key[len(prefix):]
		n, dir := segmentLen(rest)
		// A child's keys come one after another: only a new one is
		// made a string.
		if last := len(lvl.Children) - 1; last >= 0 && lvl.Children[last].Name == string(rest[:n]) && lvl.Children[last].Dir == dir {
			lvl.Children[last].Count++
			return
		}
		name := string(rest[:n])
		lvl.Children = append(lvl.Children, Child{Name: name, Prefix: prefix + name, Dir: dir, Count: 1})
	})
	if errors.Is(err, errNotPaged) {
		return f.reads.Children(ctx, prefix, rev)
	}
	return lvl, err
}

// Count is the number of keys below prefix at rev, as Children counts
// them.
func (f *KineFile) Count(ctx context.Context, prefix string, rev int64) (int64, error) {
	var n, at int64
	err := f.eachLive(ctx, prefix, rev, &at, func([]byte) { n++ })
	if errors.Is(err, errNotPaged) {
		return f.reads.Count(ctx, prefix, rev)
	}
	return n, err
}

// eachLive calls fn with each key below prefix that exists at rev, in
// order, from the pages, and sets *at to the revision read. errNotPaged
// when the key index is built already, or the pages cannot be read: a
// file without kine's index on names (a recording) lists its last
// revision alone from them, from its table of each key's last row.
func (f *KineFile) eachLive(ctx context.Context, prefix string, rev int64, at *int64, fn func(key []byte)) error {
	if f.paged == nil || f.paged.byName == 0 && f.paged.latest == 0 || f.indexed.Load() {
		return errNotPaged
	}
	key, end := prefixRange(prefix)
	rev, err := f.checkRev(rev)
	if err != nil {
		return fmt.Errorf("read %s: %w", describeRange(key, end), err)
	}
	if f.paged.byName == 0 {
		if rev != f.rev {
			return errNotPaged
		}
		*at = rev
		return pagedError(f.path, f.paged.latestLive(ctx, key, end, fn))
	}
	*at = rev
	dead, err := f.deadIDs(ctx)
	if err != nil {
		return err
	}
	return pagedError(f.path, f.paged.live(ctx, key, end, rev, dead, fn))
}

// pagedError is the error of a read from the pages: errNotPaged as it
// is, to be read again with SQL, any other as the file's.
func pagedError(path string, err error) error {
	if err != nil && !errors.Is(err, errNotPaged) {
		return kineError(path, err)
	}
	return err
}

// live walks kine's index on names from key, and calls fn with each name
// in [key, end) whose newest row at or before rev is not a deletion
// (dead, the deletions' ids in order): the keys that exist at rev, as
// the key index's rangeAt finds them. kine's own rows are no keys.
func (p *kinePages) live(ctx context.Context, key, end string, rev int64, dead []int64, fn func(key []byte)) error {
	var (
		c    canceled
		last []byte // the name whose rows are being read
		top  int64  // its newest row at or before rev; 0: none yet
		some bool   // whether a name was met
	)
	done := func() {
		if top == 0 {
			return
		}
		if _, deleted := slices.BinarySearch(dead, top); !deleted {
			fn(last)
		}
	}
	stop := errors.New("past the range")
	err := p.file.IndexFrom(p.byName, []byte(key), func(r *sqlitefile.Record) error {
		if err := c.check(ctx); err != nil {
			return err
		}
		name, kind, id, err := nameAndID(r)
		if err != nil {
			return err
		}
		if kind == sqlitefile.Blob {
			// After every text: the key index refuses such a file.
			return errNotPaged
		}
		if name == nil || kineInternal(name) {
			return nil
		}
		if !some || !bytes.Equal(name, last) {
			done()
			// From key on, in order: past end, the range is done (a
			// comparison, not inRange, so that no string is made).
			if end != "\x00" && string(name) >= end {
				return stop
			}
			last, top, some = append(last[:0], name...), 0, true
		}
		if id <= rev {
			top = id
		}
		return nil
	})
	if errors.Is(err, stop) {
		return nil
	}
	if err == nil {
		done()
	}
	return err
}

// deadIDs are the ids of the deletions (deletions), read once: a level
// and the key index both need them.
func (f *KineFile) deadIDs(ctx context.Context) ([]int64, error) {
	f.deadMu.Lock()
	defer f.deadMu.Unlock()
	if f.deadRead {
		return f.dead, nil
	}
	dead, err := f.deletions(ctx)
	f.dead, f.deadRead = dead, err == nil
	return dead, err
}

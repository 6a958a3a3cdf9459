package etcdview

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"slices"
)

// keys is the file's key index, built on first use.
func (f *KineFile) keys(ctx context.Context) (*keyIndex, error) {
	f.indexOnce.Do(func() {
		f.index, f.indexErr = f.buildIndex(ctx)
		if f.indexErr != nil {
			f.indexErr = kineError(f.path, f.indexErr)
		}
		f.indexed.Store(f.indexErr == nil)
	})
	return &f.index, f.indexErr
}

// buildIndex reads every row's name and revision in name order, then
// revision order, from one of kine's indexes on (name, id), where SQLite
// finds them sorted as the key index keeps them: a read of the index
// alone, a tenth of the table's bytes, with no sort. Whether a revision is
// a deletion comes from kine's index on (id, deleted), the deletions only.
// Both are read from the file's pages where they can be (kinePages), else
// with SQL.
//
// A recording, with no index on names, has its rows read from its table
// instead, with its deletions, and its names from etcdscope_keys (chains).
func (f *KineFile) buildIndex(ctx context.Context) (keyIndex, error) {
	if f.paged != nil && f.paged.byName == 0 && f.paged.latest != 0 {
		x, err := f.indexFromTable(ctx)
		if !errors.Is(err, errNotPaged) {
			return x, err
		}
	}
	dead, err := f.deadIDs(ctx)
	if err != nil {
		return keyIndex{}, err
	}
	x, err := f.sizedIndex(ctx)
	if err != nil {
		return keyIndex{}, err
	}
	b := indexBuild{x: x, dead: dead}
	if f.paged != nil {
		err := f.paged.names(ctx, b.add)
		if !errors.Is(err, errNotPaged) {
			b.x.closeEntry()
			return b.x, err
		}
		// x is as it was: what the walk added went to b's copy.
		b = indexBuild{x: x, dead: dead}
	}
	rows, err := f.db.QueryContext(ctx, `SELECT name, id FROM kine ORDER BY name, id`)
	if err != nil {
		return keyIndex{}, err
	}
	defer rows.Close()
	for rows.Next() {
		var name sql.RawBytes
		var id int64
		if err := rows.Scan(&name, &id); err != nil {
			return keyIndex{}, err
		}
		if err := b.add(name, id); err != nil {
			return keyIndex{}, err
		}
	}
	if err := rows.Err(); err != nil {
		return keyIndex{}, err
	}
	b.x.closeEntry()
	return b.x, nil
}

// indexFromTable builds a recording's index from the chains of its keys'
// rows, and keeps the deletions for deadIDs.
func (f *KineFile) indexFromTable(ctx context.Context) (keyIndex, error) {
	t, err := f.paged.tableChains(ctx)
	if err != nil {
		return keyIndex{}, err
	}
	f.deadMu.Lock()
	if !f.deadRead {
		f.dead, f.deadRead = t.dead, true
	}
	f.deadMu.Unlock()
	x, err := f.sizedIndex(ctx)
	if err != nil {
		return keyIndex{}, err
	}
	b := indexBuild{x: x, dead: t.dead}
	if err := t.inNameOrder(ctx, f.paged, b.add); err != nil {
		return keyIndex{}, err
	}
	b.x.closeEntry()
	return b.x, nil
}

// indexBuild is a key index being built from kine's rows in name, then
// id order.
type indexBuild struct {
	x    keyIndex
	dead []int64 // the ids of the deletions, in order
	last []byte
}

// add adds the row id of name.
func (b *indexBuild) add(name []byte, id int64) error {
	x := &b.x
	// A row without a name is no key kine serves: its ranges compare
	// names, which NULL never matches.
	if name == nil || kineInternal(name) {
		return nil
	}
	if len(x.revs) == math.MaxInt32 {
		return fmt.Errorf("more than %d revisions: more than an index in memory can hold", math.MaxInt32)
	}
	if len(x.entries) == 0 || !bytes.Equal(name, b.last) {
		// SQLite orders text and blobs apart: a name stored as a blob
		// would come again out of order.
		if len(x.entries) > 0 && bytes.Compare(name, b.last) < 0 {
			return fmt.Errorf("row %d: name %q out of order after %q: names not all stored as text", id, name, b.last)
		}
		x.closeEntry()
		x.entries = append(x.entries, keyEntry{key: x.arena.add(name)})
		b.last = append(b.last[:0], name...)
	}
	_, tomb := slices.BinarySearch(b.dead, id)
	x.revs = append(x.revs, revision{main: id, tombstone: tomb})
	return nil
}

// sizedIndex is an empty index with room for every row of the file: the
// ids span them, but for the rows compaction deleted, so that the index
// is not copied as it grows (a sixth of its build). Entries get room for
// as many keys, up to indexRoom, beyond which a file holds mostly history.
func (f *KineFile) sizedIndex(ctx context.Context) (keyIndex, error) {
	var oldest sql.NullInt64
	if err := f.db.QueryRowContext(ctx, `SELECT MIN(id) FROM kine`).Scan(&oldest); err != nil {
		return keyIndex{}, err
	}
	rows := max(f.rev-oldest.Int64+1, 0)
	return keyIndex{revs: make([]revision, 0, rows), entries: make([]keyEntry, 0, min(rows, indexRoom))}, nil
}

const indexRoom = 1 << 20

// closeEntry ends the revisions of the index's last key where they stand.
func (x *keyIndex) closeEntry() {
	if n := len(x.entries); n > 0 {
		x.entries[n-1].revEnd = int32(len(x.revs))
	}
}

// deletions are the ids of the rows that delete their key, in order.
func (f *KineFile) deletions(ctx context.Context) ([]int64, error) {
	if f.paged != nil {
		ids, err := f.paged.deletions(ctx)
		if !errors.Is(err, errNotPaged) {
			return ids, err
		}
	}
	rows, err := f.db.QueryContext(ctx, `SELECT id FROM kine WHERE deleted != 0 ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

package etcdview

import (
	"bytes"
	"context"
	"database/sql"
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
	})
	return &f.index, f.indexErr
}

// buildIndex reads every row's name and revision in name order, then
// revision order, from one of kine's indexes on (name, id), where SQLite
// finds them sorted as the key index keeps them: a read of the index
// alone, a tenth of the table's bytes, with no sort. Whether a revision is
// a deletion comes from kine's index on (id, deleted), the deletions only.
func (f *KineFile) buildIndex(ctx context.Context) (keyIndex, error) {
	dead, err := f.deletions(ctx)
	if err != nil {
		return keyIndex{}, err
	}
	rows, err := f.db.QueryContext(ctx, `SELECT name, id FROM kine ORDER BY name, id`)
	if err != nil {
		return keyIndex{}, err
	}
	defer rows.Close()
	x, err := f.sizedIndex(ctx)
	if err != nil {
		return keyIndex{}, err
	}
	var last []byte
	for rows.Next() {
		var name sql.RawBytes
		var id int64
		if err := rows.Scan(&name, &id); err != nil {
			return keyIndex{}, err
		}
		// A row without a name is no key kine serves: its ranges compare
		// names, which NULL never matches.
		if name == nil || kineInternal(name) {
			continue
		}
		if len(x.revs) == math.MaxInt32 {
			return keyIndex{}, fmt.Errorf("more than %d revisions: more than an index in memory can hold", math.MaxInt32)
		}
		if len(x.entries) == 0 || !bytes.Equal(name, last) {
			// SQLite orders text and blobs apart: a name stored as a blob
			// would come again out of order.
			if len(x.entries) > 0 && bytes.Compare(name, last) < 0 {
				return keyIndex{}, fmt.Errorf("row %d: name %q out of order after %q: names not all stored as text", id, name, last)
			}
			x.closeEntry()
			x.entries = append(x.entries, keyEntry{key: x.arena.add(name)})
			last = append(last[:0], name...)
		}
		_, tomb := slices.BinarySearch(dead, id)
		x.revs = append(x.revs, revision{main: id, tombstone: tomb})
	}
	if err := rows.Err(); err != nil {
		return keyIndex{}, err
	}
	x.closeEntry()
	return x, nil
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

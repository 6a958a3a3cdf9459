package etcdview

import (
	"context"
	"fmt"
	"strings"
)

func (f *KineFile) rangeKeys(ctx context.Context, r rangeRequest) (rangeResult, error) {
	rev, err := f.checkRev(r.rev)
	if err != nil {
		return rangeResult{}, fmt.Errorf("read %s: %w", describeRange(r.key, r.end), err)
	}
	x, err := f.keys(ctx)
	if err != nil {
		return rangeResult{}, err
	}
	res, hits := x.rangeAt(r, rev)
	if len(hits) > 0 {
		res.kvs, err = f.kvs(ctx, hits, !r.keysOnly)
	}
	return res, err
}

// History reads every revision of key the file holds: its index holds every
// incarnation of the key, so the history is always complete. kine keeps no
// versions (it answers 0): an entry's version is counted from its
// incarnation's creation where the file holds it, as etcd counts it, and
// left 0 where compaction deleted the creation.
func (f *KineFile) History(ctx context.Context, key string, _ HistoryOptions) (History, error) {
	h := History{Key: key, Revision: f.rev, CompactedAt: f.compacted, Earlier: EarlierRead}
	x, err := f.keys(ctx)
	if err != nil {
		return h, err
	}
	kr, ok := x.find(key)
	if !ok {
		return h, nil
	}
	hits := make([]indexHit, len(kr.revs))
	for i, r := range kr.revs {
		hits[len(hits)-1-i] = indexHit{key: key, rev: r}
	}
	kvs, err := f.kvs(ctx, hits, true)
	if err != nil {
		return h, err
	}
	for i, kv := range kvs {
		h.Entries = append(h.Entries, Entry{KV: kv, Deleted: hits[i].rev.tombstone})
	}
	countVersions(h.Entries)
	return h, nil
}

// countVersions numbers the entries, newest first, of each incarnation
// whose creation is among them (kine gives a creation its own id as create
// revision): kine's compaction deletes a row only when a row at or before
// the compaction revision replaced it, so every row after a creation it
// kept is kept too.
func countVersions(entries []Entry) {
	var v int64 // 0: the incarnation's creation is not held
	for i := len(entries) - 1; i >= 0; i-- {
		e := &entries[i]
		switch {
		case e.Deleted:
			v = 0
		case e.KV.CreateRevision == e.KV.ModRevision:
			v = 1
		case v > 0:
			v++
		}
		if !e.Deleted {
			e.KV.Version = v
		}
	}
}

// rowBatch is how many rows one query of kvs reads by id.
const rowBatch = 500

// kvs reads the rows of hits by their ids, a batch a query, as KVs in the
// order of hits, with their values when withValue.
func (f *KineFile) kvs(ctx context.Context, hits []indexHit, withValue bool) ([]KV, error) {
	cols := "id, created, create_revision, lease"
	if withValue {
		cols += ", value"
	}
	out := make([]KV, 0, len(hits))
	for len(hits) > 0 {
		n := min(len(hits), rowBatch)
		batch, err := f.kvBatch(ctx, cols, hits[:n], withValue)
		if err != nil {
			return nil, err
		}
		out, hits = append(out, batch...), hits[n:]
	}
	return out, nil
}

func (f *KineFile) kvBatch(ctx context.Context, cols string, hits []indexHit, withValue bool) ([]KV, error) {
	args := make([]any, len(hits))
	at := make(map[int64]int, len(hits))
	for i, h := range hits {
		args[i], at[h.rev.main] = h.rev.main, i
	}
	q := "SELECT " + cols + " FROM kine WHERE id IN (?" + strings.Repeat(",?", len(hits)-1) + ")"
	rows, err := f.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, kineError(f.path, err)
	}
	defer rows.Close()
	out := make([]KV, len(hits))
	found := 0
	for rows.Next() {
		var r kineRow
		if err := rows.Scan(r.dest(withValue)...); err != nil {
			return nil, kineError(f.path, err)
		}
		id, _ := r.id.(int64)
		i, ok := at[id]
		if !ok {
			continue
		}
		kv, err := r.kv(hits[i].key, withValue)
		if err != nil {
			return nil, fmt.Errorf("value of %s at revision %d: %w", hits[i].key, id, err)
		}
		if hits[i].rev.tombstone {
			kv = KV{Key: kv.Key, ModRevision: kv.ModRevision}
		}
		out[i] = kv
		found++
	}
	if err := rows.Err(); err != nil {
		return nil, kineError(f.path, err)
	}
	if found < len(hits) {
		for i, kv := range out {
			if kv.ModRevision == 0 {
				return nil, fmt.Errorf("%s at revision %d: its row is no longer in %s", hits[i].key, hits[i].rev.main, f.path)
			}
		}
	}
	return out, nil
}

package etcdview

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// kineLogRow is one row of a kine log made up by a test: its record as a
// scan reads it, and the row it names (prev_revision).
type kineLogRow struct {
	rec  ScanRecord
	prev int64
}

// kineLog writes ops random writes of keys keys as kine writes them
// (logstructured's Create, Update and Delete): a creation names the
// deletion it follows, or no row; an update or deletion the key's newest
// row, and carries its incarnation's create revision. Then, when compact
// is more than 0, kine's compaction at that revision: the rows some row up
// to it names go, and so do the deletions up to it (CompactSQL).
func kineLog(rnd *rand.Rand, keys, ops int, compact int64) []kineLogRow {
	var rows []kineLogRow
	last := map[string]*ScanRecord{}
	for range ops {
		key := fmt.Sprintf("/registry/configmaps/ns-%d/cm-%03d", rnd.IntN(3), rnd.IntN(keys))
		id := int64(len(rows) + 1)
		row := kineLogRow{rec: ScanRecord{Key: key, ModRevision: id, Size: int64(len(key) + rnd.IntN(100)), Retained: true}}
		switch prev := last[key]; {
		case prev == nil || prev.Tombstone:
			row.rec.CreateRevision = id
			if prev != nil {
				row.prev = prev.ModRevision
			}
		case rnd.IntN(4) == 0:
			row.rec.CreateRevision, row.rec.Tombstone, row.prev = prev.CreateRevision, true, prev.ModRevision
		default:
			row.rec.CreateRevision, row.prev = prev.CreateRevision, prev.ModRevision
		}
		rows = append(rows, row)
		last[key] = &rows[len(rows)-1].rec
	}
	if compact <= 0 {
		return rows
	}
	gone := map[int64]bool{}
	for _, r := range rows {
		if r.rec.ModRevision <= compact {
			gone[r.prev] = true
			gone[r.rec.ModRevision] = gone[r.rec.ModRevision] || r.rec.Tombstone
		}
	}
	return slices.DeleteFunc(rows, func(r kineLogRow) bool { return gone[r.rec.ModRevision] })
}

// walkKineLog hands rows, oldest first, to a kineWalk from the newest back,
// and returns every record it handed on, by revision.
func walkKineLog(t *testing.T, rows []kineLogRow) map[int64]ScanRecord {
	t.Helper()
	got := map[int64]ScanRecord{}
	fn := func(b []ScanRecord) error {
		for _, r := range b {
			if _, again := got[r.ModRevision]; again {
				return fmt.Errorf("revision %d handed on twice", r.ModRevision)
			}
			got[r.ModRevision] = r
		}
		return nil
	}
	rev, oldest := int64(0), int64(0)
	if len(rows) > 0 {
		rev, oldest = rows[len(rows)-1].rec.ModRevision, rows[0].rec.ModRevision
	}
	w := newKineWalk(newBackWalk(context.Background(), rev, oldest, fn, func(ScanProgress) {}))
	for i := len(rows) - 1; i >= 0; i-- {
		if err := w.add(rows[i].rec, rows[i].prev); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.end(); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(rows) {
		t.Fatalf("%d records handed on of %d rows", len(got), len(rows))
	}
	return got
}

// byNames is what a walk hands on for rows, found by the keys' names
// rather than by the rows they name: each key's newest row is current
// unless a deletion, at the version its rows back to the incarnation's
// creation count, unknown when a deletion or the oldest row comes first.
func byNames(rows []kineLogRow) map[int64]ScanRecord {
	want := map[int64]ScanRecord{}
	byKey := map[string][]ScanRecord{}
	for _, r := range rows {
		want[r.rec.ModRevision] = r.rec
		byKey[r.rec.Key] = append(byKey[r.rec.Key], r.rec)
	}
	for _, recs := range byKey {
		cur := recs[len(recs)-1]
		if cur.Tombstone {
			continue
		}
		cur.Current, cur.Version = true, VersionUnknown
		for i := len(recs) - 1; i >= 0 && !recs[i].Tombstone; i-- {
			if recs[i].CreateRevision == recs[i].ModRevision {
				cur.Version = int64(len(recs) - i)
				break
			}
		}
		want[cur.ModRevision] = cur
	}
	return want
}

// TestKineWalkFindsByRowsWhatNamesFind: logs written as kine writes them,
// compacted as kine compacts, are walked by the rows each row names, and
// give every key's current record and version as a walk by the keys'
// names finds them.
func TestKineWalkFindsByRowsWhatNamesFind(t *testing.T) {
	t.Parallel()
	for seed := range uint64(200) {
		rnd := rand.New(rand.NewPCG(seed, 24))
		ops := 1 + rnd.IntN(400)
		compact := int64(0)
		if seed%2 == 1 {
			compact = rnd.Int64N(int64(ops))
		}
		rows := kineLog(rnd, 1+rnd.IntN(40), ops, compact)
		got, want := walkKineLog(t, rows), byNames(rows)
		for rev, w := range want {
			if got[rev] != w {
				t.Fatalf("seed %d, %d rows compacted at %d: revision %d handed on as %+v, by names %+v", seed, len(rows), compact, rev, got[rev], w)
			}
		}
	}
}

// TestKineWalkOfRowsNotKinesEnds: rows that name rows of other keys, later
// rows, themselves or rows not there (no file kine wrote) are each handed
// on once, and no version is counted through a row of another key.
func TestKineWalkOfRowsNotKinesEnds(t *testing.T) {
	t.Parallel()
	for seed := range uint64(200) {
		rnd := rand.New(rand.NewPCG(seed, 25))
		rows := kineLog(rnd, 1+rnd.IntN(10), 1+rnd.IntN(200), 0)
		for i := range rows {
			if rnd.IntN(3) == 0 {
				rows[i].prev = rnd.Int64N(int64(len(rows)+3)) - 1
			}
		}
		perKey := map[string]int64{}
		for _, r := range rows {
			perKey[r.rec.Key]++
		}
		for _, r := range walkKineLog(t, rows) {
			if r.Current && r.Version != VersionUnknown && (r.Version < 1 || r.Version > perKey[r.Key]) {
				t.Fatalf("seed %d: %s at version %d, of %d rows", seed, r.Key, r.Version, perKey[r.Key])
			}
		}
	}
}

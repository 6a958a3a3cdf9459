package etcdview

import (
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// withSQL is the file opened again with its pages unread: every read is
// SQL's, the reference the page reader is held to.
func withSQL(t *testing.T, path string) *KineFile {
	t.Helper()
	g := openKine(t, path)
	g.paged.close()
	g.paged = nil
	return g
}

// checkpointed is a copy of the kine file at path with the writes of its
// log, if kine left any there, copied into the file: read with no log,
// as the pages are read, it holds every write.
func checkpointed(t *testing.T, path, name string) string {
	t.Helper()
	copied := filepath.Join(t.TempDir(), name)
	for _, ext := range []string{"", "-wal"} {
		data, err := os.ReadFile(path + ext)
		if ext != "" && errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(copied+ext, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeSQLite(t, copied, "PRAGMA wal_checkpoint(TRUNCATE)")
	return copied
}

// indexEntry is one key of a key index and its revisions, compared.
type indexEntry struct {
	key  string
	revs []revision
}

func indexEntries(t *testing.T, f *KineFile) []indexEntry {
	t.Helper()
	x, err := f.keys(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	out := make([]indexEntry, x.len())
	for i := range out {
		out[i] = indexEntry{x.key(i), x.revisions(i)}
	}
	return out
}

// scanInOrder is every record a scan below prefix hands on, in its order.
func scanInOrder(t *testing.T, f *KineFile, prefix string) []ScanRecord {
	t.Helper()
	var recs []ScanRecord
	_, err := f.Scan(testCtx(t), prefix, ScanOptions{}, func(b []ScanRecord) error {
		recs = append(recs, b...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// currentByScan is each key a scan of f finds current, and its revision.
func currentByScan(t *testing.T, f *KineFile) map[string]int64 {
	t.Helper()
	cur := map[string]int64{}
	for _, r := range scanInOrder(t, f, "") {
		if r.Current {
			if _, twice := cur[r.Key]; twice {
				t.Errorf("%s current twice", r.Key)
			}
			cur[r.Key] = r.ModRevision
		}
	}
	return cur
}

// currentByNames is each key that exists in f and its revision, from the
// key index: the newest of the rows of its name.
func currentByNames(t *testing.T, f *KineFile) map[string]int64 {
	t.Helper()
	x, err := f.keys(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	cur := map[string]int64{}
	for i := range x.len() {
		if revs := x.revisions(i); !revs[len(revs)-1].tombstone {
			cur[x.key(i)] = revs[len(revs)-1].main
		}
	}
	return cur
}

// asRecording is a copy of the kine file at path as a recording writes it
// (package record): none of kine's indexes on names or ids, and
// etcdscope_keys, each key's last row.
func asRecording(t *testing.T, path string) string {
	t.Helper()
	recording := checkpointed(t, path, "recording.db")
	writeSQLite(t, recording, "DROP INDEX kine_name_index", "DROP INDEX kine_name_id_index", "DROP INDEX kine_id_deleted_index",
		"DROP INDEX kine_name_prev_revision_uindex",
		`CREATE TABLE etcdscope_keys (name TEXT PRIMARY KEY, id INTEGER NOT NULL, deleted INTEGER NOT NULL) WITHOUT ROWID`,
		`INSERT INTO etcdscope_keys SELECT k.name, k.id, k.deleted FROM kine AS k JOIN (SELECT MAX(id) AS id FROM kine GROUP BY name) AS m ON k.id = m.id`)
	return recording
}

// TestKinePagesReadWhatSQLReads reads files a real kine wrote (history,
// deletions, a compaction; values spilling onto overflow pages) from
// their pages and with SQL: the same key index, every key with every
// revision and deletion, and the same scan records, in spans of every
// size, below every prefix. The keys a scan finds current by the rows
// each row names are those the key index finds by their names. One of the
// files has none of kine's indexes on names or ids, as a recording
// (package record): its names and deletions are read from the table. Not
// parallel: it sets kineSpan.
func TestKinePagesReadWhatSQLReads(t *testing.T) {
	defer func(n int64) { kineSpan = n }(kineSpan)
	fixture := writeKineFixture(t).path
	recording := asRecording(t, fixture)
	files := map[string]string{"the fixture": fixture, "the small file": smallKineFile(t), "the fixture as a recording": recording}
	for name, path := range files {
		indexed := path != recording
		path := checkpointed(t, path, "state.db")
		t.Run(name, func(t *testing.T) {
			f, g := openKine(t, path), withSQL(t, path)
			if f.paged == nil || (f.paged.byName != 0 && f.paged.byID != 0) != indexed || f.paged.latest != 0 == indexed {
				t.Fatalf("kine's file is not read from its pages as its indexes say: %+v", f.paged)
			}
			if !indexed {
				// The chains are read, not SQL as a fall-back.
				if _, err := f.indexFromTable(testCtx(t)); err != nil {
					t.Fatalf("the recording's key index from its chains: %v", err)
				}
			}
			got, want := indexEntries(t, f), indexEntries(t, g)
			if len(want) < 10 || !slices.EqualFunc(got, want, func(a, b indexEntry) bool { return a.key == b.key && slices.Equal(a.revs, b.revs) }) {
				t.Errorf("the key index: %d keys from the pages, %d with SQL, differing", len(got), len(want))
			}
			dead, err := f.deadIDs(testCtx(t))
			deadSQL, errSQL := g.deletions(testCtx(t))
			if err != nil || errSQL != nil || len(deadSQL) == 0 || !slices.Equal(dead, deadSQL) {
				t.Errorf("deletions: %v, %v from the pages; %v, %v with SQL", dead, err, deadSQL, errSQL)
			}
			if got, want := currentByScan(t, f), currentByNames(t, f); len(want) < 10 || !maps.Equal(got, want) {
				t.Errorf("the current keys: %d by the rows each row names, %d by the keys' names, differing", len(got), len(want))
			}
			for _, span := range []int64{1, 7, 8192} {
				kineSpan = span
				for _, prefix := range []string{"", "/registry/", kineCMs, "/registry/leases/", "/nothing/"} {
					got, want := scanInOrder(t, f, prefix), scanInOrder(t, g, prefix)
					if !slices.Equal(got, want) || prefix == kineCMs && len(want) == 0 {
						t.Errorf("Scan(%q) in spans of %d: %d records from the pages, %d with SQL, differing", prefix, span, len(got), len(want))
					}
				}
			}
		})
	}
}

// TestARowKineDoesNotWriteIsReadWithSQL: a row whose lease is text is
// read with SQL, whose scan says what is wrong with it, and a file whose
// table is not kine's exactly is read with SQL alone, as it was before.
func TestARowKineDoesNotWriteIsReadWithSQL(t *testing.T) {
	t.Parallel()
	small := smallKineFile(t)
	bad := checkpointed(t, small, "state.db")
	writeSQLite(t, bad, `UPDATE kine SET lease = 'soon' WHERE name = '/registry/configmaps/ns-1/cm-005'`)
	f := openKine(t, bad)
	if f.paged == nil {
		t.Fatal("the file is not read from its pages")
	}
	_, err := f.Scan(testCtx(t), "", ScanOptions{}, func([]ScanRecord) error { return nil })
	if err == nil || !strings.HasSuffix(err.Error(), "kine's column lease holds string soon, not what kine writes") {
		t.Errorf("Scan over the row: %v, want SQL's word on its lease", err)
	}
	if got, want := indexEntries(t, f), indexEntries(t, withSQL(t, bad)); len(got) != len(want) {
		t.Errorf("the key index beside the row: %d keys, SQL's %d", len(got), len(want))
	}
	blob := checkpointed(t, small, "blob.db")
	writeSQLite(t, blob, `UPDATE kine SET name = CAST(name AS BLOB) WHERE name = '/registry/configmaps/ns-1/cm-005'`)
	_, err = openKine(t, blob).Children(testCtx(t), "/registry/", 0)
	_, errSQL := withSQL(t, blob).Children(testCtx(t), "/registry/", 0)
	if err == nil || errSQL == nil || err.Error() != errSQL.Error() {
		t.Errorf("a level beside a name stored as a blob: %v, SQL's %v", err, errSQL)
	}
	other := checkpointed(t, small, "other.db")
	writeSQLite(t, other, `ALTER TABLE kine ADD COLUMN note TEXT`)
	g := openKine(t, other)
	if g.paged != nil {
		t.Error("a table of another column than kine's is read from its pages")
	}
	if recs := scanInOrder(t, g, kineCMs); len(recs) == 0 {
		t.Error("a table of another column than kine's: no record read with SQL")
	}
}

// levelWithCounts is the level below prefix at rev with every child
// counted, as ls -l shows it.
func levelWithCounts(t *testing.T, f *KineFile, prefix string, rev int64) (Level, error) {
	t.Helper()
	lvl, err := f.Children(testCtx(t), prefix, rev)
	if err == nil {
		err = CountChildren(testCtx(t), f, &lvl)
	}
	return lvl, err
}

func sameLevel(a, b Level) bool {
	return a.Prefix == b.Prefix && a.Revision == b.Revision && slices.Equal(a.Children, b.Children)
}

// TestKineLevelsFromThePagesAreTheKeyIndexs lists levels of files a real
// kine wrote (deletions, keys created again, a compaction) at the head,
// at the compaction revision and between, from the index on names alone
// and by skip-scan over the key index SQL builds: the same children with
// the same counts, and the same Count of each prefix. Once its own key
// index is built, the file reads levels from it, and they are the same.
//
// A file as a recording writes it (package record), with no index on names
// but a table of each key's last row, lists its last revision from that
// table, and its other revisions from the key index.
func TestKineLevelsFromThePagesAreTheKeyIndexs(t *testing.T) {
	fx := writeKineFixture(t)
	recording := asRecording(t, fx.path)
	files := map[string]string{"the fixture": fx.path, "the small file": smallKineFile(t), "the fixture as a recording": recording}
	prefixes := []string{"", "/", "/registry", "/registry/", kineCMs, kineCMs + "ns-1/", kineCMs + "ns-1/cm-1",
		kineCMs + "ns-1/cm-10", "/registry/leases/kube-node-lease/", "/registry/health", "/nothing/", "\xff"}
	for name, path := range files {
		isRecording := path == recording
		path := checkpointed(t, path, "state.db")
		t.Run(name, func(t *testing.T) {
			f, g := openKine(t, path), withSQL(t, path)
			if isRecording != (f.paged.latest != 0 && f.paged.byName == 0) {
				t.Fatalf("kine's file is not read from its pages as its indexes say: %+v", f.paged)
			}
			revs := []int64{0, f.rev, f.compacted, (f.compacted + f.rev) / 2, f.compacted - 1}
			compare := func(paged bool) {
				revs := revs
				if paged && isRecording {
					revs = revs[:2]
				}
				for _, rev := range revs {
					for _, prefix := range prefixes {
						got, err := levelWithCounts(t, f, prefix, rev)
						want, errSQL := levelWithCounts(t, g, prefix, rev)
						if err != nil || errSQL != nil {
							// The skip-scan names the range it read first.
							var c, cSQL *CompactedError
							if !errors.As(err, &c) || !errors.As(errSQL, &cSQL) || *c != *cSQL {
								t.Errorf("level %q at %d: %v from the pages, %v with SQL", prefix, rev, err, errSQL)
							}
							continue
						}
						if !sameLevel(got, want) {
							t.Errorf("level %q at %d (from the pages %v):\n got %+v\nwant %+v", prefix, rev, paged, got, want)
						}
						n, err := f.Count(testCtx(t), prefix, rev)
						nSQL, errSQL := g.Count(testCtx(t), prefix, rev)
						if n != nSQL || (err == nil) != (errSQL == nil) {
							t.Errorf("Count(%q) at %d: %d, %v from the pages; %d, %v with SQL", prefix, rev, n, err, nSQL, errSQL)
						}
					}
				}
				if f.indexed.Load() != !paged {
					t.Errorf("levels read from the pages %v, yet the key index is built: %v", paged, f.indexed.Load())
				}
			}
			compare(true)
			if lvl, _ := levelWithCounts(t, f, kineCMs, 0); len(lvl.Children) < 3 || lvl.Children[0].Count < 5 {
				t.Errorf("the configmaps' level: %+v, too little to tell", lvl)
			}
			indexEntries(t, f)
			compare(false)
		})
	}
}

// TestARecordingWhoseChainsMissRowsIsReadWithSQL: a recording a row of
// which its key's chain does not reach (a writer other than the recorder
// wrote it) has its key index read with SQL, every row in it.
func TestARecordingWhoseChainsMissRowsIsReadWithSQL(t *testing.T) {
	t.Parallel()
	path := asRecording(t, smallKineFile(t))
	writeSQLite(t, path, `UPDATE kine SET prev_revision = 0 WHERE id = (SELECT MAX(id) FROM kine WHERE prev_revision > 0 AND deleted = 0)`)
	f, g := openKine(t, path), withSQL(t, path)
	if _, err := f.indexFromTable(testCtx(t)); !errors.Is(err, errNotPaged) {
		t.Errorf("the key index from chains that miss a row: %v, want it read with SQL", err)
	}
	got, want := indexEntries(t, f), indexEntries(t, g)
	if len(want) < 10 || !slices.EqualFunc(got, want, func(a, b indexEntry) bool { return a.key == b.key && slices.Equal(a.revs, b.revs) }) {
		t.Errorf("the key index: %d keys, %d with SQL, differing", len(got), len(want))
	}
}

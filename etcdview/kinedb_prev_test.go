package etcdview

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// prevRows is a kine table as a recording leaves it: its compaction row
// (the start, 3), a snapshot's rows at and before it, a change of /a/x, a
// row of kine's own (gap-5), the deletion of /b/y, 300 changes of /c/n,
// which a step back below /a/ reads past, kine's health key, and the
// creation of /a/z.
func prevRows() []string {
	rows := []string{
		`(1, 'compact_rev_key', 0, 0, 0, 3, 0, '', '')`,
		`(2, '/a/x', 1, 0, 0, 0, 0, 'v', NULL)`,
		`(3, '/b/y', 1, 0, 0, 0, 0, 'v', NULL)`,
		`(4, '/a/x', 0, 0, 2, 2, 0, 'w', NULL)`,
		`(5, 'gap-5', 0, 1, 0, 0, 0, '', NULL)`,
		`(6, '/b/y', 0, 1, 3, 3, 0, NULL, NULL)`,
	}
	rows = append(rows, `(7, '/c/n', 1, 0, 0, 0, 0, 'v', NULL)`)
	for id := 8; id <= 306; id++ {
		rows = append(rows, fmt.Sprintf(`(%d, '/c/n', 0, 0, 7, %d, 0, 'v', NULL)`, id, id-1))
	}
	return append(rows, `(307, '/registry/health', 1, 0, 0, 0, 0, '', NULL)`, `(308, '/a/z', 1, 0, 0, 0, 0, 'z', NULL)`)
}

// prevCases are PrevRevision's answers on prevRows: the newest row below
// rev of a key below the prefix, a deletion too, none of kine's own, and
// none at or before the start.
var prevCases = []struct {
	prefix string
	rev    int64
	want   int64 // 0: none
}{
	{"", 309, 308},
	{"", 1000, 308}, // past the head: from the head
	{"", 308, 306},  // the health key is kine's
	{"/a/", 308, 4}, // back over 300 rows of /c/ and gap-5
	{"/a/", 4, 0},   // /a/x at 2 is the snapshot's, before the start
	{"/b/", 200, 6}, // a deletion is a change
	{"", 6, 4},      // gap-5 is kine's
	{"", 4, 0},
	{"/registry/", 1000, 0},
	{"/c/n", 100, 99},
}

func checkPrevRevisions(t *testing.T, f PrevRevisions) {
	t.Helper()
	for _, tc := range prevCases {
		got, ok, err := f.PrevRevision(testCtx(t), tc.prefix, tc.rev)
		if err != nil || got != tc.want || ok != (tc.want > 0) {
			t.Errorf("PrevRevision(%q, %d) = %d, %v, %v; want %d", tc.prefix, tc.rev, got, ok, err, tc.want)
		}
	}
}

func TestPrevRevisionIsTheNewestChangeBelowThePrefixAfterTheStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rec.db")
	writeSQLite(t, path, `CREATE TABLE kine (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT, created INTEGER, deleted INTEGER,
		create_revision INTEGER, prev_revision INTEGER, lease INTEGER, value BLOB, old_value BLOB)`,
		`CREATE INDEX kine_name_index ON kine (name)`,
		`INSERT INTO kine VALUES `+strings.Join(prevRows(), ", "))
	checkPrevRevisions(t, openKine(t, path))
}

// The same rows in PostgreSQL give the same answers, with the same SQL.
func TestPrevRevisionInPostgres(t *testing.T) {
	checkPrevRevisions(t, pgKine(t, prevRows()...))
}

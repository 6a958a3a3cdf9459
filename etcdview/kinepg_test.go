package etcdview

import (
	"context"
	"strings"
	"testing"

	"github.com/etcdscope/etcdscope/etcdview/pgtest"
	"github.com/jackc/pgx/v5"
)

// pgKine is a kine table of rows (each "(id, name, ...)", in the table's
// order of columns) in the schema east of a PostgreSQL of the test's own,
// opened as --db opens a recording there.
func pgKine(t *testing.T, rows ...string) *KineFile {
	t.Helper()
	pg := pgtest.Start(t)
	c, err := pgx.Connect(t.Context(), pg.URL("postgres", ""))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"CREATE SCHEMA east",
		`CREATE TABLE east.kine (id BIGSERIAL PRIMARY KEY, name TEXT COLLATE "C", created INTEGER, deleted INTEGER,
			create_revision BIGINT, prev_revision BIGINT, lease BIGINT, value BYTEA, old_value BYTEA)`,
		`INSERT INTO east.kine VALUES ` + strings.Join(rows, ", ")} {
		if _, err := c.Exec(t.Context(), s); err != nil {
			t.Fatal(err)
		}
	}
	c.Close(context.Background())
	f, err := OpenKinePG(pg.URL("postgres", "east"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// TestPostgresRecordingIsReadOnly: what --db opens in PostgreSQL cannot
// write, even with SQL of its own: every transaction of its connections
// is read-only.
func TestPostgresRecordingIsReadOnly(t *testing.T) {
	f := pgKine(t, `(5, '/k', 1, 0, 0, 0, 0, 'v', NULL)`)
	if kv, err := f.Get(t.Context(), "/k", 0); err != nil || string(kv.Value) != "v" || kv.ModRevision != 5 {
		t.Fatalf("get /k: %+v %v, want v at 5", kv, err)
	}
	for _, s := range []string{`INSERT INTO kine (name, value) VALUES ('/x', 'x')`, `CREATE TABLE x (i INTEGER)`} {
		if _, err := f.db.ExecContext(t.Context(), s); err == nil || !strings.Contains(err.Error(), "read-only transaction") {
			t.Errorf("%s through the reader: %v, want PostgreSQL to refuse it", s, err)
		}
	}
}

// TestOpenPostgresSaysWhatIsMissing: a cluster the database has no
// recording of, and a URL without one, are one line each.
func TestOpenPostgresSaysWhatIsMissing(t *testing.T) {
	pg := pgtest.Start(t)
	for _, tc := range []struct{ url, want string }{
		{pg.URL("postgres", "west"), "no recording of cluster west in this database"},
		{pg.URL("postgres", ""), "names no cluster"},
		{pg.URL("nodb", "west"), `database "nodb" does not exist`},
	} {
		_, err := OpenKinePG(tc.url)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("open %s: %v, want one line saying %q", tc.url, err, tc.want)
		}
	}
}

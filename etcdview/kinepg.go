package etcdview

import (
	"context"
	"fmt"

	"github.com/dustin/go-humanize"
	"github.com/etcdscope/etcdscope/etcdview/internal/pgsql"
)

// OpenKinePG opens a cluster's recording in PostgreSQL (--db
// postgres://...?cluster=NAME, written by etcdscope record --out to the
// same URL) as a KineFile: kine's table in PostgreSQL, read with the same
// SQL as a SQLite file's (not from pages, which only SQLite's file has).
// Every transaction of its connections is read-only: the server refuses a
// write, should one ever be issued.
func OpenKinePG(raw string) (*KineFile, error) {
	t, err := pgsql.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("--db %s: %w", pgsql.Redact(raw), err)
	}
	ctx := context.Background()
	db, err := t.Open(ctx, true)
	if err != nil {
		return nil, fmt.Errorf("--db %s: %w", t.Display, err)
	}
	f := &KineFile{path: t.Display, db: db, pg: &t}
	f.reads = reads{f}
	if err := f.checkPG(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("--db %s: %w", t.Display, err)
	}
	if err := f.load(ctx); err != nil {
		db.Close()
		return nil, kineError(f.path, pgsql.Short(err))
	}
	f.size = pgsql.Size(ctx, db)
	return f, nil
}

// checkPG says in one line when the database holds no recording of the
// cluster.
func (f *KineFile) checkPG(ctx context.Context) error {
	exists, err := f.pg.SchemaExists(ctx, f.db)
	if err != nil {
		return pgsql.Short(err)
	}
	if !exists {
		return fmt.Errorf("no recording of cluster %s in this database (no schema %s): etcdscope record --out writes one", f.pg.Cluster, f.pg.Cluster)
	}
	n, err := pgsql.Tables(ctx, f.db, "kine")
	if err == nil && n == 0 {
		err = fmt.Errorf("schema %s holds no kine table: not a recording", f.pg.Cluster)
	}
	return err
}

// pgDescription is Description for a recording in PostgreSQL.
func (f *KineFile) pgDescription() string {
	return fmt.Sprintf("recording of cluster %s in PostgreSQL %s (%s)", f.pg.Cluster, f.path, humanize.IBytes(uint64(f.size))) + f.gapsNote()
}

// pgStatus is Status for a recording in PostgreSQL: its size is its
// tables', as kine's pgsql driver reports its DB size.
func (f *KineFile) pgStatus() Cluster {
	return Cluster{
		Kine:            true,
		Recording:       true,
		Description:     f.Description(),
		Revision:        f.rev,
		CompactRevision: f.compacted,
		Members:         []Member{{Name: "PostgreSQL", Endpoint: f.path, DBSize: f.size, DBInUse: f.size, Revision: f.rev}},
	}
}

// pgRecordingSQL counts the tables of a recording beside kine's in the
// cluster's schema, as recording does in a SQLite file's schema table.
const pgRecordingSQL = `SELECT COUNT(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename IN ('etcdscope_revisions', 'etcdscope_gaps')`

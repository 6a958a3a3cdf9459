package record

import (
	"context"
	"fmt"

	"github.com/etcdscope/etcdscope/etcdview/internal/pgsql"
)

// pgKineSchema is kine's table and indexes as kine v0.17.5 creates them
// in PostgreSQL (pkg/drivers/pgsql): names in the C collation, so that they
// sort and compare as etcd's bytes do. But for lease: kine writes its own
// small lease ids in an INTEGER, and a recording etcd's, which are 64 bits.
var pgKineSchema = []string{
	`CREATE TABLE IF NOT EXISTS kine (id BIGSERIAL PRIMARY KEY, name TEXT COLLATE "C", created INTEGER, deleted INTEGER,
		create_revision BIGINT, prev_revision BIGINT, lease BIGINT, value BYTEA, old_value BYTEA)`,
	`CREATE INDEX IF NOT EXISTS kine_name_index ON kine (name)`,
	`CREATE INDEX IF NOT EXISTS kine_name_id_index ON kine (name, id)`,
	`CREATE INDEX IF NOT EXISTS kine_id_deleted_index ON kine (id, deleted)`,
	`CREATE INDEX IF NOT EXISTS kine_prev_revision_index ON kine (prev_revision)`,
	`CREATE UNIQUE INDEX IF NOT EXISTS kine_name_prev_revision_uindex ON kine (name, prev_revision)`,
	`CREATE INDEX IF NOT EXISTS kine_list_query_index ON kine (name, id DESC, deleted)`,
}

// pgOwnSchema is ownSchema in PostgreSQL's types: its INTEGER is 32 bits,
// SQLite's 64, and a column has a type.
var pgOwnSchema = []string{
	`CREATE TABLE IF NOT EXISTS etcdscope_revisions (id BIGINT PRIMARY KEY, revision BIGINT NOT NULL, unix_nano BIGINT)`,
	`CREATE TABLE IF NOT EXISTS etcdscope_gaps (from_revision BIGINT NOT NULL, to_revision BIGINT NOT NULL,
		unix_nano BIGINT NOT NULL, written INTEGER NOT NULL, deleted INTEGER NOT NULL)`,
	`CREATE TABLE IF NOT EXISTS etcdscope_record (name TEXT PRIMARY KEY, value TEXT)`,
	`CREATE TABLE IF NOT EXISTS etcdscope_keys (name TEXT COLLATE "C" PRIMARY KEY, id BIGINT NOT NULL, deleted INTEGER NOT NULL)`,
}

// openPG opens the recording of a cluster in PostgreSQL (--out
// postgres://...?cluster=NAME): kine's table and etcdscope's in the
// cluster's own schema, so that the clusters of one database stay apart,
// written by the same statements as a SQLite file's.
func openPG(raw, prefix string) (*File, error) {
	target, err := pgsql.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("--out %s: %w", pgsql.Redact(raw), err)
	}
	ctx := context.Background()
	db, err := target.Open(ctx, false)
	if err != nil {
		return nil, fmt.Errorf("--out %s: %w", target.Display, err)
	}
	f := &File{path: target.Display, db: db, prefix: prefix, pg: &target}
	if err := f.lockPG(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("--out %s: %w", target.Display, err)
	}
	return f.ready(false)
}

// lockPG creates the cluster's schema when there is none and takes the
// recorders' lock of it: a session's advisory lock, on a connection held
// for the recording's life, that a second recorder of the cluster fails
// to take. A schema of other tables than a recording's (kine's own, as
// k3s keeps it in public) is refused.
func (f *File) lockPG(ctx context.Context) error {
	// Two connections: the writer's, and the lock's.
	f.db.SetMaxOpenConns(2)
	if _, err := f.db.ExecContext(ctx, `CREATE SCHEMA IF NOT EXISTS `+f.pg.Schema()); err != nil {
		return pgsql.Short(err)
	}
	conn, err := f.db.Conn(ctx)
	if err != nil {
		return pgsql.Short(err)
	}
	var locked bool
	if err := conn.QueryRowContext(ctx, `SELECT pg_try_advisory_lock(hashtext('etcdscope record'), hashtext(?))`, f.pg.Cluster).Scan(&locked); err != nil {
		conn.Close()
		return err
	}
	if !locked {
		conn.Close()
		return fmt.Errorf("another etcdscope record writes cluster %s", f.pg.Cluster)
	}
	f.lock = conn
	tables, err := pgsql.Tables(ctx, f.db)
	if err != nil {
		return err
	}
	own, err := pgsql.Tables(ctx, f.db, "etcdscope_record")
	if err == nil && tables > 0 && own == 0 {
		err = fmt.Errorf("schema %s holds tables but no recording of etcdscope's: refusing to write to it", f.pg.Cluster)
	}
	return err
}

// tableCount is how many tables the file, or the cluster's schema, holds.
func (f *File) tableCount(ctx context.Context) (int, error) {
	if f.pg != nil {
		return pgsql.Tables(ctx, f.db)
	}
	var n int
	err := f.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_schema WHERE type = 'table'`).Scan(&n)
	return n, err
}

// schema is the statements that create a recording's tables.
func (f *File) schema() []string {
	if f.pg != nil {
		return append(append([]string{}, pgKineSchema...), pgOwnSchema...)
	}
	return append(append([]string{}, kineSchema...), ownSchema...)
}

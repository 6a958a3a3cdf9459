// Package pgsql is how etcdscope reaches a recording in PostgreSQL: the
// URL a user gives (postgres://user@host:port/db?cluster=NAME), one schema
// a cluster, and a database/sql handle on pgx's driver whose statements
// are written with SQLite's ? placeholders, as the SQLite file's are.
package pgsql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5"
)

// IsURL says whether s names a PostgreSQL database rather than a file.
func IsURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// Target is a cluster's recording in a PostgreSQL database.
type Target struct {
	// Cluster is the cluster's name, which is its schema's.
	Cluster string
	// Display is the URL as given but for a password, for messages.
	Display string
	config  *pgx.ConnConfig
}

// clusterName is what a cluster's name may be: a schema name that needs no
// quoting to be read, within PostgreSQL's 63 bytes of an identifier, and
// not one of PostgreSQL's own (pg_*, which it refuses to create).
var clusterName = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,62}$`)

// Parse reads a URL of a recording. The cluster parameter is etcdscope's
// and is taken out before pgx reads the rest: pgx sends every parameter it
// does not know to the server, which refuses one it does not know. The
// password comes from PGPASSWORD or ~/.pgpass, which pgx reads, never from
// the URL, which any user sees in the process list.
func Parse(raw string) (Target, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return Target{}, fmt.Errorf("not a PostgreSQL URL: %v", err)
	}
	if _, ok := u.User.Password(); ok {
		return Target{}, errors.New("holds a password, which every user of the machine could read in the process list: give it in PGPASSWORD or ~/.pgpass")
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return Target{}, fmt.Errorf("not a PostgreSQL URL: %v", err)
	}
	name := q.Get("cluster")
	switch {
	case name == "":
		return Target{}, errors.New("names no cluster: add ?cluster=NAME, the schema that holds its recording")
	case !clusterName.MatchString(name) || strings.HasPrefix(name, "pg_"):
		return Target{}, fmt.Errorf("cluster %q is not a cluster name: 1 to 63 of a-z, 0-9, - and _, starting with a letter, not pg_", name)
	}
	display := u.Redacted()
	q.Del("cluster")
	u.RawQuery = q.Encode()
	config, err := pgx.ParseConfig(u.String())
	if err != nil {
		return Target{}, fmt.Errorf("not a PostgreSQL URL: %v", err)
	}
	return Target{Cluster: name, Display: display, config: config}, nil
}

// Redact is raw with its password, if any, masked, for a message.
func Redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "the URL given"
	}
	return u.Redacted()
}

// Schema is the cluster's schema, quoted for SQL.
func (t Target) Schema() string { return pgx.Identifier{t.Cluster}.Sanitize() }

// Open opens a pool of connections to the database whose statements find
// the cluster's tables, and only those, without naming the schema:
// search_path is the cluster's schema alone. readOnly makes every
// transaction of theirs read-only, so that the server refuses any write.
// It connects once, so that a refused connection or a wrong password is
// said at once.
func (t Target) Open(ctx context.Context, readOnly bool) (*sql.DB, error) {
	config := t.config.Copy()
	config.RuntimeParams["search_path"] = t.Schema()
	if readOnly {
		config.RuntimeParams["default_transaction_read_only"] = "on"
	}
	db := sql.OpenDB(connector(*config))
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("connect: %w", Short(err))
	}
	return db, nil
}

// SchemaExists says whether the cluster's schema is in the database.
func (t Target) SchemaExists(ctx context.Context, db *sql.DB) (bool, error) {
	var n int
	err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM pg_namespace WHERE nspname = ?`, t.Cluster).Scan(&n)
	return n > 0, err
}

// Tables counts the tables of the cluster's schema named names, or all
// of them when none are named.
func Tables(ctx context.Context, db *sql.DB, names ...string) (int, error) {
	q := `SELECT COUNT(*) FROM pg_tables WHERE schemaname = current_schema()`
	args := []any{}
	if len(names) > 0 {
		q += ` AND tablename IN (?` + strings.Repeat(", ?", len(names)-1) + `)`
		for _, n := range names {
			args = append(args, n)
		}
	}
	var n int
	err := db.QueryRowContext(ctx, q, args...).Scan(&n)
	return n, err
}

// Size is the bytes of the cluster's tables, their indexes and TOAST
// tables (PostgreSQL's pg_total_relation_size, which kine's pgsql driver
// reports as its DB size), or 0 when they cannot be read.
func Size(ctx context.Context, db *sql.DB) int64 {
	var n sql.NullInt64
	db.QueryRowContext(ctx, `SELECT SUM(pg_total_relation_size(c.oid)) FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relkind = 'r'`).Scan(&n)
	return n.Int64
}

// Package record writes a recording of an etcd: a SQLite file in kine's
// schema (the table and indexes kine v0.17.5 creates), so that the one
// reader of kine's files (etcdview.KineFile, --db) reads it, and kine itself
// could serve it over the etcd API. It holds a snapshot of a prefix at the
// revision the recording started, then every change the resuming watch
// (etcdview.Source.Watch) delivers, one transaction a batch.
//
// How revisions become rows. kine's table is a log of one row per revision,
// its id the revision; etcd writes one key a revision but in a txn, which
// writes several keys in one revision. A row's id is etcd's revision, so
// that every revision a recording shows is the one etcd gave and
// kube-apiserver put in each object's resourceVersion (kube-apiserver
// writes one key a revision, so a recording of Kubernetes is exact). A
// revision that wrote n keys below the prefix takes n ids: the first key
// its own revision, the others the ids after it, and every later row is
// shifted by as many (id = revision + shift, the shift only grows). The
// keys a gap deleted, whose revisions are lost, take ids of the gap that
// no row holds (the revisions of the writes it lost), and shift the rows
// after it only when there are too few. No revision is merged or lost, the
// order of the writes is kept, and etcdscope_revisions holds etcd's
// revision of every row, with the time it arrived.
//
// Snapshot rows are the keys as etcd holds them at the start revision S,
// each at the id of its last write (its ModRevision): created when that
// write created it, else an update whose create_revision is etcd's and
// whose previous row is not in the file. The row kine keeps its
// compaction revision in (compact_rev_key) says S: before it the file holds
// only the snapshot's rows, as a kine file holds only what compaction left.
//
// Size. Written as kine writes its files, a recording was 3.70 bytes of file
// per byte of the keys and values it holds (1.81 for the bench fill's
// stream of TestAFileHoldsLittleMoreThanItsKeysAndValues): old_value
// repeats the previous value in every update and deletion row, kine's six
// indexes repeat each row's name or id, etcdscope_revisions held a row for
// every row, and 4 KiB pages hold two or three rows of a Pod's size and
// leave the rest. So a recording leaves old_value NULL (the row before is
// in the file: KineFile's replay takes its value), writes a row of
// etcdscope_revisions only where the revision is not the id or the time
// changed (once a transaction), and has 32 KiB pages. And it keeps none of
// kine's indexes: the one on names alone, the least a writer needs to find
// a key's last row, was 0.19-0.22 bytes per byte held for values of 300
// bytes (an entry a row, its pages split at random), where the goal is
// 1.2 in all. etcdscope_keys holds each key's last row instead, an entry
// a key: a cluster writes the same keys again and again (leases, status),
// and the bench's writers some 400k revisions of 16,000 keys. KineFile
// reads the names from the table itself, in the walk that reads the
// deletions (it read them from the table already), and kine serving a
// recording creates its indexes itself; its watch gives empty previous
// values.
package record

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/etcdscope/etcdscope/etcdview/internal/pgsql"
	_ "modernc.org/sqlite" // registers the driver "sqlite"
)

// kineSchema is kine v0.17.5's table (pkg/drivers/sqlite), without its
// indexes (see the package comment): kine creates them itself when it
// opens the file (its setup runs its CREATE INDEX IF NOT EXISTS). A
// partial index of one entry finds the row kine keeps its compaction
// revision in, which the writer and KineFile read at every start.
var kineSchema = []string{
	`CREATE TABLE IF NOT EXISTS kine (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT, created INTEGER, deleted INTEGER,
		create_revision INTEGER, prev_revision INTEGER, lease INTEGER, value BLOB, old_value BLOB)`,
	`CREATE INDEX IF NOT EXISTS etcdscope_compact_index ON kine (name) WHERE name = 'compact_rev_key'`,
}

// ownSchema is etcdscope's tables beside kine's, which kine ignores:
// etcd's revision of a row and when it arrived, for the rows whose
// revision is not their id or whose time is not the row's before (see
// tx.revision; NULL for the rows of a snapshot, written before the
// recording saw them), the gaps, the recording's own state (its prefix,
// and the revision it is whole up to), and the id of each key's last row
// (keysSchema).
var ownSchema = []string{
	`CREATE TABLE IF NOT EXISTS etcdscope_revisions (id INTEGER PRIMARY KEY, revision INTEGER NOT NULL, unix_nano INTEGER)`,
	`CREATE TABLE IF NOT EXISTS etcdscope_gaps (from_revision INTEGER NOT NULL, to_revision INTEGER NOT NULL,
		unix_nano INTEGER NOT NULL, written INTEGER NOT NULL, deleted INTEGER NOT NULL)`,
	`CREATE TABLE IF NOT EXISTS etcdscope_record (name TEXT PRIMARY KEY, value)`,
	keysSchema,
}

// keysSchema is the table of each key's last row, and whether it deletes
// the key: the row the writer's next row of the key follows (prevSQL),
// the file's live keys (liveKeys), and KineFile's listing of its last
// revision (kinePages.latest), which has no other index on names to read.
// A deleted key keeps its deletion row, as kine's table does.
const keysSchema = `CREATE TABLE IF NOT EXISTS etcdscope_keys (name TEXT PRIMARY KEY, id INTEGER NOT NULL, deleted INTEGER NOT NULL)
	WITHOUT ROWID`

// File is a recording open for writing, by this process alone.
type File struct {
	path   string
	db     *sql.DB
	lock   io.Closer // flock'ed file, or PostgreSQL's advisory lock (lockPG): a second recorder is refused
	prefix string
	// pg is the cluster's recording in PostgreSQL; nil for a file.
	pg *pgsql.Target
	// head is the etcd revision the file is whole up to; 0 before its
	// first snapshot.
	head int64
	// last is the largest id, shift the last row's id minus its etcd
	// revision (see the package comment).
	last, shift int64
	// Statements prepared for every transaction (see tx).
	taken, prev, row, rev, key *sql.Stmt
}

// Open opens the recording at path for writing, creating it, or resuming
// the one there. prefix must be the one the file was recorded with.
func Open(path, prefix string) (*File, error) {
	if pgsql.IsURL(path) {
		return openPG(path, prefix)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("--out %s: %w", path, err)
	}
	// A recording holds every value it saw, Secrets among them: it is made
	// readable by its owner alone, and a link (one another user could have
	// left in /tmp, to a file of the user's) is never followed.
	fi, err := os.Lstat(abs)
	fresh := errors.Is(err, os.ErrNotExist)
	switch {
	case err == nil && fi.Mode()&os.ModeSymlink != 0:
		return nil, fmt.Errorf("--out %s is a symbolic link: give the file it points to", path)
	case err == nil && !fi.Mode().IsRegular():
		return nil, fmt.Errorf("--out %s is not a regular file", path)
	}
	lock, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("--out %s: %w", path, err)
	}
	// SQLite locks with fcntl, which flock does not see: this lock is the
	// recorders' own.
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		lock.Close()
		return nil, fmt.Errorf("--out %s: another etcdscope record writes it", path)
	}
	// WAL, as kine runs SQLite: readers (--db) read beside the writer, and a
	// commit is one append to the log; synchronous=NORMAL loses no commit
	// to a killed process, only to a power cut. The log, which keeps the
	// size it once grew to (a trim's pages: see retain), is cut back to
	// 64 MiB after each checkpoint.
	q := "_pragma=synchronous(NORMAL)&_pragma=busy_timeout(10000)&_pragma=journal_size_limit(67108864)"
	dsn := (&url.URL{Scheme: "file", OmitHost: true, Path: abs, RawQuery: q}).String()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		lock.Close()
		return nil, fmt.Errorf("--out %s: %w", path, err)
	}
	// One connection: a transaction and the reads between its writes are
	// on it, and nothing else writes.
	db.SetMaxOpenConns(1)
	f := &File{path: path, db: db, lock: lock, prefix: prefix}
	if err := f.setup(context.Background()); err != nil {
		f.Close()
		return nil, fmt.Errorf("--out %s: %w", f.path, err)
	}
	return f.ready(fresh)
}

// ready loads the file and prepares its statements.
func (f *File) ready(fresh bool) (*File, error) {
	err := f.load(context.Background(), fresh)
	if err == nil {
		err = f.prepare(context.Background())
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("--out %s: %w", f.path, err)
	}
	return f, nil
}

// Close closes the file; SQLite then folds its log into it.
func (f *File) Close() error {
	err := f.db.Close()
	if f.lock != nil {
		f.lock.Close()
	}
	return err
}

// Path is the file's path as given.
func (f *File) Path() string { return f.path }

// Head is the etcd revision the file is whole up to.
func (f *File) Head() int64 { return f.head }

// load creates the schema in a new or empty file, or checks that the file
// is a recording of the same prefix and reads where it stands.
func (f *File) load(ctx context.Context, fresh bool) error {
	tables, err := f.tableCount(ctx)
	if err != nil {
		return sqliteError(err)
	}
	if fresh || tables == 0 {
		return f.create(ctx)
	}
	var prefix sql.NullString
	err = f.db.QueryRowContext(ctx, `SELECT value FROM etcdscope_record WHERE name = 'prefix'`).Scan(&prefix)
	switch {
	case err != nil && strings.Contains(err.Error(), "no such table"):
		return errors.New("is an SQLite file but no recording of etcdscope's: refusing to write to it")
	case errors.Is(err, sql.ErrNoRows):
		return errors.New("is a recording without its prefix: damaged")
	case err != nil:
		return sqliteError(err)
	case prefix.String != f.prefix:
		return fmt.Errorf("records the prefix %q, not %q: record it to another file", prefix.String, f.prefix)
	}
	if err := f.upgrade(ctx); err != nil {
		return sqliteError(err)
	}
	var head, last, lastRev sql.NullInt64
	err = f.db.QueryRowContext(ctx, `SELECT (SELECT value FROM etcdscope_record WHERE name = 'head'), (SELECT MAX(id) FROM kine),
		(SELECT revision FROM etcdscope_revisions WHERE id = (SELECT MAX(id) FROM kine))`).Scan(&head, &last, &lastRev)
	if err != nil {
		return sqliteError(err)
	}
	f.head, f.last = head.Int64, last.Int64
	// A last row without a revision of its own is at its revision.
	if lastRev.Valid {
		f.shift = f.last - lastRev.Int64
	}
	return nil
}

// upgrade gives a recording written before etcdscope_keys (with kine's
// index on names instead, which stays) that table, filled with the last
// row of each key, and the schema's other objects it lacks.
func (f *File) upgrade(ctx context.Context) error {
	has, err := f.hasKeys(ctx)
	if err != nil || has {
		return err
	}
	tx, err := f.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, s := range f.schema() {
		if _, err := tx.ExecContext(ctx, s); err != nil {
			return err
		}
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO etcdscope_keys (name, id, deleted)
		SELECT k.name, k.id, COALESCE(k.deleted, 0) FROM kine AS k JOIN
			(SELECT MAX(id) AS id FROM kine WHERE name IS NOT NULL AND name != 'compact_rev_key' GROUP BY name) AS m ON k.id = m.id`)
	if err != nil {
		return err
	}
	return tx.Commit()
}

// hasKeys says whether the recording has its table etcdscope_keys.
func (f *File) hasKeys(ctx context.Context) (bool, error) {
	if f.pg != nil {
		n, err := pgsql.Tables(ctx, f.db, "etcdscope_keys")
		return n > 0, err
	}
	var n int
	err := f.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_schema WHERE type = 'table' AND name = 'etcdscope_keys'`).Scan(&n)
	return n > 0, err
}

func (f *File) create(ctx context.Context) error {
	tx, err := f.db.BeginTx(ctx, nil)
	if err != nil {
		return sqliteError(err)
	}
	defer tx.Rollback()
	for _, s := range f.schema() {
		if _, err := tx.ExecContext(ctx, s); err != nil {
			return sqliteError(err)
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO etcdscope_record (name, value) VALUES ('prefix', ?)`, f.prefix); err != nil {
		return sqliteError(err)
	}
	return sqliteError(tx.Commit())
}

// sqliteError says in one line what SQLite found wrong with the file.
func sqliteError(err error) error {
	if err == nil {
		return nil
	}
	if msg := err.Error(); strings.Contains(msg, "not a database") || strings.Contains(msg, "malformed") {
		return fmt.Errorf("is not an SQLite file, or is damaged: %v", err)
	}
	return err
}

// Size is the bytes of the file and of its write-ahead log.
func (f *File) Size() int64 {
	if f.pg != nil {
		return pgsql.Size(context.Background(), f.db)
	}
	var n int64
	for _, p := range []string{f.path, f.path + "-wal"} {
		if fi, err := os.Stat(p); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// pageSize is a new file's page size. SQLite's 4 KiB pages hold two or
// three rows of 1-2 KiB (a Pod, a ReplicaSet) and leave the rest unused:
// 9% of the table of the bench fill's stream; 32 KiB leaves 1.5%, and
// 64 KiB no less in all, its index's pages, split at random, emptier.
const pageSize = 32768

// setup sets the page size of a new file (of one that has pages, SQLite
// keeps its own), then WAL, which fixes it: the driver runs a DSN's
// pragmas in the order of their names, WAL's first.
func (f *File) setup(ctx context.Context) error {
	if _, err := f.db.ExecContext(ctx, fmt.Sprintf(`PRAGMA page_size = %d`, pageSize)); err != nil {
		return sqliteError(err)
	}
	var mode string
	return sqliteError(f.db.QueryRowContext(ctx, `PRAGMA journal_mode = WAL`).Scan(&mode))
}

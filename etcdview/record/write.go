package record

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"
)

// row is one revision of one key to write, in etcd's terms.
type row struct {
	rev              int64 // etcd's revision
	key              string
	created, deleted bool
	createRev        int64 // etcd's, used when the file holds no live row of the key before
	lease            int64
	value            []byte
	at               time.Time // when it arrived; zero for a snapshot's row
}

// tx is one transaction of the file: a batch, or a snapshot.
type tx struct {
	f  *File
	tx *sql.Tx
	// last and shift as they will be once committed.
	last, shift int64
	// at is the arrival time the last row of etcdscope_revisions says.
	at time.Time
	// The statements of every row, prepared once for the file: SQLite
	// would compile each again, which costs as much as running it.
	taken, prev, row, rev, key *sql.Stmt
}

// The statements insert runs, a row at a time.
const (
	takenSQL = `SELECT COUNT(*) FROM kine WHERE id = ?`
	prevSQL  = `SELECT k.id, k.created, k.create_revision, k.deleted, k.lease FROM etcdscope_keys AS e JOIN kine AS k ON k.id = e.id
		WHERE e.name = ?`
	rowSQL = `INSERT INTO kine (id, name, created, deleted, create_revision, prev_revision, lease, value, old_value)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL)`
	revSQL = `INSERT INTO etcdscope_revisions (id, revision, unix_nano) VALUES (?, ?, ?)`
	// keySQL makes a row its key's last, unless the key has a later one
	// (a gap's deletion is placed among the ids of the gap).
	keySQL = `INSERT INTO etcdscope_keys (name, id, deleted) VALUES (?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET id = excluded.id, deleted = excluded.deleted WHERE excluded.id > etcdscope_keys.id`
)

// prepare prepares the statements of insert.
func (f *File) prepare(ctx context.Context) error {
	for _, p := range []struct {
		stmt **sql.Stmt
		q    string
	}{{&f.taken, takenSQL}, {&f.prev, prevSQL}, {&f.row, rowSQL}, {&f.rev, revSQL}, {&f.key, keySQL}} {
		var err error
		if *p.stmt, err = f.db.PrepareContext(ctx, p.q); err != nil {
			return err
		}
	}
	return nil
}

func (f *File) begin(ctx context.Context) (*tx, error) {
	t, err := f.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	return &tx{f: f, tx: t, last: f.last, shift: f.shift,
		taken: t.StmtContext(ctx, f.taken), prev: t.StmtContext(ctx, f.prev), row: t.StmtContext(ctx, f.row), rev: t.StmtContext(ctx, f.rev),
		key: t.StmtContext(ctx, f.key)}, nil
}

// commit commits the transaction, the file then whole up to etcd's
// revision head.
func (t *tx) commit(ctx context.Context, head int64) error {
	// The head as text: PostgreSQL's column is TEXT (it holds the prefix
	// too), SQLite's takes any type, and both read it back as a number.
	if _, err := t.tx.ExecContext(ctx, `INSERT INTO etcdscope_record (name, value) VALUES ('head', ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value`, strconv.FormatInt(head, 10)); err != nil {
		t.tx.Rollback()
		return err
	}
	// kine inserts its rows without an id, from the id column's sequence
	// in PostgreSQL (BIGSERIAL), which rows written with their ids do not
	// move: it is set past them, so that kine serving the recording
	// writes after its last row. SQLite's AUTOINCREMENT follows the
	// largest id written by itself.
	if t.f.pg != nil && t.last > 0 {
		if _, err := t.tx.ExecContext(ctx, `SELECT setval(pg_get_serial_sequence('kine', 'id'), ?)`, t.last); err != nil {
			t.tx.Rollback()
			return err
		}
	}
	if err := t.tx.Commit(); err != nil {
		return err
	}
	t.f.head, t.f.last, t.f.shift = head, t.last, t.shift
	return nil
}

func (t *tx) rollback() { t.tx.Rollback() }

// errTaken is a row's own id held by another row: a key of the same
// revision (a txn).
var errTaken = errors.New("id taken")

// appendRow writes r after every row: at the id of its revision, or after
// the last one when that is taken (see the package comment).
func (t *tx) appendRow(ctx context.Context, r row) error { return t.appendAt(ctx, r, r.rev) }

// appendAt writes r after every row as if its revision were rev: the rows
// of a snapshot that could not have their own ids, written at its
// revision.
func (t *tx) appendAt(ctx context.Context, r row, rev int64) error {
	id := max(rev+t.shift, t.last+1)
	if err := t.insert(ctx, id, r); err != nil {
		return err
	}
	t.shift = id - rev
	return nil
}

// placeRow writes r at the id of its revision, or fails with errTaken.
func (t *tx) placeRow(ctx context.Context, r row) error {
	id := r.rev + t.shift
	var n int
	if err := t.taken.QueryRowContext(ctx, id).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return errTaken
	}
	return t.insert(ctx, id, r)
}

// insert writes r at id as kine writes its rows (generic.insertSQL), and
// makes it its key's last: the previous row of the key (etcdscope_keys)
// is prev_revision (0 when none); an update or a deletion carries that
// row's create revision (its own id when it was the creation); a
// deletion has no value of its own, a creation no create_revision (the
// reader gives it its id). old_value, where kine repeats the value of the
// row before, is NULL: that row is in the file (see the package comment).
func (t *tx) insert(ctx context.Context, id int64, r row) error {
	name := storedName(r.key)
	// PostgreSQL's text holds UTF-8 alone, and kine keeps names in text
	// there too: a key of other bytes has no row in kine's schema.
	if t.f.pg != nil && !utf8.ValidString(name) {
		return fmt.Errorf("key %q is not UTF-8, which PostgreSQL's text (kine's name column) cannot hold: record this cluster into a SQLite file", name)
	}
	var prevID, prevCreateRev, prevLease sql.NullInt64
	var prevCreated, prevDeleted sql.NullBool
	err := t.prev.QueryRowContext(ctx, name).Scan(&prevID, &prevCreated, &prevCreateRev, &prevDeleted, &prevLease)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	live := prevID.Valid && !prevDeleted.Bool
	var createRev any
	switch {
	case r.created:
	case live && prevCreated.Bool:
		createRev = prevID.Int64
	case live && prevCreateRev.Int64 != 0:
		createRev = prevCreateRev.Int64
	default:
		createRev = r.createRev
	}
	var value any
	lease := r.lease
	switch {
	case !r.deleted:
		value = nonNil(r.value)
	case live && lease == 0:
		// A deletion carries the lease of the value it deleted, as
		// kine's delete row does; etcd's event has none.
		lease = prevLease.Int64
	}
	_, err = t.row.ExecContext(ctx, id, name, boolInt(r.created), boolInt(r.deleted), createRev, prevID.Int64, lease, value)
	if err != nil {
		return err
	}
	if _, err := t.key.ExecContext(ctx, name, id, boolInt(r.deleted)); err != nil {
		return err
	}
	t.last = max(t.last, id)
	return t.revision(ctx, id, r)
}

// revision writes the row of etcdscope_revisions that id needs: one when
// its etcd revision is not its id (a txn's keys, see the package comment),
// or when it arrived at another time than the row before (the first row of
// a transaction). A row without one is its own revision, and arrived when
// the row before it that has one did.
func (t *tx) revision(ctx context.Context, id int64, r row) error {
	var at any
	if !r.at.IsZero() && !r.at.Equal(t.at) {
		at, t.at = r.at.UnixNano(), r.at
	}
	if at == nil && id == r.rev {
		return nil
	}
	_, err := t.rev.ExecContext(ctx, id, r.rev, at)
	return err
}

// storedName is the row name of an etcd key. kine keeps its compaction
// revision in a row named compact_rev_key, the name of the key
// kube-apiserver compacts with; kine stores that key as
// compact_rev_key_apiserver, and so does a recording.
func storedName(key string) string {
	if key == "compact_rev_key" {
		return "compact_rev_key_apiserver"
	}
	return key
}

// nonNil is b as a BLOB: an empty value is an empty BLOB, not NULL.
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

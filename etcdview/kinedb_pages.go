package etcdview

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"os"
	"slices"
	"strings"

	"github.com/etcdscope/etcdscope/etcdview/internal/sqlitefile"
)

// kinePages reads kine's table and two of its indexes straight from the
// file's pages, for the reads that touch every row (the key index and the
// scan): modernc.org/sqlite steps about 1 µs a row, ten times SQLite's
// own, and those reads took 80-90% of ls -l's and du's time. SQL stays the
// reference (the tests read each file both ways) and the way of every
// other read, and of these ones wherever the pages cannot be trusted to
// say what SQL would: a row of a type kine does not write, a schema other
// than kine's, a file read with its write-ahead log.
type kinePages struct {
	fh    *os.File
	file  *sqlitefile.File
	table uint32
	// byName is the root of an index on (name) or (name, id), whose
	// entries end with the rowid; byID one on (id, deleted). 0: none.
	byName, byID uint32
	// latest is the root of a recording's etcdscope_keys (package
	// record): each name's last row, and whether it deletes the key, in
	// name order. 0: none.
	latest uint32
}

// errNotPaged says a read from the pages met what only SQL reads as kine
// expects it: the read is made again with SQL.
var errNotPaged = errors.New("read with SQL")

// kineColumns are kine's table's columns, in the order of its CREATE
// TABLE (kine's sqlite driver): the order of each row's record.
var kineColumns = []string{"id", "name", "created", "deleted", "create_revision", "prev_revision", "lease", "value", "old_value"}

// The columns' places in a row's record.
const (
	colID = iota
	colName
	colCreated
	colDeleted
	colCreateRev
	colPrevRev
	colLease
	colValue
)

// openPages opens the file's pages for reading when SQLite reads the same
// bytes (no write-ahead log read), and its schema is kine's as SQLite
// says it: the table with a rowid whose id is that rowid, and indexes
// over it in binary order. nil when not: SQL reads everything.
func openPages(ctx context.Context, db *sql.DB, path string, walRead bool) *kinePages {
	if walRead {
		return nil
	}
	fh, err := os.Open(path)
	if err != nil {
		return nil
	}
	p, err := pagesOf(ctx, db, fh)
	if err != nil {
		fh.Close()
		return nil
	}
	return p
}

func pagesOf(ctx context.Context, db *sql.DB, fh *os.File) (*kinePages, error) {
	fi, err := fh.Stat()
	if err != nil {
		return nil, err
	}
	file, err := sqlitefile.Open(fh, fi.Size())
	if err != nil {
		return nil, err
	}
	if err := checkKineTable(ctx, db); err != nil {
		return nil, err
	}
	objs, err := file.Schema()
	if err != nil {
		return nil, err
	}
	p := &kinePages{fh: fh, file: file}
	for _, o := range objs {
		switch {
		case o.Type == "table" && o.Name == "kine":
			p.table = o.Root
		case o.Type == "table" && o.Name == "etcdscope_keys" && o.Root != 0:
			if latestTable(ctx, db) {
				p.latest = o.Root
			}
		case o.Type != "index" || o.Table != "kine" || o.Root == 0:
		default:
			cols, err := indexColumns(ctx, db, "kine", o.Name)
			if err != nil {
				return nil, err
			}
			switch {
			case slices.Equal(cols, []string{"name"}), slices.Equal(cols, []string{"name", "id"}):
				p.byName = o.Root
			case slices.Equal(cols, []string{"id", "deleted"}):
				p.byID = o.Root
			}
		}
	}
	if p.table == 0 {
		return nil, errNotPaged
	}
	return p, nil
}

// checkKineTable says whether kine's table is a rowid table of kine's
// columns, in kine's order, its id the rowid (an INTEGER PRIMARY KEY).
func checkKineTable(ctx context.Context, db *sql.DB) error {
	withoutRowid, cols, err := tableColumns(ctx, db, "kine")
	if err != nil {
		return err
	}
	var names []string
	for _, c := range cols {
		if (c.name == "id") != (c.pk == 1 && strings.EqualFold(c.typ, "INTEGER")) {
			return errNotPaged
		}
		names = append(names, c.name)
	}
	if withoutRowid || !slices.Equal(names, kineColumns) {
		return errNotPaged
	}
	return nil
}

// latestTable says whether etcdscope_keys is a recording's: a table
// without rowid of (name, id, deleted), its name the primary key in
// binary order, whose records are those columns in that order.
func latestTable(ctx context.Context, db *sql.DB) bool {
	withoutRowid, cols, err := tableColumns(ctx, db, "etcdscope_keys")
	if err != nil || !withoutRowid {
		return false
	}
	var names []string
	for _, c := range cols {
		names = append(names, c.name)
	}
	key, err := indexColumns(ctx, db, "etcdscope_keys", "sqlite_autoindex_etcdscope_keys_1")
	return err == nil && slices.Equal(key, []string{"name"}) && slices.Equal(names, []string{"name", "id", "deleted"})
}

// tableColumn is one column of a table, as SQLite's table_info says it.
type tableColumn struct {
	name, typ string
	pk        int // its place in the primary key, from 1; 0: none
}

// tableColumns says whether the table has no rowid, and its columns in
// order.
func tableColumns(ctx context.Context, db *sql.DB, table string) (withoutRowid bool, cols []tableColumn, err error) {
	var wr int
	if err := db.QueryRowContext(ctx, `SELECT wr FROM pragma_table_list WHERE name = ? AND schema = 'main'`, table).Scan(&wr); err != nil {
		return false, nil, err
	}
	rows, err := db.QueryContext(ctx, `SELECT name, type, pk FROM pragma_table_info(?) ORDER BY cid`, table)
	if err != nil {
		return false, nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var c tableColumn
		if err := rows.Scan(&c.name, &c.typ, &c.pk); err != nil {
			return false, nil, err
		}
		cols = append(cols, c)
	}
	return wr != 0, cols, rows.Err()
}

// indexColumns are the key columns of the index of table, or nil when its
// entries are not in the order of the columns' bytes: partial, on an
// expression, descending or of another collation than BINARY.
func indexColumns(ctx context.Context, db *sql.DB, table, index string) ([]string, error) {
	var partial int
	if err := db.QueryRowContext(ctx, `SELECT partial FROM pragma_index_list(?) WHERE name = ?`, table, index).Scan(&partial); err != nil {
		return nil, err
	}
	rows, err := db.QueryContext(ctx, `SELECT name, desc, coll FROM pragma_index_xinfo(?) WHERE key = 1 ORDER BY seqno`, index)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var cols []string
	plain := partial == 0
	for rows.Next() {
		var name sql.NullString
		var desc int
		var coll string
		if err := rows.Scan(&name, &desc, &coll); err != nil {
			return nil, err
		}
		plain = plain && name.Valid && desc == 0 && coll == "BINARY"
		cols = append(cols, name.String)
	}
	if !plain {
		return nil, rows.Err()
	}
	return cols, rows.Err()
}

func (p *kinePages) close() error {
	if p == nil {
		return nil
	}
	return p.fh.Close()
}

// names walks the index on names: each entry's name (nil when NULL) and
// rowid, in the order of SQL's `ORDER BY name, id`.
func (p *kinePages) names(ctx context.Context, fn func(name []byte, id int64) error) error {
	if p.byName == 0 {
		return errNotPaged
	}
	var c canceled
	return p.file.Index(p.byName, func(r *sqlitefile.Record) error {
		if err := c.check(ctx); err != nil {
			return err
		}
		name, _, id, err := nameAndID(r)
		if err != nil {
			return err
		}
		return fn(name, id)
	})
}

// nameAndID are the name (TEXT, BLOB or NULL: bytes nil) and rowid of
// an entry of the index on names; errNotPaged for other types, which SQL
// reads.
func nameAndID(r *sqlitefile.Record) ([]byte, sqlitefile.Kind, int64, error) {
	n := r.Columns()
	if n < 2 {
		return nil, 0, 0, errNotPaged
	}
	name, kind, err := r.Bytes(0)
	if err != nil {
		return nil, kind, 0, err
	}
	id, ok, err := r.Int(n - 1)
	if err != nil {
		return nil, kind, 0, err
	}
	if !ok || !bytesOrNull(kind) {
		return nil, kind, 0, errNotPaged
	}
	return name, kind, id, nil
}

// deletions are the ids of the rows that delete their key, in order, from
// the index on (id, deleted), as SQL's `deleted != 0` picks them: NULL is
// not. A deleted of another type than kine writes (an integer) is read
// with SQL. The id is an INTEGER PRIMARY KEY: never NULL.
func (p *kinePages) deletions(ctx context.Context) ([]int64, error) {
	if p.byID == 0 {
		return nil, errNotPaged
	}
	var ids []int64
	var c canceled
	err := p.file.Index(p.byID, func(r *sqlitefile.Record) error {
		if err := c.check(ctx); err != nil {
			return err
		}
		// Int, not Column: a Value a column of every row was two
		// fifths of this walk.
		id, idOK, err := r.Int(0)
		if err != nil {
			return err
		}
		del, delOK, err := r.Int(1)
		if err != nil {
			return err
		}
		if !idOK || !delOK {
			return errNotPaged
		}
		if del != 0 {
			ids = append(ids, id)
		}
		return nil
	})
	return ids, err
}

// span reads with wk the records of [key, end) whose ids are in (lo, hi],
// newest first, as readSpan's SQL does.
func (p *kinePages) span(ctx context.Context, wk *sqlitefile.Walker, hi, lo int64, key, end string, got *spanRows) error {
	var c canceled
	return wk.Table(p.table, lo+1, hi, true, func(r *sqlitefile.Record) error {
		if err := c.check(ctx); err != nil {
			return err
		}
		// An INTEGER PRIMARY KEY is the rowid, and its column NULL.
		if id, _ := r.Kind(colID); id != sqlitefile.Null {
			return errNotPaged
		}
		name, nameKind, err := r.Bytes(colName)
		if err != nil {
			return err
		}
		valueKind, valueLen := r.Kind(colValue)
		if !bytesOrNull(nameKind) || !bytesOrNull(valueKind) {
			return errNotPaged
		}
		var ints [5]int64
		for i, c := range []int{colCreated, colDeleted, colCreateRev, colLease, colPrevRev} {
			v, ok, err := r.Int(c)
			if err != nil || !ok {
				// SQL's read says what is wrong with the column.
				return cmp.Or(err, errNotPaged)
			}
			ints[i] = v
		}
		rec := ScanRecord{Key: string(name), ModRevision: r.Rowid, CreateRevision: ints[2], Lease: ints[3],
			Size: int64(len(name)) + valueLen, Tombstone: ints[1] != 0, Retained: true}
		if !inRange(rec.Key, key, end) || kineInternal(name) {
			return nil
		}
		if ints[0] != 0 {
			rec.CreateRevision = rec.ModRevision
		}
		got.rows = append(got.rows, spanRow{rec: rec, prev: ints[4]})
		return nil
	})
}

// bytesOrNull says whether a value of kind k is of a type SQL reads as
// kine's bytes: a BLOB (what kine binds), TEXT, or NULL (none).
func bytesOrNull(k sqlitefile.Kind) bool {
	return k == sqlitefile.Blob || k == sqlitefile.Text || k == sqlitefile.Null
}

// canceled checks a walk's context every few thousand rows: a walk of a
// file of GBs ends soon after its command is interrupted.
type canceled struct{ rows int }

func (c *canceled) check(ctx context.Context) error {
	if c.rows++; c.rows%4096 == 0 {
		return ctx.Err()
	}
	return nil
}

// latestLive walks a recording's etcdscope_keys from key, and calls fn
// with each name in [key, end) whose last row is not a deletion: the keys
// that exist at the file's last revision, as live finds them there.
func (p *kinePages) latestLive(ctx context.Context, key, end string, fn func(key []byte)) error {
	var c canceled
	stop := errors.New("past the range")
	err := p.file.IndexFrom(p.latest, []byte(key), func(r *sqlitefile.Record) error {
		if err := c.check(ctx); err != nil {
			return err
		}
		name, kind, err := r.Bytes(0)
		if err != nil {
			return err
		}
		deleted, ok, err := r.Int(2)
		switch {
		case err != nil:
			return err
		case kind != sqlitefile.Text || !ok || r.Columns() != 3:
			// The writer binds text and integers: SQL reads anything else.
			return errNotPaged
		case end != "\x00" && string(name) >= end:
			return stop
		case deleted == 0 && !kineInternal(name):
			fn(name)
		}
		return nil
	})
	if errors.Is(err, stop) {
		return nil
	}
	return err
}

package sqlitefile

import (
	"bytes"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	_ "modernc.org/sqlite"
)

// writeDB makes an SQLite file with SQLite (modernc.org/sqlite, the
// reference) of the given page size, its table t holding every storage
// class, values that spill onto overflow pages, rows written before a
// column was added, and an index on (a, b) whose keys spill too.
func writeDB(t testing.TB, pageSize int, autoVacuum bool, rows int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "t.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	stmts := []string{fmt.Sprintf("PRAGMA page_size = %d", pageSize)}
	if autoVacuum {
		stmts = append(stmts, "PRAGMA auto_vacuum = FULL")
	}
	stmts = append(stmts, "CREATE TABLE t (id INTEGER PRIMARY KEY, a, b, c)", "CREATE INDEX t_ab ON t (a, b)")
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(s, err)
		}
	}
	rnd := rand.New(rand.NewPCG(uint64(pageSize), uint64(rows)))
	value := func() any {
		switch rnd.IntN(8) {
		case 0:
			return nil
		case 1:
			return rnd.Int64N(3) // the serial types of 0 and 1
		case 2:
			return int64(rnd.Uint64()) >> rnd.IntN(64)
		case 3:
			return rnd.NormFloat64()
		case 4:
			return strings.Repeat("ü", rnd.IntN(20))
		case 5:
			return bytes.Repeat([]byte{byte(rnd.IntN(256))}, rnd.IntN(3*pageSize))
		case 6:
			return fmt.Sprintf("name-%05d", rnd.IntN(rows))
		}
		return strings.Repeat("long text ", rnd.IntN(pageSize/3))
	}
	insert := func(q string, n int) {
		tx, err := db.Begin()
		if err != nil {
			t.Fatal(err)
		}
		for range n {
			args := []any{value(), value(), value()}[:strings.Count(q, "?")]
			if _, err := tx.Exec(q, args...); err != nil {
				t.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	insert("INSERT INTO t (a, b) VALUES (?, ?)", rows/2)
	if _, err := db.Exec("ALTER TABLE t ADD COLUMN d"); err != nil {
		t.Fatal(err)
	}
	insert("INSERT INTO t (a, b, d) VALUES (?, ?, ?)", rows-rows/2)
	if _, err := db.Exec("DELETE FROM t WHERE id % 7 = 3"); err != nil {
		t.Fatal(err)
	}
	return path
}

func openFile(t testing.TB, path string) *File {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fh.Close() })
	fi, err := fh.Stat()
	if err != nil {
		t.Fatal(err)
	}
	f, err := Open(fh, fi.Size())
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// asSQL is v as database/sql gives it from modernc.org/sqlite.
func asSQL(v Value) any {
	switch v.Kind {
	case Integer:
		return v.Int
	case Float:
		return v.Float
	case Text:
		return string(v.Bytes)
	case Blob:
		return bytes.Clone(v.Bytes)
	}
	return nil
}

// query reads every row of q, each column as database/sql gives it.
func query(t *testing.T, path, q string, args ...any) [][]any {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&immutable=1")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out [][]any
	for rows.Next() {
		row := make([]any, len(cols))
		dest := make([]any, len(cols))
		for i := range row {
			dest[i] = &row[i]
		}
		if err := rows.Scan(dest...); err != nil {
			t.Fatal(err)
		}
		for i, v := range row {
			if b, ok := v.([]byte); ok && len(b) == 0 {
				row[i] = []byte{} // a zero-length blob reads as nil or empty
			}
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// root is the root page of the object named name.
func root(t *testing.T, f *File, name string) uint32 {
	t.Helper()
	objs, err := f.Schema()
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if o.Name == name {
			return o.Root
		}
	}
	t.Fatalf("no %s in the schema %+v", name, objs)
	return 0
}

// readTable is every row the page reader gives of the table at root in
// [lo, hi]: its rowid, then its columns a, b, c, d.
func readTable(t *testing.T, f *File, root uint32, lo, hi int64, desc bool) [][]any {
	t.Helper()
	var out [][]any
	err := f.Table(root, lo, hi, desc, func(r *Record) error {
		row := []any{r.Rowid}
		for i := 1; i <= 4; i++ {
			v, err := r.Column(i, true)
			if err != nil {
				return err
			}
			if err := sameByEveryAccessor(r, i, v); err != nil {
				return err
			}
			row = append(row, asSQL(v))
		}
		out = append(out, row)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sameByEveryAccessor says whether Kind, Bytes and Int read column i of r
// as Column read it, v.
func sameByEveryAccessor(r *Record, i int, v Value) error {
	kind, n := r.Kind(i)
	b, bkind, err := r.Bytes(i)
	if err != nil {
		return err
	}
	n2, ok, err := r.Int(i)
	if err != nil {
		return err
	}
	bytesKind := v.Kind == Text || v.Kind == Blob
	intKind := v.Kind == Integer || v.Kind == Null
	switch {
	case kind != v.Kind || bkind != v.Kind:
		return fmt.Errorf("column %d: Kind %v, Bytes' kind %v; Column's %v", i, kind, bkind, v.Kind)
	case bytesKind && (n != v.Len || !bytes.Equal(b, v.Bytes) || b == nil):
		return fmt.Errorf("column %d: Kind's length %d, Bytes %q; Column's %d, %q", i, n, b, v.Len, v.Bytes)
	case !bytesKind && (n != 0 || b != nil):
		return fmt.Errorf("column %d of kind %v: Kind's length %d, Bytes %q", i, v.Kind, n, b)
	case ok != intKind || intKind && n2 != v.Int:
		return fmt.Errorf("column %d of kind %v: Int %d, %v; Column's %d", i, v.Kind, n2, ok, v.Int)
	}
	return nil
}

// TestTablesAndIndexesReadAsSQLiteReadsThem writes files with SQLite, of
// the smallest, the default and the largest page sizes, with and without
// auto-vacuum's pointer maps, and reads every row, spans of rowids both
// ways, and every index entry: each as SQLite gives it.
func TestTablesAndIndexesReadAsSQLiteReadsThem(t *testing.T) {
	for _, tc := range []struct {
		pageSize   int
		autoVacuum bool
		rows       int
	}{{512, false, 3000}, {512, true, 3000}, {4096, false, 3000}, {65536, false, 200}} {
		t.Run(fmt.Sprintf("page %d auto-vacuum %v", tc.pageSize, tc.autoVacuum), func(t *testing.T) {
			t.Parallel()
			path := writeDB(t, tc.pageSize, tc.autoVacuum, tc.rows)
			f := openFile(t, path)
			if f.PageSize() != tc.pageSize {
				t.Errorf("page size %d, want %d", f.PageSize(), tc.pageSize)
			}
			tab := root(t, f, "t")
			want := query(t, path, "SELECT id, a, b, c, d FROM t ORDER BY id")
			if len(want) < tc.rows/2 {
				t.Fatalf("SQLite reads %d rows of the %d written", len(want), tc.rows)
			}
			if got := readTable(t, f, tab, math.MinInt64, math.MaxInt64, false); !reflect.DeepEqual(got, want) {
				t.Errorf("the table: %d rows, differing from SQLite's %d", len(got), len(want))
			}
			for _, span := range [][2]int64{{1, 1}, {100, 900}, {-5, 3}, {int64(tc.rows) - 10, int64(tc.rows) + 10}, {7, 6}} {
				want := query(t, path, "SELECT id, a, b, c, d FROM t WHERE id >= ? AND id <= ? ORDER BY id DESC", span[0], span[1])
				if got := readTable(t, f, tab, span[0], span[1], true); !reflect.DeepEqual(got, want) {
					t.Errorf("rowids %v, highest first: %d rows, SQLite's %d", span, len(got), len(want))
				}
			}
			want = query(t, path, "SELECT a, b, id FROM t INDEXED BY t_ab ORDER BY a, b, id")
			got, err := readIndex(f, root(t, f, "t_ab"), nil)
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("the index: %d entries, %v; SQLite's %d", len(got), err, len(want))
			}
		})
	}
}

// readIndex is every entry the page reader gives of the index at root, from
// the first whose first column sorts at or after from when from is not nil.
func readIndex(f *File, root uint32, from []byte) ([][]any, error) {
	var got [][]any
	read := func(r *Record) error {
		var row []any
		for i := range r.Columns() {
			v, err := r.Column(i, true)
			if err != nil {
				return err
			}
			row = append(row, asSQL(v))
		}
		got = append(got, row)
		return nil
	}
	if from == nil {
		return got, f.Index(root, read)
	}
	return got, f.IndexFrom(root, from, read)
}

// TestAnIndexReadFromAKeyStartsWhereSQLiteDoes reads an index whose first
// column holds every storage class, and text that spills onto overflow
// pages, from keys before, among, between and after its entries: the
// entries SQL's `WHERE a >= ?` gives, in its order.
func TestAnIndexReadFromAKeyStartsWhereSQLiteDoes(t *testing.T) {
	for _, pageSize := range []int{512, 4096} {
		t.Run(fmt.Sprintf("page %d", pageSize), func(t *testing.T) {
			t.Parallel()
			path := writeDB(t, pageSize, false, 3000)
			f := openFile(t, path)
			ix := root(t, f, "t_ab")
			froms := []string{"", "long", "long text long text", "name-", "name-00100", "name-01500x", "name-99999", "ü", "üü", "\xff"}
			for _, from := range froms {
				want := query(t, path, "SELECT a, b, id FROM t INDEXED BY t_ab WHERE a >= ? ORDER BY a, b, id", from)
				got, err := readIndex(f, ix, []byte(from))
				if err != nil || !reflect.DeepEqual(got, want) {
					t.Errorf("the index from %q: %d entries, %v; SQLite's %d", from, len(got), err, len(want))
				}
				if from == "name-00100" && len(want) < 100 {
					t.Errorf("from %q: SQLite gives %d entries, too few to tell", from, len(want))
				}
			}
		})
	}
}

// TestAColumnsLengthNeedsNoRead: the length of a value is in the record's
// header, so a walk that does not load the value never reads its
// overflow pages, which here are zeroed.
func TestAColumnsLengthNeedsNoRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"PRAGMA page_size = 512", "CREATE TABLE t (id INTEGER PRIMARY KEY, name, value)"} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Exec("INSERT INTO t (name, value) VALUES ('k', ?)", make([]byte, 100_000)); err != nil {
		t.Fatal(err)
	}
	db.Close()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The table (one leaf, its root) is page 2; from page 3 on,
	// the file is the value's overflow chain.
	clear(data[2*512:])
	f, err := Open(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	walk := func(load bool) (Value, error) {
		var got Value
		err := f.Table(2, math.MinInt64, math.MaxInt64, false, func(r *Record) error {
			name, err := r.Column(1, true)
			if err != nil || string(name.Bytes) != "k" {
				return fmt.Errorf("name %q, %v", name.Bytes, err)
			}
			got, err = r.Column(2, load)
			return err
		})
		return got, err
	}
	if v, err := walk(false); err != nil || v.Kind != Blob || v.Len != 100_000 {
		t.Errorf("the value's length: %+v, %v; want a blob of 100000 bytes", v, err)
	}
	if _, err := walk(true); !errors.Is(err, ErrDamaged) {
		t.Errorf("the value loaded from a zeroed overflow chain: %v, want it damaged", err)
	}
}

// TestAFileNotOfThisReaderIsRefused: a text encoding other than UTF-8 is
// not read, and a header whose page count is stale is not trusted.
func TestAFileNotOfThisReaderIsRefused(t *testing.T) {
	data, err := os.ReadFile(writeDB(t, 512, false, 10))
	if err != nil {
		t.Fatal(err)
	}
	for name, mutate := range map[string]func([]byte){
		"UTF-16le":         func(b []byte) { b[59] = 2 },
		"stale page count": func(b []byte) { b[95]++ },
	} {
		b := bytes.Clone(data)
		mutate(b)
		if _, err := Open(bytes.NewReader(b), int64(len(b))); !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s: %v, want it not read", name, err)
		}
	}
	b := bytes.Clone(data)
	b[16], b[17] = 0x03, 0x00 // 768
	if _, err := Open(bytes.NewReader(b), int64(len(b))); !errors.Is(err, ErrDamaged) || err.Error() != "its header gives a page size of 768 bytes" {
		t.Errorf("a page size not a power of two: %v", err)
	}
}

// FuzzWalks mutates a small file SQLite wrote and walks every b-tree its
// schema names, both ways and from a key, loading every column with every
// accessor: whatever the bytes, a walk ends, with rows or an error, never
// panics, and the accessors agree.
func FuzzWalks(f *testing.F) {
	for _, pageSize := range []int{512, 1024} {
		data, err := os.ReadFile(writeDB(f, pageSize, pageSize == 1024, 60))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Open(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		objs, err := file.Schema()
		if err != nil {
			return
		}
		load := func(r *Record) error {
			for i := range r.Columns() + 1 {
				v, err := r.Column(i, true)
				if err != nil {
					return err
				}
				if err := sameByEveryAccessor(r, i, v); err != nil {
					t.Error(err)
				}
			}
			return nil
		}
		for _, o := range objs {
			file.Table(o.Root, math.MinInt64, math.MaxInt64, false, load)
			file.Table(o.Root, 10, 40, true, load)
			file.Index(o.Root, load)
			file.IndexFrom(o.Root, []byte("name-00030"), load)
		}
	})
}

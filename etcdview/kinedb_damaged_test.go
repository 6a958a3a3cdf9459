package etcdview

import (
	"crypto/sha256"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/etcdscope/etcdscope/embedded/etcdtest"
)

// smallKineFile is a state.db of a real kine, stopped: configmaps of a few
// bytes to several pages (SQLite's overflow pages), some rewritten, some
// deleted.
func smallKineFile(t *testing.T) string {
	t.Helper()
	k := etcdtest.StartKine(t, etcdtest.KineOptions{})
	writeConfigMaps(t, k.Client(t), 60, 9000)
	k.Stop()
	return k.DB
}

func readKine(t *testing.T, path string) (string, error) {
	f, err := OpenKineFile(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	return readSource(t, f)
}

// TestADamagedOrCutKineFileIsAnErrorNeverACrash cuts a real state.db at
// every half page and flips bytes anywhere in it: a copy cut short is said
// to be, a damaged one reads, or fails in one line; none crashes.
func TestADamagedOrCutKineFileIsAnErrorNeverACrash(t *testing.T) {
	whole := smallKineFile(t)
	data, err := os.ReadFile(whole)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := readKine(t, whole); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	const page = 4096 // kine leaves SQLite's default
	for cut := 0; cut < len(data); cut += page / 2 {
		path := filepath.Join(dir, fmt.Sprintf("cut-%d", cut))
		if err := os.WriteFile(path, data[:cut], 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := OpenOffline(path, FileOptions{NoIndexFile: true})
		switch {
		case cut < sqliteHeaderSize && (err == nil || !strings.Contains(err.Error(), "too short for an SQLite file") && !strings.Contains(err.Error(), "not an etcd data file")):
			t.Errorf("a copy cut at %d: %v, want it said too short", cut, err)
		case cut >= sqliteHeaderSize && (err == nil || !strings.Contains(err.Error(), fmt.Sprintf("is cut short: the file is %d bytes, its header says %d", cut, len(data)))):
			t.Errorf("a copy cut at %d of %d bytes: %v, want it said cut short", cut, len(data), err)
		}
	}
	rnd := rand.New(rand.NewPCG(24, 4))
	failed := 0
	for i := range 150 {
		damaged := slices.Clone(data)
		for range 1 + i%8 {
			damaged[sqliteHeaderSize+rnd.IntN(len(data)-sqliteHeaderSize)] ^= byte(1 + rnd.IntN(255))
		}
		path := filepath.Join(dir, fmt.Sprintf("damaged-%d", i))
		if err := os.WriteFile(path, damaged, 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := readKine(t, path)
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("damaged copy %d: an error of more than a line: %q", i, err)
		}
		if err != nil {
			failed++
		}
		os.Remove(path)
	}
	t.Logf("%d of 150 damaged copies failed with an error, the others read", failed)
	if failed == 0 {
		t.Error("no damaged copy failed: the damage never reached what is read")
	}
}

// TestWhatIsNotAKineFileIsNamed: an SQLite file of another schema, and a
// kine file with a row of the wrong types among good ones, each say what
// is wrong; the good rows of the second still read.
func TestWhatIsNotAKineFileIsNamed(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "other.db")
	writeSQLite(t, other, `CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)`, `INSERT INTO notes(body) VALUES ('hello')`)
	if _, err := OpenOffline(other, FileOptions{}); err == nil || err.Error() != "--db "+other+" is an SQLite file without kine's table: not k3s' state.db" {
		t.Errorf("an SQLite file of another schema: %v", err)
	}
	bad := filepath.Join(dir, "state.db")
	data, err := os.ReadFile(smallKineFile(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, data, 0o600); err != nil {
		t.Fatal(err)
	}
	const key = "/registry/configmaps/ns-1/cm-005"
	writeSQLite(t, bad, `UPDATE kine SET lease = 'soon' WHERE name = '`+key+`'`)
	f := openKine(t, bad)
	kv, err := f.Get(testCtx(t), key, 0)
	if err == nil || !strings.HasPrefix(err.Error(), "value of "+key+" at revision ") || !strings.HasSuffix(err.Error(), "kine's column lease holds string soon, not what kine writes") {
		t.Errorf("Get of the malformed row: %+v, %v", kv, err)
	}
	if _, err := f.Get(testCtx(t), "/registry/configmaps/ns-2/cm-006", 0); err != nil {
		t.Errorf("Get of a good row beside it: %v", err)
	}
	if n, err := f.Count(testCtx(t), "/registry/configmaps/", 0); err != nil || n == 0 {
		t.Errorf("Count beside the malformed row: %d, %v", n, err)
	}
}

// writeSQLite runs statements on the SQLite file at path, read-write.
func writeSQLite(t *testing.T, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// TestAKineFileIsNeverWritten reads everything of a state.db, and finds the
// directory as it was: the file unchanged, no -wal, -shm or index beside
// it. A write through the source's own connection is refused.
func TestAKineFileIsNeverWritten(t *testing.T) {
	path := smallKineFile(t)
	before := dirState(t, filepath.Dir(path))
	f := openKine(t, path)
	if _, err := readSource(t, f); err != nil {
		t.Fatal(err)
	}
	for b := range f.Watch(testCtx(t), "", WatchOptions{Rev: 1}) {
		if b.Err != nil {
			t.Fatal(b.Err)
		}
	}
	if _, err := f.db.Exec(`DELETE FROM kine`); err == nil || !strings.Contains(err.Error(), "readonly") {
		t.Errorf("a write through the file's connection: %v, want it refused as read-only", err)
	}
	f.Close()
	if after := dirState(t, filepath.Dir(path)); !slices.Equal(after, before) {
		t.Errorf("the directory was %v, and is %v after the reads", before, after)
	}
}

// dirState is each file of dir with its size, time and a hash of its bytes.
func dirState(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var st []string
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		if e.Name() == "kine.log" {
			continue
		}
		st = append(st, fmt.Sprintf("%s %d %v %x", e.Name(), fi.Size(), fi.ModTime().UnixNano(), sha256.Sum256(b)))
	}
	return st
}

// TestAKineFileOpensBesideARunningKine: beside a running kine the file
// reads; beside a writer that keeps its newest writes in a write-ahead log,
// as k3s runs kine (_journal_mode=WAL), the file reads as of its last
// checkpoint, says so, and leaves the log and its index as they were.
func TestAKineFileOpensBesideARunningKine(t *testing.T) {
	k := etcdtest.StartKine(t, etcdtest.KineOptions{})
	cli := k.Client(t)
	var last int64
	for i := range 50 {
		last = put(t, cli, fmt.Sprintf("/registry/configmaps/default/cm-%d", i), "v")
	}
	f := openKine(t, k.DB)
	if _, err := readSource(t, f); err != nil {
		t.Errorf("reads beside a running kine: %v", err)
	}
	if st, _ := f.Status(testCtx(t)); st.Revision != last {
		t.Errorf("beside a running kine that wrote revision %d: %q, revision %d", last, st.Description, st.Revision)
	}
	k.Stop()
	path := filepath.Join(t.TempDir(), "state.db")
	data, err := os.ReadFile(k.DB)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	w, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.SetMaxOpenConns(1)
	for _, s := range []string{`PRAGMA journal_mode=WAL`, `PRAGMA wal_autocheckpoint=0`,
		`INSERT INTO kine(name, created, deleted, create_revision, prev_revision, lease, value, old_value) VALUES ('/registry/configmaps/default/new', 1, 0, 0, 0, 0, 'v', NULL)`} {
		if _, err := w.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	before := dirState(t, filepath.Dir(path))
	f = openKine(t, path)
	st, err := f.Status(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(st.Description, "as of its last checkpoint: ") || !strings.Contains(st.Description, " of newer writes in state.db-wal not read (kine is running, or stopped before a checkpoint)") || st.Revision != last {
		t.Errorf("beside a writer with a log: %q, revision %d, want %d and the log said unread", st.Description, st.Revision, last)
	}
	if _, err := readSource(t, f); err != nil {
		t.Errorf("reads beside a writer with a log: %v", err)
	}
	if after := dirState(t, filepath.Dir(path)); !slices.Equal(after, before) {
		t.Errorf("beside a writer with a log, the directory was %v, and is %v after the reads", before, after)
	}
}

// FuzzSQLiteHeader: any first 100 bytes parse to a header whose page size
// is one SQLite allows, or to an error; never a panic.
func FuzzSQLiteHeader(f *testing.F) {
	hdr := []byte(sqliteMagic + strings.Repeat("\x00", sqliteHeaderSize-len(sqliteMagic)))
	hdr[16], hdr[17] = 0x10, 0x00
	f.Add(hdr)
	f.Add([]byte(sqliteMagic))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := parseSQLiteHeader(b)
		if err == nil && (h.pageSize < 512 || h.pageSize > 65536 || h.pageSize&(h.pageSize-1) != 0) {
			t.Errorf("page size %d accepted", h.pageSize)
		}
	})
}

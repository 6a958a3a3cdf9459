package etcdview

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/embedded"
	"github.com/etcdscope/etcdscope/embedded/etcdtest"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// smallKineFile is a state.db of a real kine, stopped: configmaps of a few
// bytes to several pages (SQLite's overflow pages), some rewritten, some
// deleted.
func smallKineFile(t *testing.T) string {
	t.Helper()
	k := etcdtest.StartKine(t, etcdtest.KineOptions{})
	writeConfigMaps(t, k.Client(t), 60, 9000)
	k.Stop()
	// kine opens the file with a write-ahead log, and a kine ended by a
	// signal does not always fold it into the file: the tests copy the
	// file alone, so the log is folded here, as SQLite does when the last
	// connection closes.
	writeSQLite(t, k.DB, `PRAGMA wal_checkpoint(TRUNCATE)`)
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

// dirState is each file of dir (of only, when given) with its size, time
// and a hash of its bytes; kine's log aside.
func dirState(t *testing.T, dir string, only ...string) []string {
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
		if e.Name() == "kine.log" || len(only) > 0 && !slices.Contains(only, e.Name()) {
			continue
		}
		b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		st = append(st, fmt.Sprintf("%s %d %v %x", e.Name(), fi.Size(), fi.ModTime().UnixNano(), sha256.Sum256(b)))
	}
	return st
}

// TestAKineFileOpensBesideARunningKine: beside a kine that runs as k3s runs
// it, with a write-ahead log (_journal_mode=WAL), where its newest writes
// are, the file reads them, maps the log's index read-only, and leaves the
// file and the log as they were; a copy of the file and its log without
// the log's index reads as of its last checkpoint, and says so.
func TestAKineFileOpensBesideARunningKine(t *testing.T) {
	path, last := kineWithLog(t)
	dir := filepath.Dir(path)
	before := dirState(t, dir, "state.db", "state.db-wal")
	f := openKine(t, path)
	st, err := f.Status(testCtx(t))
	if err != nil || !strings.Contains(st.Description, " and its write-ahead log (") || st.Revision != last {
		t.Errorf("beside a running kine: %q, revision %d, %v: want %d, read with the log", st.Description, st.Revision, err, last)
	}
	if _, err := readSource(t, f); err != nil {
		t.Errorf("reads beside a running kine: %v", err)
	}
	if m := shmMappings(t, path+"-shm"); len(m) == 0 || slices.ContainsFunc(m, func(perm string) bool { return perm[1] == 'w' }) {
		t.Errorf("the log's index is mapped %v: want it mapped, and read-only", m)
	}
	f.Close()
	if after := dirState(t, dir, "state.db", "state.db-wal"); !slices.Equal(after, before) {
		t.Errorf("beside a running kine, the file and its log were %v, and are %v after the reads", before, after)
	}

	copied := filepath.Join(t.TempDir(), "state.db")
	for _, ext := range []string{"", "-wal"} {
		data, err := os.ReadFile(path + ext)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(copied+ext, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	before = dirState(t, filepath.Dir(copied))
	f = openKine(t, copied)
	st, _ = f.Status(testCtx(t))
	if !strings.Contains(st.Description, ", as of its last checkpoint: ") || !strings.HasSuffix(st.Description, " of newer writes in state.db-wal not read (no state.db-shm to read them with)") || st.Revision >= last {
		t.Errorf("a copy of the file and its log: %q, revision %d: want one before %d, the log said unread", st.Description, st.Revision, last)
	}
	if _, err := readSource(t, f); err != nil {
		t.Errorf("reads of a copy of the file and its log: %v", err)
	}
	if after := dirState(t, filepath.Dir(copied)); !slices.Equal(after, before) {
		t.Errorf("beside a copy of the file and its log, the directory was %v, and is %v after the reads", before, after)
	}
}

// kineWithLog runs kine on a new state.db as k3s runs it, with a
// write-ahead log, writes configmaps, and returns the file and the
// revision of the last write, kine still running.
func kineWithLog(t *testing.T) (string, int64) {
	t.Helper()
	bin := etcdtest.KineBinary(t)
	dir := t.TempDir()
	ports, err := embedded.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", ports[0])
	db := filepath.Join(dir, "state.db")
	log, err := os.Create(filepath.Join(dir, "kine.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	// k3s' DSN (its cmds' default datastore endpoint).
	cmd := exec.Command(bin, "--listen-address", addr, "--metrics-bind-address", "0",
		"--endpoint", "sqlite://"+db+"?_journal_mode=WAL&cache=shared&_busy_timeout=30000&_txlock=immediate")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{addr}, DialTimeout: 2 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	var last int64
	deadline := time.Now().Add(20 * time.Second)
	for i := 0; i < 50; {
		ctx, cancel := context.WithTimeout(testCtx(t), time.Second)
		resp, err := cli.Put(ctx, fmt.Sprintf("/registry/configmaps/default/cm-%d", i), "v")
		cancel()
		switch {
		case err == nil:
			last, i = resp.Header.Revision, i+1
		case time.Now().After(deadline):
			t.Fatalf("kine did not take a write in 20 s: %v", err)
		}
	}
	return db, last
}

// shmMappings are the permissions of this process's mappings of path.
func shmMappings(t *testing.T, path string) []string {
	t.Helper()
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Skipf("no /proc/self/maps: %v", err)
	}
	var perms []string
	for line := range strings.SplitSeq(string(maps), "\n") {
		if f := strings.Fields(line); len(f) >= 6 && f[len(f)-1] == path {
			perms = append(perms, f[1])
		}
	}
	return perms
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

package cli

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/embedded/etcdtest"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/etcdview/etcdviewtest"
	"github.com/etcdscope/etcdscope/etcdview/pgtest"
	"github.com/etcdscope/etcdscope/etcdview/record"
	"github.com/jackc/pgx/v5"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// recordedHead is the etcd revision the recording at path is whole up to,
// as it stands on disk; 0 before its first snapshot.
func recordedHead(path string) int64 {
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return 0
	}
	defer db.Close()
	var head int64
	db.QueryRow(`SELECT value FROM etcdscope_record WHERE name = 'head'`).Scan(&head)
	return head
}

// keyWrite is one write of a key as etcd answered it.
type keyWrite struct {
	Revision int64
	Value    string // "" for a deletion
}

// writeLog puts and deletes keys below prefix as fast as etcd takes them
// until stop is closed, and keeps each write's revision.
type writeLog struct {
	mu   sync.Mutex
	log  map[string][]keyWrite
	last int64
	done chan struct{}
}

func startWriteLog(t *testing.T, cli *clientv3.Client, keys []string, stop <-chan struct{}) *writeLog {
	w := &writeLog{log: map[string][]keyWrite{}, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			key, v := keys[i%len(keys)], keyWrite{Value: fmt.Sprintf("v-%d", i)}
			if i%7 == 3 {
				resp, err := cli.Delete(t.Context(), key)
				if err != nil || resp.Deleted == 0 {
					continue
				}
				v = keyWrite{Revision: resp.Header.Revision}
			} else {
				resp, err := cli.Put(t.Context(), key, v.Value)
				if err != nil {
					t.Error(err)
					return
				}
				v.Revision = resp.Header.Revision
			}
			w.mu.Lock()
			w.log[key], w.last = append(w.log[key], v), v.Revision
			w.mu.Unlock()
		}
	}()
	return w
}

func (w *writeLog) head() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.last
}

// putKeys puts n keys below /k/ and returns them, with each one's write.
func putKeys(t *testing.T, cli *clientv3.Client, n int) ([]string, map[string]keyWrite) {
	t.Helper()
	var keys []string
	first := map[string]keyWrite{}
	for i := range n {
		key := fmt.Sprintf("/k/key-%02d", i)
		resp, err := cli.Put(t.Context(), key, "v-start")
		if err != nil {
			t.Fatal(err)
		}
		keys, first[key] = append(keys, key), keyWrite{resp.Header.Revision, "v-start"}
	}
	return keys, first
}

// startRecord starts etcdscope record in a process of its own.
func startRecord(t *testing.T, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := etcdscope(append([]string{"record"}, args...))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	return cmd, &stderr
}

// historyOf is the key's history read with history --db -o json, oldest
// first.
func historyOf(t *testing.T, path, key string) []keyWrite {
	t.Helper()
	var doc struct {
		Entries []struct {
			Revision int64  `json:"revision"`
			Change   string `json:"change"`
			Value    string `json:"value"`
		} `json:"entries"`
	}
	if err := json.Unmarshal([]byte(run(t, "history", "--db", path, key, "-o", "json")), &doc); err != nil {
		t.Fatal(err)
	}
	var out []keyWrite
	for i := len(doc.Entries) - 1; i >= 0; i-- {
		e := doc.Entries[i]
		out = append(out, keyWrite{Revision: e.Revision, Value: e.Value})
	}
	return out
}

// TestRecordKilledAndRestartedHoldsEveryVersion: record runs beside an etcd
// that writeLog as fast as it can, is killed with SIGKILL, started again on
// its file, read with --db while it writeLog, and ended with one SIGTERM;
// etcd then compacts to its head. The recording holds every version of
// every key, each at the revision etcd gave it, none lost or repeated
// across the kill.
func TestRecordKilledAndRestartedHoldsEveryVersion(t *testing.T) {
	e := etcdtest.Start(t, etcdtest.Options{})
	cli := e.Client(t)
	keys, first := putKeys(t, cli, 12)
	start := first[keys[len(keys)-1]].Revision
	path := filepath.Join(t.TempDir(), "incident.db")
	args := []string{"--endpoints", e.Endpoint, "--out", path, "/k/"}

	cmd, _ := startRecord(t, args...)
	waitFor(t, 60*time.Second, "the first snapshot", func() bool { return recordedHead(path) >= start })
	stop := make(chan struct{})
	w := startWriteLog(t, cli, keys, stop)
	waitFor(t, 60*time.Second, "200 revisions recorded", func() bool { return recordedHead(path) > start+200 })
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	killedAt := recordedHead(path)

	restartedAt := w.head()
	cmd, stderr := startRecord(t, append(args, "--status-interval", "100ms")...)
	waitFor(t, 60*time.Second, "200 revisions recorded after the restart", func() bool { return recordedHead(path) > restartedAt+200 })
	// Read while it is written: --db reads the file and its log.
	if out := run(t, "ls", "--db", path, "/k/"); strings.Count(out, "/k/key-") < 2 {
		t.Errorf("ls --db of the recording while it is written:\n%s", out)
	}
	close(stop)
	<-w.done
	last := w.head()
	waitFor(t, 60*time.Second, "the last write recorded", func() bool { return recordedHead(path) >= last })
	cmd.Process.Signal(syscall.SIGTERM)
	if code := exitWithin(t, cmd, 10*time.Second); code != 0 {
		t.Fatalf("record ended by SIGTERM: exit status %d\n%s", code, stderr)
	}
	if _, err := cli.Compact(t.Context(), last); err != nil {
		t.Fatal(err)
	}
	if killedAt >= last {
		t.Fatalf("the kill at revision %d came after the last write %d: nothing was recorded across it", killedAt, last)
	}
	for _, key := range keys {
		want := append([]keyWrite{first[key]}, w.log[key]...)
		got := historyOf(t, path, key)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("history of %s in the recording:\n got %v\nwant %v", key, got, want)
		}
	}
	if !strings.Contains(stderr.String(), "events/s") || !strings.Contains(stderr.String(), "etcdscope record: revision ") {
		t.Errorf("no status line on stderr:\n%s", stderr)
	}
}

// TestRecordRefusesWithALine: record without --out, against a data file,
// or onto an SQLite file that is no recording fails with one line.
func TestRecordRefusesWithALine(t *testing.T) {
	e := etcdtest.Start(t, etcdtest.Options{})
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"record", "--endpoints", e.Endpoint}, "record needs --out FILE"},
		{[]string{"record", "--db", "../testdata/kube-1.7/boltdb-db", "--out", filepath.Join(dir, "a.db")}, "record reads a live etcd or kine"},
		{[]string{"record", "--endpoints", e.Endpoint, "--out", dir}, "not a regular file"},
		{[]string{"record", "--endpoints", e.Endpoint, "--out", filepath.Join(dir, "b.db"), "--keep", "0"}, `--keep "0": want a duration above 0`},
		{[]string{"record", "--endpoints", e.Endpoint, "--out", filepath.Join(dir, "b.db"), "--keep", "a week"}, `--keep "a week": want a duration`},
		{[]string{"record", "--endpoints", e.Endpoint, "--out", filepath.Join(dir, "b.db"), "--max-size", "lots"}, `--max-size "lots": want a size`},
		{[]string{"record", "--endpoints", e.Endpoint, "--out", filepath.Join(dir, "c.db"), "--max-size", "1KB"}, "--max-size 1000 B is smaller than the recording's snapshot"},
	} {
		if msg := runFails(t, tc.args...); !strings.Contains(msg, tc.want) {
			t.Errorf("etcdscope %s: %s, want %q", strings.Join(tc.args, " "), msg, tc.want)
		}
	}
}

// TestChangesOnARecordingSaysItsTimesAreTheRecordings: the header of
// changes --since on a recording gives the window's ends at the times the
// recorder received them, and says so; live, the same window's times are
// estimates, and the header says that.
func TestChangesOnARecordingSaysItsTimesAreTheRecordings(t *testing.T) {
	e := etcdtest.Start(t, etcdtest.Options{})
	cli := e.Client(t)
	before := etcdviewtest.Put(t, cli, etcdviewtest.ConfigMap("before"))
	path := filepath.Join(t.TempDir(), "rec.db")
	f, err := record.Open(path, "")
	if err != nil {
		t.Fatal(err)
	}
	l, err := etcdview.Connect(t.Context(), etcdview.Config{Endpoints: []string{e.Endpoint}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx, l, record.Options{}) }()
	// A write after the snapshot, whose arrival the recorder writes down.
	waitFor(t, 30*time.Second, "the snapshot", func() bool { return recordedHead(path) >= before })
	from := etcdviewtest.Put(t, cli, etcdviewtest.ConfigMap("during"))
	waitFor(t, 30*time.Second, "the write recorded", func() bool { return recordedHead(path) >= from })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	f.Close()

	recorded := strings.Split(run(t, "changes", "--db", path, "--since", "1h"), "\n")
	if len(recorded) < 2 || !strings.HasSuffix(recorded[1], ": the times the recording received these revisions") {
		t.Errorf("the recording's header does not say its times are the recording's:\n%s", strings.Join(recorded, "\n"))
	}
	live := strings.Split(run(t, "changes", "--endpoints", e.Endpoint, "--from-rev", fmt.Sprint(from)), "\n")
	if len(live) < 2 || !strings.HasSuffix(live[1], ": times are estimates, from the times objects record") {
		t.Errorf("the live header does not say its times are estimates:\n%s", strings.Join(live, "\n"))
	}
}

// pgHead is the etcd revision cluster's recording in the database at url
// is whole up to; 0 before its first snapshot.
func pgHead(url, cluster string) int64 {
	c, err := pgx.Connect(context.Background(), strings.TrimSuffix(url, "&cluster="+cluster))
	if err != nil {
		return 0
	}
	defer c.Close(context.Background())
	var head string
	c.QueryRow(context.Background(), `SELECT value FROM `+pgx.Identifier{cluster}.Sanitize()+`.etcdscope_record WHERE name = 'head'`).Scan(&head)
	n, _ := strconv.ParseInt(head, 10, 64)
	return n
}

// TestRecordIntoPostgres: record --out postgres://...?cluster=NAME, as a
// process beside an etcd written to as fast as it takes it, ends on one
// SIGTERM with status 0, and --db with the same URL reads every version
// of every key. --max-size, which bounds a file, is refused there in one
// line.
func TestRecordIntoPostgres(t *testing.T) {
	e := etcdtest.Start(t, etcdtest.Options{})
	cli := e.Client(t)
	pg := pgtest.Start(t)
	url := pg.URL("postgres", "east")
	keys, first := putKeys(t, cli, 6)
	start := first[keys[len(keys)-1]].Revision
	cmd, stderr := startRecord(t, "--endpoints", e.Endpoint, "--out", url, "/k/")
	waitFor(t, 60*time.Second, "the first snapshot", func() bool { return pgHead(url, "east") >= start })
	stop := make(chan struct{})
	w := startWriteLog(t, cli, keys, stop)
	waitFor(t, 60*time.Second, "100 revisions recorded", func() bool { return pgHead(url, "east") > start+100 })
	close(stop)
	<-w.done
	last := w.head()
	waitFor(t, 60*time.Second, "the last write recorded", func() bool { return pgHead(url, "east") >= last })
	cmd.Process.Signal(syscall.SIGTERM)
	if code := exitWithin(t, cmd, 10*time.Second); code != 0 {
		t.Fatalf("record ended by SIGTERM: exit status %d\n%s", code, stderr)
	}
	for _, key := range keys {
		want := append([]keyWrite{first[key]}, w.log[key]...)
		if got := historyOf(t, url, key); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("history of %s in PostgreSQL:\n got %v\nwant %v", key, got, want)
		}
	}
	msg := runFails(t, "record", "--endpoints", e.Endpoint, "--out", pg.URL("postgres", "west"), "--max-size", "1GiB")
	if !strings.Contains(msg, "--max-size bounds a recording in a file") {
		t.Errorf("record --max-size into PostgreSQL: %s, want it refused", msg)
	}
}

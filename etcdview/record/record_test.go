package record

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/embedded/etcdtest"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/etcdview/changes"
	"github.com/etcdscope/etcdscope/etcdview/internal/pgsql"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// startEtcd starts a real etcd and connects a Live source and a client.
func startEtcd(t *testing.T) (*etcdview.Live, *clientv3.Client) {
	t.Helper()
	e := etcdtest.Start(t, etcdtest.Options{})
	l, err := etcdview.Connect(t.Context(), etcdview.Config{Endpoints: []string{e.Endpoint}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l, e.Client(t)
}

// recorder runs Run in the background; stop cancels it, waits for it to
// return and closes the file.
type recorder struct {
	mu       sync.Mutex
	statuses []Status
	stop     func() error
}

func startRecorder(t *testing.T, src etcdview.Source, path, prefix string, now func() time.Time) *recorder {
	t.Helper()
	return startRecorderWith(t, src, path, prefix, Options{Now: now})
}

// startRecorderWith runs Run with opts, its Status kept.
func startRecorderWith(t *testing.T, src etcdview.Source, path, prefix string, opts Options) *recorder {
	t.Helper()
	f, err := Open(path, prefix)
	if err != nil {
		t.Fatal(err)
	}
	r := &recorder{}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		opts.Status = func(s Status) {
			r.mu.Lock()
			r.statuses = append(r.statuses, s)
			r.mu.Unlock()
		}
		done <- f.Run(ctx, src, opts)
	}()
	var once sync.Once
	r.stop = func() error {
		var err error
		once.Do(func() {
			cancel()
			select {
			case err = <-done:
			case <-time.After(30 * time.Second):
				err = errors.New("Run did not return within 30s of its context's end")
			}
			f.Close()
		})
		return err
	}
	t.Cleanup(func() { r.stop() })
	return r
}

func (r *recorder) gaps() []Gap {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Gap
	for _, s := range r.statuses {
		if s.Gap != nil {
			out = append(out, *s.Gap)
		}
	}
	return out
}

// waitRecorded waits until the recording (a file, or a postgres:// URL),
// read as --db reads it while it is written, holds key with value.
func waitRecorded(t *testing.T, path, key, value string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		f, err := etcdview.OpenOffline(path, etcdview.FileOptions{})
		if err == nil {
			kv, err := f.Get(t.Context(), key, 0)
			f.Close()
			if err == nil && string(kv.Value) == value || value == "" && errors.Is(err, etcdview.ErrNotFound) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the recording does not hold %s = %q within 30s (last: %v)", key, value, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func openRecording(t *testing.T, path string) *etcdview.KineFile {
	t.Helper()
	f, err := etcdview.OpenKineFile(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func put(t *testing.T, cli *clientv3.Client, key, value string) int64 {
	t.Helper()
	resp, err := cli.Put(t.Context(), key, value)
	if err != nil {
		t.Fatal(err)
	}
	return resp.Header.Revision
}

func txn(t *testing.T, cli *clientv3.Client, ops ...clientv3.Op) int64 {
	t.Helper()
	resp, err := cli.Txn(t.Context()).Then(ops...).Commit()
	if err != nil {
		t.Fatal(err)
	}
	return resp.Header.Revision
}

// history is the key's entries as --db reads them, oldest first, as
// "rev:value" ("rev:deleted" for a deletion).
func history(t *testing.T, f *etcdview.KineFile, key string) []string {
	t.Helper()
	h, err := f.History(t.Context(), key, etcdview.HistoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for i := len(h.Entries) - 1; i >= 0; i-- {
		e := h.Entries[i]
		v := string(e.KV.Value)
		if e.Deleted {
			v = "deleted"
		}
		out = append(out, fmt.Sprintf("%d:%s", e.KV.ModRevision, v))
	}
	return out
}

// etcdRevisions are etcd's revisions of the key's rows, as the recording
// keeps them beside kine's ids.
func etcdRevisions(t *testing.T, path, key string) []int64 {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT COALESCE(r.revision, k.id) FROM kine k LEFT JOIN etcdscope_revisions r ON r.id = k.id WHERE k.name = ? ORDER BY k.id`, key)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var r int64
		if err := rows.Scan(&r); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// TestTxnKeysAreEachRecordedInOrder: keys a txn wrote in one revision,
// before the recording (in its snapshot) and during it, are each in the
// recording with their values and whole histories; their rows keep the
// order of the writes and say etcd's revision, which they share.
func TestTxnKeysAreEachRecordedInOrder(t *testing.T) {
	l, cli := startEtcd(t)
	before := txn(t, cli, clientv3.OpPut("/t/a1", "a1-0"), clientv3.OpPut("/t/a2", "a2-0"))
	put(t, cli, "/t/b", "b-0")
	path := filepath.Join(t.TempDir(), "rec.db")
	rec := startRecorder(t, l, path, "/t/", nil)
	waitRecorded(t, path, "/t/b", "b-0")
	during := txn(t, cli, clientv3.OpPut("/t/c1", "c1-0"), clientv3.OpPut("/t/c2", "c2-0"), clientv3.OpPut("/t/c3", "c3-0"))
	put(t, cli, "/t/a1", "a1-1")
	txn(t, cli, clientv3.OpDelete("/t/a2"), clientv3.OpPut("/t/d", "d-0"))
	put(t, cli, "/t/b", "b-1")
	waitRecorded(t, path, "/t/b", "b-1")
	if err := rec.stop(); err != nil {
		t.Fatal(err)
	}

	f := openRecording(t, path)
	for key, want := range map[string]string{"/t/a1": "a1-1", "/t/b": "b-1", "/t/c1": "c1-0", "/t/c2": "c2-0", "/t/c3": "c3-0", "/t/d": "d-0"} {
		kv, err := f.Get(t.Context(), key, 0)
		if err != nil || string(kv.Value) != want {
			t.Errorf("get %s: %v %v, want %q", key, kv, err, want)
		}
	}
	if _, err := f.Get(t.Context(), "/t/a2", 0); !errors.Is(err, etcdview.ErrNotFound) {
		t.Errorf("get /t/a2 after the txn that deleted it: %v, want not found", err)
	}
	values := func(h []string) string {
		var v []string
		for _, e := range h {
			v = append(v, e[strings.Index(e, ":")+1:])
		}
		return strings.Join(v, " ")
	}
	for key, want := range map[string]string{"/t/a1": "a1-0 a1-1", "/t/a2": "a2-0 deleted", "/t/c2": "c2-0"} {
		if got := values(history(t, f, key)); got != want {
			t.Errorf("history %s: %s, want %s", key, got, want)
		}
	}
	for _, key := range []string{"/t/a1", "/t/a2"} {
		if got := etcdRevisions(t, path, key)[0]; got != before {
			t.Errorf("%s's first row is of etcd revision %d, want the txn's %d", key, got, before)
		}
	}
	// The txn's keys are three rows, one after the other, of one etcd
	// revision: before them none of them is there, after them all three.
	var ids []int64
	for _, key := range []string{"/t/c1", "/t/c2", "/t/c3"} {
		if got := etcdRevisions(t, path, key); len(got) != 1 || got[0] != during {
			t.Errorf("%s's rows are of etcd revisions %v, want [%d]", key, got, during)
		}
		ids = append(ids, firstID(t, f, key))
	}
	if ids[1] != ids[0]+1 || ids[2] != ids[1]+1 {
		t.Errorf("the txn's rows are at %v, want three ids in a row", ids)
	}
	if _, err := f.Get(t.Context(), "/t/c1", ids[0]-1); !errors.Is(err, etcdview.ErrNotFound) {
		t.Errorf("/t/c1 before the txn's rows: %v, want not found", err)
	}
}

// TestADeletionRowCarriesWhatItDeleted: the recorder asks etcd for no
// previous values (the file holds them), yet a deletion's row carries the
// create revision and the lease of the value it deleted, as kine's delete
// row does, for keys created before the recording (its snapshot) and
// during it.
func TestADeletionRowCarriesWhatItDeleted(t *testing.T) {
	l, cli := startEtcd(t)
	lease, err := cli.Grant(t.Context(), 3600)
	if err != nil {
		t.Fatal(err)
	}
	leased := func(key, value string) int64 {
		resp, err := cli.Put(t.Context(), key, value, clientv3.WithLease(lease.ID))
		if err != nil {
			t.Fatal(err)
		}
		return resp.Header.Revision
	}
	created := map[string]int64{"/d/old": leased("/d/old", "0")}
	put(t, cli, "/d/old", "1") // an update without the lease: the deletion takes the last value's
	path := filepath.Join(t.TempDir(), "rec.db")
	rec := startRecorder(t, l, path, "/d/", nil)
	waitRecorded(t, path, "/d/old", "1")
	created["/d/new"] = leased("/d/new", "0")
	leased("/d/new", "1")
	for _, key := range []string{"/d/old", "/d/new"} {
		if _, err := cli.Delete(t.Context(), key); err != nil {
			t.Fatal(err)
		}
	}
	put(t, cli, "/d/end", "end")
	waitRecorded(t, path, "/d/end", "end")
	if err := rec.stop(); err != nil {
		t.Fatal(err)
	}

	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for key, wantLease := range map[string]int64{"/d/old": 0, "/d/new": int64(lease.ID)} {
		var createRev, gotLease int64
		if err := db.QueryRow(`SELECT COALESCE(r.revision, k.create_revision), k.lease FROM kine k
			LEFT JOIN etcdscope_revisions r ON r.id = k.create_revision WHERE k.name = ? AND k.deleted = 1`, key).Scan(&createRev, &gotLease); err != nil {
			t.Fatalf("%s's deletion row: %v", key, err)
		}
		if createRev != created[key] || gotLease != wantLease {
			t.Errorf("%s's deletion row: create revision %d, lease %d; want %d and %d", key, createRev, gotLease, created[key], wantLease)
		}
	}
}

// firstID is the id of the key's oldest row.
func firstID(t *testing.T, f *etcdview.KineFile, key string) int64 {
	t.Helper()
	h, err := f.History(t.Context(), key, etcdview.HistoryOptions{})
	if err != nil || len(h.Entries) == 0 {
		t.Fatalf("history %s: %v, %d entries", key, err, len(h.Entries))
	}
	return h.Entries[len(h.Entries)-1].KV.ModRevision
}

// TestRestartAfterCompactionRecordsAGapAndANewSnapshot: record started
// again on its file after etcd compacted the revisions it missed records
// the gap, and the prefix as etcd holds it: the keys written in the gap
// at their last write, the keys deleted in it deleted.
func TestRestartAfterCompactionRecordsAGapAndANewSnapshot(t *testing.T) {
	l, cli := startEtcd(t)
	for _, k := range []string{"k1", "k2", "k3"} {
		put(t, cli, "/g/"+k, k+"-0")
	}
	path := filepath.Join(t.TempDir(), "rec.db")
	rec := startRecorder(t, l, path, "/g/", nil)
	waitRecorded(t, path, "/g/k3", "k3-0")
	if err := rec.stop(); err != nil {
		t.Fatal(err)
	}
	first := put(t, cli, "/other", "x") // outside the prefix, the first revision the recorder misses
	if _, err := cli.Delete(t.Context(), "/g/k1"); err != nil {
		t.Fatal(err)
	}
	put(t, cli, "/g/k2", "k2-1")
	head := put(t, cli, "/g/k4", "k4-0")
	if _, err := cli.Compact(t.Context(), head); err != nil {
		t.Fatal(err)
	}

	rec = startRecorder(t, l, path, "/g/", nil)
	waitRecorded(t, path, "/g/k4", "k4-0")
	after := put(t, cli, "/g/k3", "k3-1")
	waitRecorded(t, path, "/g/k3", "k3-1")
	if err := rec.stop(); err != nil {
		t.Fatal(err)
	}
	want := Gap{From: first, To: head, Written: 2, Deleted: 1}
	if g := rec.gaps(); len(g) != 1 || g[0].To < want.To || g[0].From != want.From || g[0].Written != 2 || g[0].Deleted != 1 {
		t.Errorf("gaps said: %+v, want one like %+v", g, want)
	}
	f := openRecording(t, path)
	gaps, err := f.RecordingGaps(t.Context())
	if err != nil || len(gaps) != 1 || gaps[0].From != want.From || gaps[0].Written != 2 || gaps[0].Deleted != 1 {
		t.Errorf("the file's gaps: %+v %v, want one like %+v", gaps, err, want)
	}
	if d := f.Description(); !strings.Contains(d, fmt.Sprintf("a gap: revisions %d to", want.From)) {
		t.Errorf("the file's description does not say its gap: %s", d)
	}
	// The deletion takes an id of the gap: after it, ids are etcd's
	// revisions still.
	if h := history(t, f, "/g/k3"); h[len(h)-1] != fmt.Sprintf("%d:k3-1", after) {
		t.Errorf("history /g/k3: %v, want the write after the gap at etcd's revision %d", h, after)
	}
	for key, want := range map[string]string{"/g/k1": "k1-0 deleted", "/g/k2": "k2-0 k2-1", "/g/k3": "k3-0 k3-1", "/g/k4": "k4-0"} {
		var got []string
		for _, e := range history(t, f, key) {
			got = append(got, e[strings.Index(e, ":")+1:])
		}
		if strings.Join(got, " ") != want {
			t.Errorf("history %s: %v, want %s", key, got, want)
		}
	}
}

// waitHead waits until the recording's head, the revision it is whole up
// to, reaches rev.
func waitHead(t *testing.T, path string, rev int64) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	deadline := time.Now().Add(30 * time.Second)
	var head int64
	for head < rev {
		if time.Now().After(deadline) {
			t.Fatalf("the recording's head is %d, not %d, after 30s", head, rev)
		}
		time.Sleep(20 * time.Millisecond)
		db.QueryRow(`SELECT value FROM etcdscope_record WHERE name = 'head'`).Scan(&head)
	}
}

// TestAQuietPrefixResumesAfterCompactionWithoutAGap: the head of a
// recording of a prefix nobody writes follows etcd's progress, so that
// record started again after etcd compacted the revisions written
// elsewhere goes on from where it stopped, with no gap and no new
// snapshot. etcd 3.6 answers progress requests after pending events, as
// the watch needs to ask for them (Debian's 3.4.23 does not).
func TestAQuietPrefixResumesAfterCompactionWithoutAGap(t *testing.T) {
	e := etcdtest.StartVersion(t, "3.6", etcdtest.Options{})
	l, err := etcdview.Connect(t.Context(), etcdview.Config{Endpoints: []string{e.Endpoint}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	cli := e.Client(t)
	put(t, cli, "/q/k1", "k1-0")
	path := filepath.Join(t.TempDir(), "rec.db")
	rec := startRecorder(t, l, path, "/q/", nil)
	waitRecorded(t, path, "/q/k1", "k1-0")
	var busy int64
	for i := range 10 {
		busy = put(t, cli, fmt.Sprintf("/busy/k%d", i), "outside the prefix")
	}
	waitHead(t, path, busy)
	if err := rec.stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Compact(t.Context(), busy); err != nil {
		t.Fatal(err)
	}

	rec = startRecorder(t, l, path, "/q/", nil)
	after := put(t, cli, "/q/k2", "k2-0")
	waitRecorded(t, path, "/q/k2", "k2-0")
	if err := rec.stop(); err != nil {
		t.Fatal(err)
	}
	if g := rec.gaps(); len(g) > 0 {
		t.Errorf("gaps said: %+v, want none: nothing below /q/ was lost", g)
	}
	f := openRecording(t, path)
	if gaps, err := f.RecordingGaps(t.Context()); err != nil || len(gaps) > 0 {
		t.Errorf("the file's gaps: %+v %v, want none", gaps, err)
	}
	if got := etcdRevisions(t, path, "/q/k2"); len(got) != 1 || got[0] != after {
		t.Errorf("/q/k2's rows are at etcd revisions %v, want [%d]", got, after)
	}
}

// TestChangesSinceUsesTheRecordedTimes: changes --since on a recording
// starts at the first revision that arrived in the window, by the times
// the recorder wrote down, where the values hold no time at all.
func TestChangesSinceUsesTheRecordedTimes(t *testing.T) {
	l, cli := startEtcd(t)
	t0 := time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC)
	var clock atomic.Int64
	clock.Store(t0.UnixNano())
	now := func() time.Time { return time.Unix(0, clock.Load()) }
	put(t, cli, "/c/before", "0")
	put(t, cli, "/c/other", "0") // the recording starts after /c/before's write
	path := filepath.Join(t.TempDir(), "rec.db")
	rec := startRecorder(t, l, path, "/c/", now)
	waitRecorded(t, path, "/c/before", "0")
	put(t, cli, "/c/early", "1")
	again := put(t, cli, "/c/before", "1")
	waitRecorded(t, path, "/c/before", "1")
	clock.Store(t0.Add(10 * time.Minute).UnixNano())
	late := put(t, cli, "/c/late", "2")
	put(t, cli, "/c/late", "3")
	waitRecorded(t, path, "/c/late", "3")
	if err := rec.stop(); err != nil {
		t.Fatal(err)
	}
	f := openRecording(t, path)
	w, err := changes.Read(t.Context(), f, decode.Decoder{}, changes.Range{Prefix: "/c/", Since: 5 * time.Minute}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if w.From != late || w.Events != 2 || !strings.Contains(w.Since, "2026-12-02T03:05:00Z") {
		t.Errorf("--since 5m: from %d with %d events (%s), want from %d with 2", w.From, w.Events, w.Since, late)
	}
	if at := w.Times.At(late); at.Bound != changes.About || !at.Time.Equal(t0.Add(10*time.Minute)) {
		t.Errorf("the time of revision %d: %v, want the one it arrived at, %v", late, at, t0.Add(10*time.Minute))
	}
	// The first change of a key after the snapshot replays with the
	// value before it, the snapshot's, although that is before the
	// recording's start.
	var first *etcdview.Batch
	for b := range f.Watch(t.Context(), "/c/before", etcdview.WatchOptions{Rev: again}) {
		if first == nil {
			first = &b
		}
	}
	if first == nil || first.Err != nil || len(first.Events) != 1 || first.Events[0].Prev == nil || string(first.Events[0].Prev.Value) != "0" {
		t.Errorf("the replay of revision %d: %+v, want the update with the value before it, 0", again, first)
	}
}

// TestOpenRefusesWhatItMustNotWrite: a recording of another prefix, an
// SQLite file that is no recording (k3s' state.db), a file that is no
// SQLite file, and a file another recorder writes are refused, each with
// a line that says why, and left as they were.
func TestOpenRefusesWhatItMustNotWrite(t *testing.T) {
	dir := t.TempDir()
	rec := filepath.Join(dir, "rec.db")
	f, err := Open(rec, "/a/")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(rec, "/a/"); err == nil || !strings.Contains(err.Error(), "another etcdscope record writes it") {
		t.Errorf("a second recorder on the file: %v", err)
	}
	f.Close()
	if _, err := Open(rec, "/b/"); err == nil || !strings.Contains(err.Error(), `records the prefix "/a/", not "/b/"`) {
		t.Errorf("another prefix: %v", err)
	}
	kine := filepath.Join(dir, "state.db")
	db, err := sql.Open("sqlite", kine)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(kineSchema[0]); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := Open(kine, ""); err == nil || !strings.Contains(err.Error(), "no recording of etcdscope's: refusing to write to it") {
		t.Errorf("k3s' state.db: %v", err)
	}
	text := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(text, []byte("not a database, but long enough to have a header of a hundred bytes or so, which SQLite reads first."), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(text, ""); err == nil || !strings.Contains(err.Error(), "not an SQLite file") {
		t.Errorf("a text file: %v", err)
	}
	if _, err := Open(dir, ""); err == nil {
		t.Error("a directory: no error")
	}
	// A link, to a file or to none, is refused, and nothing is written
	// where it points.
	for _, target := range []string{text, filepath.Join(dir, "absent.db")} {
		link := filepath.Join(dir, "link-"+filepath.Base(target))
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
		if _, err := Open(link, ""); err == nil || !strings.Contains(err.Error(), "is a symbolic link") {
			t.Errorf("a link to %s: %v", target, err)
		}
	}
	if b, err := os.ReadFile(text); err != nil || !strings.HasPrefix(string(b), "not a database") {
		t.Errorf("the file a link points to: %q, %v", b, err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "absent.db")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a link to no file made one: %v", err)
	}
	if fi, err := os.Stat(rec); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the recording's mode: %v, %v (want -rw-------)", fi.Mode(), err)
	}
}

// gapOnce is a live source whose first watch reports a gap at once, as the
// resuming watch does when etcd compacted revisions while its stream was
// cut: before it does, cut writes below the prefix.
type gapOnce struct {
	*etcdview.Live
	cut    func()
	served atomic.Bool
}

func (g *gapOnce) Watch(ctx context.Context, prefix string, opts etcdview.WatchOptions) <-chan etcdview.Batch {
	if g.served.Swap(true) {
		return g.Live.Watch(ctx, prefix, opts)
	}
	g.cut()
	ch := make(chan etcdview.Batch, 1)
	ch <- etcdview.Batch{Revision: opts.Rev, Note: "revisions compacted before the watch could resume", Gap: &etcdview.Gap{From: opts.Rev, To: opts.Rev}}
	return ch
}

// TestAGapInTheWatchIsRecordedWithANewSnapshot: a gap the watch reports
// while record runs is recorded as one, with a new snapshot, and the
// recording goes on after it.
func TestAGapInTheWatchIsRecordedWithANewSnapshot(t *testing.T) {
	l, cli := startEtcd(t)
	put(t, cli, "/w/k1", "k1-0")
	put(t, cli, "/w/k2", "k2-0")
	src := &gapOnce{Live: l, cut: func() {
		if _, err := cli.Delete(t.Context(), "/w/k1"); err != nil {
			t.Error(err)
		}
		put(t, cli, "/w/k3", "k3-0")
	}}
	path := filepath.Join(t.TempDir(), "rec.db")
	rec := startRecorder(t, src, path, "/w/", nil)
	waitRecorded(t, path, "/w/k3", "k3-0")
	put(t, cli, "/w/k2", "k2-1")
	waitRecorded(t, path, "/w/k2", "k2-1")
	if err := rec.stop(); err != nil {
		t.Fatal(err)
	}
	if g := rec.gaps(); len(g) != 1 || g[0].Written != 1 || g[0].Deleted != 1 {
		t.Errorf("gaps said: %+v, want one of 1 key written and 1 deleted", g)
	}
	f := openRecording(t, path)
	if _, err := f.Get(t.Context(), "/w/k1", 0); !errors.Is(err, etcdview.ErrNotFound) {
		t.Errorf("/w/k1, deleted in the gap: %v, want not found", err)
	}
	for key, want := range map[string]string{"/w/k1": "k1-0 deleted", "/w/k2": "k2-0 k2-1", "/w/k3": "k3-0"} {
		var got []string
		for _, e := range history(t, f, key) {
			got = append(got, e[strings.Index(e, ":")+1:])
		}
		if strings.Join(got, " ") != want {
			t.Errorf("history %s: %v, want %s", key, got, want)
		}
	}
}

// kineServes is what kine serves below prefix: key=value@revision each.
func kineServes(t *testing.T, kc *clientv3.Client, prefix string) string {
	t.Helper()
	got, err := kc.Get(t.Context(), prefix, clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	var kvs []string
	for _, kv := range got.Kvs {
		kvs = append(kvs, fmt.Sprintf("%s=%s@%d", kv.Key, kv.Value, kv.ModRevision))
	}
	return strings.Join(kvs, " ")
}

// TestKineServesARecording: kine itself serves a recording over the etcd
// API, each key with the value and the revision etcd gave it, as the
// recording is in kine's schema.
func TestKineServesARecording(t *testing.T) {
	l, cli := startEtcd(t)
	put(t, cli, "/s/a", "a-0")
	path := filepath.Join(t.TempDir(), "rec.db")
	rec := startRecorder(t, l, path, "/s/", nil)
	waitRecorded(t, path, "/s/a", "a-0")
	put(t, cli, "/s/b", "b-0")
	last := put(t, cli, "/s/a", "a-1")
	waitRecorded(t, path, "/s/a", "a-1")
	if err := rec.stop(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "state.db"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	k := etcdtest.StartKine(t, etcdtest.KineOptions{Dir: dir})
	if got, want := kineServes(t, k.Client(t), "/s/"), fmt.Sprintf("/s/a=a-1@%d /s/b=b-0@%d", last, last-1); got != want {
		t.Errorf("kine serves the recording as %s, want %s", got, want)
	}
	// The recording holds one of kine's indexes; kine made the others.
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "state.db")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT COUNT(*) FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'kine' AND name LIKE 'kine_%'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 6 {
		t.Errorf("the file kine served has %d of kine's six indexes", n)
	}
}

// TestRecordsKine: record reads kine as it reads etcd (k3s' datastore),
// kine's deletions among its changes.
func TestRecordsKine(t *testing.T) {
	k := etcdtest.StartKine(t, etcdtest.KineOptions{})
	kc := k.Client(t)
	l, err := etcdview.Connect(t.Context(), etcdview.Config{Endpoints: []string{k.Endpoint}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	put(t, kc, "/registry/configmaps/default/a", "a-0")
	path := filepath.Join(t.TempDir(), "rec.db")
	rec := startRecorder(t, l, path, "/registry/", nil)
	waitRecorded(t, path, "/registry/configmaps/default/a", "a-0")
	put(t, kc, "/registry/configmaps/default/b", "b-0")
	put(t, kc, "/registry/configmaps/default/a", "a-1")
	if err := etcdtest.Delete(t.Context(), kc, "/registry/configmaps/default/b"); err != nil {
		t.Fatal(err)
	}
	put(t, kc, "/registry/configmaps/default/c", "c-0")
	waitRecorded(t, path, "/registry/configmaps/default/c", "c-0")
	if err := rec.stop(); err != nil {
		t.Fatal(err)
	}
	f := openRecording(t, path)
	for key, want := range map[string]string{"a": "a-0 a-1", "b": "b-0 deleted", "c": "c-0"} {
		var got []string
		for _, e := range history(t, f, "/registry/configmaps/default/"+key) {
			got = append(got, e[strings.Index(e, ":")+1:])
		}
		if strings.Join(got, " ") != want {
			t.Errorf("history %s: %v, want %s", key, got, want)
		}
	}
}

// TestAReplayOfARecordingGivesThePreviousValues: the file keeps each value
// once (old_value is NULL), and a replay, as changes and the TUI's tail
// read a recording, still gives an update and a deletion the value before,
// the snapshot's among them.
func TestAReplayOfARecordingGivesThePreviousValues(t *testing.T) {
	l, cli := startEtcd(t)
	put(t, cli, "/p/a", "a-0")
	path := filepath.Join(t.TempDir(), "rec.db")
	rec := startRecorder(t, l, path, "/p/", nil)
	waitRecorded(t, path, "/p/a", "a-0")
	put(t, cli, "/p/a", "a-1")
	if _, err := cli.Delete(t.Context(), "/p/a"); err != nil {
		t.Fatal(err)
	}
	put(t, cli, "/p/done", "x")
	waitRecorded(t, path, "/p/done", "x")
	if err := rec.stop(); err != nil {
		t.Fatal(err)
	}
	f := openRecording(t, path)
	st, err := f.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for b := range f.Watch(t.Context(), "/p/a", etcdview.WatchOptions{Rev: st.CompactRevision + 1}) {
		if b.Err != nil {
			t.Fatal(b.Err)
		}
		for _, ev := range b.Events {
			prev := "none"
			if ev.Prev != nil {
				prev = string(ev.Prev.Value)
			}
			got = append(got, fmt.Sprintf("%s %q prev %s", ev.Type, ev.KV.Value, prev))
		}
	}
	want := []string{`MODIFIED "a-1" prev a-0`, `DELETED "" prev a-1`}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("replay of /p/a:\n got %v\nwant %v", got, want)
	}
}

// Ended before its first status interval, Run says where it stopped: a
// short recording's stderr names its last revision too.
func TestRunSaysWhereItStoppedWhenEnded(t *testing.T) {
	src, cli := startEtcd(t)
	resp, err := cli.Put(t.Context(), "/k/a", "1")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "rec.db")
	r := startRecorderWith(t, src, path, "/k/", Options{StatusInterval: time.Hour})
	waitRecorded(t, path, "/k/a", "1")
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if n := len(r.statuses); n == 0 || r.statuses[n-1].Revision < resp.Header.Revision {
		t.Errorf("statuses when ended before the interval: %+v, want the last at revision %d or later", r.statuses, resp.Header.Revision)
	}
}

// TestARecordingWithKinesNameIndexResumes: a recording written before
// etcdscope_keys, with kine's index on names instead, is resumed: each key
// goes on from its last row (the rows after the restart name it as the
// one before, and carry its create revision), and --db reads every
// version of every key.
func TestARecordingWithKinesNameIndexResumes(t *testing.T) {
	l, cli := startEtcd(t)
	created := put(t, cli, "/u/k1", "a")
	put(t, cli, "/u/k2", "a")
	path := filepath.Join(t.TempDir(), "rec.db")
	rec := startRecorder(t, l, path, "/u/", nil)
	waitRecorded(t, path, "/u/k2", "a")
	put(t, cli, "/u/k1", "b")
	if _, err := cli.Delete(t.Context(), "/u/k2"); err != nil {
		t.Fatal(err)
	}
	put(t, cli, "/u/end", "1")
	waitRecorded(t, path, "/u/end", "1")
	if err := rec.stop(); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{`DROP TABLE etcdscope_keys`, `DROP INDEX etcdscope_compact_index`, `CREATE INDEX kine_name_index ON kine (name)`} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	rec = startRecorder(t, l, path, "/u/", nil)
	put(t, cli, "/u/k1", "c")
	put(t, cli, "/u/k2", "again")
	waitRecorded(t, path, "/u/k2", "again")
	if err := rec.stop(); err != nil {
		t.Fatal(err)
	}
	checkLastRows(t, path)
	f := openRecording(t, path)
	for key, want := range map[string][]string{"/u/k1": {"a", "b", "c"}, "/u/k2": {"a", "deleted", "again"}} {
		var got []string
		for _, e := range history(t, f, key) {
			got = append(got, e[strings.Index(e, ":")+1:])
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s's history: %v, want %v", key, got, want)
		}
	}
	db, err = sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// Each row names its key's row before as prev_revision; an update
	// carries the creation's id (kine's rows of a creation have none).
	var orphans int
	if err := db.QueryRow(`SELECT COUNT(*) FROM kine k WHERE k.name LIKE '/u/%' AND k.prev_revision != COALESCE(
		(SELECT MAX(p.id) FROM kine p WHERE p.name = k.name AND p.id < k.id), 0)`).Scan(&orphans); err != nil || orphans != 0 {
		t.Errorf("%d rows do not follow their key's row before (%v)", orphans, err)
	}
	var createRev int64
	if err := db.QueryRow(`SELECT COALESCE(r.revision, k.create_revision) FROM kine k LEFT JOIN etcdscope_revisions r ON r.id = k.create_revision
		WHERE k.name = '/u/k1' ORDER BY k.id DESC LIMIT 1`).Scan(&createRev); err != nil || createRev != created {
		t.Errorf("/u/k1's last row: create revision %d (%v), want %d", createRev, err, created)
	}
}

// checkLastRows checks that the recording at path (a file, or a
// postgres:// URL) has in etcdscope_keys the last row of every key of
// kine's table, and whether it deletes the key, and nothing else.
func checkLastRows(t *testing.T, path string) {
	t.Helper()
	var db *sql.DB
	if pgsql.IsURL(path) {
		target, err := pgsql.Parse(path)
		if err == nil {
			db, err = target.Open(t.Context(), true)
		}
		if err != nil {
			t.Fatal(err)
		}
	} else {
		var err error
		if db, err = sql.Open("sqlite", "file:"+path+"?mode=ro"); err != nil {
			t.Fatal(err)
		}
	}
	defer db.Close()
	rows := func(q string) []string {
		r, err := db.QueryContext(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		var out []string
		for r.Next() {
			var name string
			var id, deleted int64
			if err := r.Scan(&name, &id, &deleted); err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprintf("%s@%d:%d", name, id, deleted))
		}
		return out
	}
	got := rows(`SELECT name, id, deleted FROM etcdscope_keys ORDER BY name`)
	want := rows(`SELECT k.name, k.id, k.deleted FROM kine AS k JOIN (SELECT MAX(id) AS id FROM kine
		WHERE name != 'compact_rev_key' GROUP BY name) AS m ON k.id = m.id ORDER BY k.name`)
	if len(want) == 0 || !slices.Equal(got, want) {
		t.Errorf("etcdscope_keys holds %v, want each key's last row: %v", got, want)
	}
}

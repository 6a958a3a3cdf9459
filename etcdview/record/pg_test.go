package record

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/embedded"
	"github.com/etcdscope/etcdscope/embedded/etcdtest"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/etcdview/pgtest"
	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// openPGBeside starts an etcd and a PostgreSQL, and opens the recording
// of the cluster east there, below prefix, for writing.
func openPGBeside(t *testing.T, prefix string) (*etcdview.Live, *clientv3.Client, string, *File) {
	t.Helper()
	l, cli := startEtcd(t)
	url := pgtest.Start(t).URL("postgres", "east")
	f, err := Open(url, prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return l, cli, url, f
}

func openPGRecording(t *testing.T, url string) *etcdview.KineFile {
	t.Helper()
	f, err := etcdview.OpenKinePG(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// scan is every record the recording holds below prefix, as du reads them.
func scan(t *testing.T, f *etcdview.KineFile, prefix string) []etcdview.ScanRecord {
	t.Helper()
	var out []etcdview.ScanRecord
	_, err := f.Scan(t.Context(), prefix, etcdview.ScanOptions{}, func(b []etcdview.ScanRecord) error {
		out = append(out, b...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestPostgresHoldsWhatTheSQLiteFileHolds: the same run of etcd recorded
// into PostgreSQL and into a SQLite file, while writes flow (puts, a txn,
// deletions, a key with a lease), reads back the same: every key's
// history, the keys as of a revision in the middle, du's walk of every
// revision; and PostgreSQL's recording knows when its revisions came.
func TestPostgresHoldsWhatTheSQLiteFileHolds(t *testing.T) {
	l, cli := startEtcd(t)
	pg := pgtest.Start(t)
	put(t, cli, "/p/a", "a-0")
	txn(t, cli, clientv3.OpPut("/p/c1", "c1-0"), clientv3.OpPut("/p/c2", "c2-0"))
	file, url := filepath.Join(t.TempDir(), "rec.db"), pg.URL("postgres", "east")
	recordings := []string{file, url}
	var recs []*recorder
	for _, r := range recordings {
		recs = append(recs, startRecorder(t, l, r, "/p/", nil))
	}
	for _, r := range recordings {
		waitRecorded(t, r, "/p/c2", "c2-0")
	}
	lease, err := cli.Grant(t.Context(), 3600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Put(t.Context(), "/p/l", "leased", clientv3.WithLease(lease.ID)); err != nil {
		t.Fatal(err)
	}
	var middle int64
	for i := range 60 {
		rev := put(t, cli, "/p/a", fmt.Sprintf("a-%d", i+1))
		if i%20 == 0 {
			put(t, cli, "/p/b", fmt.Sprintf("b-%d", i))
		}
		if i%20 == 10 {
			cli.Delete(t.Context(), "/p/b")
		}
		if i == 30 {
			middle = rev
		}
	}
	txn(t, cli, clientv3.OpDelete("/p/c1"), clientv3.OpPut("/p/d", "d-0"))
	put(t, cli, "/p/end", "end")
	for _, r := range recordings {
		waitRecorded(t, r, "/p/end", "end")
	}
	for _, rec := range recs {
		if err := rec.stop(); err != nil {
			t.Fatal(err)
		}
	}

	fs, fp := openRecording(t, file), openPGRecording(t, url)
	for _, key := range []string{"/p/a", "/p/b", "/p/c1", "/p/c2", "/p/d", "/p/l", "/p/end"} {
		hs, err := fs.History(t.Context(), key, etcdview.HistoryOptions{})
		if err != nil {
			t.Fatal(err)
		}
		hp, err := fp.History(t.Context(), key, etcdview.HistoryOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(hp.Entries) == 0 {
			t.Errorf("history %s: PostgreSQL holds none", key)
		}
		if d := cmp.Diff(hs, hp); d != "" {
			t.Errorf("history %s, SQLite (-) and PostgreSQL (+):\n%s", key, d)
		}
		gs, errS := fs.Get(t.Context(), key, middle)
		gp, errP := fp.Get(t.Context(), key, middle)
		if d := cmp.Diff(gs, gp); d != "" || fmt.Sprint(errS) != fmt.Sprint(errP) {
			t.Errorf("get %s at %d: %v and %v, SQLite (-) and PostgreSQL (+):\n%s", key, middle, errS, errP, d)
		}
	}
	if kv, err := fp.Get(t.Context(), "/p/l", 0); err != nil || kv.Lease != int64(lease.ID) {
		t.Errorf("/p/l in PostgreSQL: %+v %v, want etcd's lease %d", kv, err, lease.ID)
	}
	if d := cmp.Diff(scan(t, fs, "/p/"), scan(t, fp, "/p/")); d != "" {
		t.Errorf("du's walk, SQLite (-) and PostgreSQL (+):\n%s", d)
	}
	if _, ok, err := fp.NewestTime(t.Context()); !ok || err != nil {
		t.Errorf("PostgreSQL's newest time: %v %v, want the time its last revision came", ok, err)
	}
	if d := fp.Description(); !strings.Contains(d, "recording of cluster east in PostgreSQL postgres://") {
		t.Errorf("description: %s", d)
	}
}

// TestPostgresKeepsClustersApart: two etcds recorded into one database
// are read apart, each by its cluster's name; a second recorder of a
// cluster is refused while the first writes.
func TestPostgresKeepsClustersApart(t *testing.T) {
	pg := pgtest.Start(t)
	pg.CreateDatabase(t, "fleet")
	urls := map[string]string{}
	for _, name := range []string{"east", "west"} {
		l, cli := startEtcd(t)
		put(t, cli, "/k/where", name)
		put(t, cli, "/k/only-"+name, "1")
		urls[name] = pg.URL("fleet", name)
		startRecorder(t, l, urls[name], "/k/", nil)
		waitRecorded(t, urls[name], "/k/where", name)
		if _, err := Open(urls[name], "/k/"); err == nil || !strings.Contains(err.Error(), "another etcdscope record writes cluster "+name) {
			t.Errorf("a second recorder of %s: %v", name, err)
		}
	}
	for name, other := range map[string]string{"east": "west", "west": "east"} {
		f := openPGRecording(t, urls[name])
		if kv, err := f.Get(t.Context(), "/k/where", 0); err != nil || string(kv.Value) != name {
			t.Errorf("%s's /k/where: %q %v", name, kv.Value, err)
		}
		if _, err := f.Get(t.Context(), "/k/only-"+other, 0); !errors.Is(err, etcdview.ErrNotFound) {
			t.Errorf("%s holds %s's key: %v", name, other, err)
		}
	}
}

// TestPostgresRecordingResumesOnRestart: record stopped and started again
// on the same cluster goes on from the revision after its last, with no
// gap: every version of the key written between is in it.
func TestPostgresRecordingResumesOnRestart(t *testing.T) {
	l, cli := startEtcd(t)
	pg := pgtest.Start(t)
	url := pg.URL("postgres", "east")
	var want []string
	want = append(want, fmt.Sprintf("%d:v0", put(t, cli, "/r/k", "v0")))
	rec := startRecorder(t, l, url, "/r/", nil)
	waitRecorded(t, url, "/r/k", "v0")
	want = append(want, fmt.Sprintf("%d:v1", put(t, cli, "/r/k", "v1")))
	waitRecorded(t, url, "/r/k", "v1")
	if err := rec.stop(); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"v2", "v3"} {
		want = append(want, fmt.Sprintf("%d:%s", put(t, cli, "/r/k", v), v))
	}
	rec = startRecorder(t, l, url, "/r/", nil)
	waitRecorded(t, url, "/r/k", "v3")
	want = append(want, fmt.Sprintf("%d:v4", put(t, cli, "/r/k", "v4")))
	waitRecorded(t, url, "/r/k", "v4")
	if err := rec.stop(); err != nil {
		t.Fatal(err)
	}
	if g := rec.gaps(); len(g) != 0 {
		t.Errorf("gaps on a restart etcd had every revision for: %+v", g)
	}
	if got := history(t, openPGRecording(t, url), "/r/k"); !cmp.Equal(got, want) {
		t.Errorf("history /r/k: %v, want %v", got, want)
	}
}

// TestOpenPostgresRefusesWhatItMustNotWrite: a URL without a cluster, an
// unsafe cluster name, a password in the URL, a server that refuses, and
// a schema of someone else's tables are each one line of error.
func TestOpenPostgresRefusesWhatItMustNotWrite(t *testing.T) {
	pg := pgtest.Start(t)
	c, err := pgx.Connect(t.Context(), pg.URL("postgres", ""))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range append([]string{"CREATE SCHEMA k3s", "SET search_path = k3s"}, pgKineSchema[0]) {
		if _, err := c.Exec(t.Context(), s); err != nil {
			t.Fatal(err)
		}
	}
	c.Close(context.Background())
	ports, err := embedded.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ url, want string }{
		{strings.TrimSuffix(pg.URL("postgres", "x"), "&cluster=x"), "names no cluster: add ?cluster=NAME"},
		{pg.URL("postgres", "a;b"), "invalid semicolon separator"},
		{pg.URL("postgres", "a%22b"), `cluster "a\"b" is not a cluster name`},
		{pg.URL("postgres", "pg_catalog"), `cluster "pg_catalog" is not a cluster name`},
		{strings.Replace(pg.URL("postgres", "x"), pgtest.User+"@", pgtest.User+":secret@", 1), "holds a password"},
		{fmt.Sprintf("postgres://%s@127.0.0.1:%d/postgres?cluster=x", pgtest.User, ports[0]), "connection refused"},
		{pg.URL("postgres", "k3s"), "schema k3s holds tables but no recording of etcdscope's: refusing to write to it"},
	} {
		_, err := Open(tc.url, "")
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("open %s: %v, want one line saying %q", tc.url, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("the error says the password: %v", err)
		}
	}
}

// TestKineServesAPostgresRecording: kine itself serves a recording in
// PostgreSQL, the cluster's schema its search_path, each key at the
// revision etcd gave it; and it writes after the recording's last row:
// the id column's sequence was set past the rows record wrote with their
// ids (kine tries 20 ids of the sequence before it gives up, fewer than
// the recording's 60).
func TestKineServesAPostgresRecording(t *testing.T) {
	l, cli := startEtcd(t)
	pg := pgtest.Start(t)
	url := pg.URL("postgres", "east")
	put(t, cli, "/s/a", "a-0")
	rec := startRecorder(t, l, url, "/s/", nil)
	waitRecorded(t, url, "/s/a", "a-0")
	put(t, cli, "/s/b", "b-0")
	var last int64
	for i := range 60 {
		last = put(t, cli, "/s/a", fmt.Sprintf("a-%d", i+1))
	}
	waitRecorded(t, url, "/s/a", "a-60")
	if err := rec.stop(); err != nil {
		t.Fatal(err)
	}
	k := etcdtest.StartKine(t, etcdtest.KineOptions{
		Endpoint: fmt.Sprintf("postgres://%s@127.0.0.1:%d/postgres?sslmode=disable&search_path=east", pgtest.User, pg.Port)})
	kc := k.Client(t)
	if got, want := kineServes(t, kc, "/s/"), fmt.Sprintf("/s/a=a-60@%d /s/b=b-0@%d", last, last-60); got != want {
		t.Errorf("kine serves the recording as %s, want %s", got, want)
	}
	resp, err := kc.Put(t.Context(), "/s/c", "c-0")
	if err != nil || resp.Header.Revision <= last {
		t.Fatalf("a put through kine: %v at %v, want a revision after the recording's %d", err, resp, last)
	}
	if kv, err := kc.Get(t.Context(), "/s/c"); err != nil || len(kv.Kvs) != 1 || string(kv.Kvs[0].Value) != "c-0" {
		t.Errorf("/s/c through kine: %v %v", kv, err)
	}
}

// A key that is not UTF-8 has no row in kine's PostgreSQL schema (its
// name is text): record says so in one line, and what it wrote before is
// whole.
func TestPostgresSaysAKeyIsNotUTF8(t *testing.T) {
	l, cli, url, f := openPGBeside(t, "/u/")
	done := make(chan error, 1)
	go func() { done <- f.Run(t.Context(), l, Options{}) }()
	waitRecorded(t, url, "/u/ok", "")
	put(t, cli, "/u/ok", "fine")
	waitRecorded(t, url, "/u/ok", "fine")
	put(t, cli, "/u/\xff", "bytes")
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), `key "/u/\xff" is not UTF-8`) || strings.Contains(err.Error(), "\n") {
			t.Errorf("record of a key that is not UTF-8: %v, want one line saying so", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("record went on past a key PostgreSQL cannot hold")
	}
	if got := history(t, openPGRecording(t, url), "/u/ok"); len(got) != 1 || !strings.HasSuffix(got[0], ":fine") {
		t.Errorf("history of /u/ok after the refusal: %v", got)
	}
}

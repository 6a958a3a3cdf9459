package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/embedded/etcdtest"
	"github.com/etcdscope/etcdscope/etcdview/etcdviewtest"
)

// TestLsDuAndHistoryReadAKineFile: ls -l, du and history of --db state.db,
// a file a real kine wrote, print what was written: the count of keys in
// each namespace, the bytes and revisions they hold, and the revisions of
// one configmap with what each changed.
func TestLsDuAndHistoryReadAKineFile(t *testing.T) {
	k := etcdtest.StartKine(t, etcdtest.KineOptions{})
	cli := k.Client(t)
	ctx := context.Background()
	cm := func(ns, name string, n int) string {
		return fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"namespace":%q},"data":{"n":"%d"}}`, name, ns, n)
	}
	var revs []int64
	for i := range 7 {
		ns := []string{"ns-a", "ns-b"}[i%2]
		if _, err := cli.Put(ctx, fmt.Sprintf("/registry/configmaps/%s/cm-%d", ns, i), cm(ns, fmt.Sprint("cm-", i), 0)); err != nil {
			t.Fatal(err)
		}
	}
	for n := 1; n <= 3; n++ {
		resp, err := cli.Put(ctx, "/registry/configmaps/ns-a/cm-0", cm("ns-a", "cm-0", n))
		if err != nil {
			t.Fatal(err)
		}
		revs = append(revs, resp.Header.Revision)
	}
	k.Stop()

	if got, want := run(t, "ls", "-l", "--db", k.DB, "/registry/configmaps"), "4  /registry/configmaps/ns-a/\n3  /registry/configmaps/ns-b/\n"; got != want {
		t.Errorf("ls -l --db:\n%s\nwant:\n%s", got, want)
	}
	du := run(t, "du", "--db", k.DB)
	// kine stopped may leave its write-ahead log beside the file (it does
	// not always checkpoint on SIGTERM): the header then names it too.
	if !strings.HasPrefix(du, "kine file "+k.DB+" (") || !strings.Contains(du, fmt.Sprintf(", revision %d;", revs[2])) {
		t.Errorf("du --db does not name the kine file and its revision %d:\n%s", revs[2], du)
	}
	if !hasRow(du, "/registry/", "7", "10") || !hasRow(du, "configmaps/", "7", "10") {
		t.Errorf("du --db: want /registry/ and configmaps/ with 7 keys and 10 revisions:\n%s", du)
	}
	hist := run(t, "history", "--db", k.DB, "/registry/configmaps/ns-a/cm-0")
	for i, rev := range revs {
		if !strings.Contains(hist, fmt.Sprint(rev)) || !strings.Contains(hist, fmt.Sprintf("data.n %d→%d", i, i+1)) {
			t.Errorf("history --db: want revision %d, data.n %d→%d:\n%s", rev, i, i+1, hist)
		}
	}
}

// hasRow says whether a line of out starts with name and holds each of
// cells as a column.
func hasRow(out, name string, cells ...string) bool {
	for line := range strings.SplitSeq(out, "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || fields[0] != name {
			continue
		}
		all := true
		for _, c := range cells {
			all = all && strings.Contains(" "+strings.Join(fields[1:], " ")+" ", " "+c+" ")
		}
		if all {
			return true
		}
	}
	return false
}

// TestChangesSinceOnAFoundKineFileCountsFromTheFilesTime: the state.db
// that discovery finds on a k3s node whose k3s is stopped is a file, as
// --db names it: --since counts back from the newest time the file's
// Leases say, not from now, and both read the same window.
func TestChangesSinceOnAFoundKineFileCountsFromTheFilesTime(t *testing.T) {
	k := etcdtest.StartKine(t, etcdtest.KineOptions{})
	cli := k.Client(t)
	then := time.Date(2023, 11, 14, 3, 0, 0, 0, time.UTC)
	for i := range 3 {
		etcdviewtest.Put(t, cli, etcdviewtest.NodeLease("node-1", then, then.Add(time.Duration(i)*10*time.Second)))
	}
	etcdviewtest.Put(t, cli, etcdviewtest.ConfigMap("late"))
	etcdviewtest.Put(t, cli, etcdviewtest.NodeLease("node-1", then, then.Add(30*time.Second)))
	k.Stop()

	root := t.TempDir()
	db := filepath.Join(root, "var/lib/rancher/k3s/server/db/state.db")
	if err := os.MkdirAll(filepath.Dir(db), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, suffix := range []string{"", "-wal", "-shm"} { // the newest writes may be in the WAL still
		data, err := os.ReadFile(k.DB + suffix)
		if suffix != "" && os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(db+suffix, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	named := changesJSONOf(t, run(t, "changes", "--db", db, "--since", "15s", "-o", "json"))
	found := changesJSONOf(t, run(t, "changes", "--host-root", root, "--since", "15s", "-o", "json"))
	if found.From.Revision != named.From.Revision || found.Events != named.Events {
		t.Errorf("the found file's window starts at %d with %d events, --db's at %d with %d", found.From.Revision, found.Events, named.From.Revision, named.Events)
	}
	changedObject(t, named, "configmaps", "default", "late") // written between the renewals at 20s and 30s
}

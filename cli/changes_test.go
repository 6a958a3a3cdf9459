package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/embedded"
	"github.com/etcdscope/etcdscope/etcdview/changes"
	clientv3 "go.etcd.io/etcd/client/v3"
	coordinationv1 "k8s.io/api/coordination/v1"
)

const changesDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: h13-web
  namespace: default
spec:
  replicas: 1
  selector:
    matchLabels: {app: h13-web}
  template:
    metadata:
      labels: {app: h13-web}
    spec:
      containers:
      - name: web
        image: nginx:1.27
`

// TestChangesNamesTheWritersOfAScriptedSequence runs a sequence with the
// real kubectl, each step under a field manager of its own, against the
// bundled control plane in a process of its own; then changes over the
// sequence's revisions names each writer, counts what etcd's own watch
// counts in every group, shows the deletion, and reads the same from the
// stopped member's data file.
func TestChangesNamesTheWritersOfAScriptedSequence(t *testing.T) {
	t.Parallel()
	kc := newKubectl(t)
	dataDir := filepath.Join(t.TempDir(), "data")
	p := startServe(t, "--apiserver", "--members", "1", "--compaction-interval", "0", "--data-dir", dataDir)
	kc.kubeconfig = exportVar(t, p.export, "KUBECONFIG")
	etcd := changesClient(t, p.endpoints, p.tls)
	k := func(args ...string) { kc.run(t, args...) }

	from := headRevision(t, etcd) + 1
	k("create", "configmap", "h13-settings", "--from-literal=mode=a", "--field-manager=h13-creator")
	k("apply", "--server-side", "--field-manager=h13-applier", "-f", writeManifest(t, changesDeployment))
	k("scale", "deployment", "h13-web", "--replicas=3")
	k("label", "configmap", "h13-settings", "tier=gold", "--field-manager=h13-labeller")
	k("create", "configmap", "h13-kept", "--from-literal=x=1", "--field-manager=h13-creator")
	k("delete", "configmap", "h13-settings")
	to := headRevision(t, etcd)

	window := append([]string{"changes", "--from-rev", fmt.Sprint(from), "--to-rev", fmt.Sprint(to)}, p.conn()...)
	live := changesJSONOf(t, run(t, append(window, "-o", "json")...))
	if live.From.Revision != from || live.To.Revision != to {
		t.Errorf("window %d-%d, want %d-%d", live.From.Revision, live.To.Revision, from, to)
	}
	if got, want := groupCounts(live), watchedCounts(t, etcd, from, to); !equalCounts(got, want) {
		t.Errorf("counts per group:\n%v\netcd's watch of the same revisions:\n%v", got, want)
	}
	settings := changedObject(t, live, "configmaps", "default", "h13-settings")
	if settings.Counts != (changes.Counts{Added: 1, Modified: 1, Deleted: 1}) || settings.Summary != "created, then deleted" {
		t.Errorf("h13-settings: %+v %q, want one of each, created then deleted", settings.Counts, settings.Summary)
	}
	wantWriters(t, settings, "h13-creator Update", "h13-labeller Update")
	wantWriters(t, changedObject(t, live, "configmaps", "default", "h13-kept"), "h13-creator Update")
	// kubectl scale has no --field-manager: kube-apiserver names the
	// manager after the user agent's first segment (fieldmanager's
	// prefixFromUserAgent), here "kubectl".
	web := changedObject(t, live, "deployments", "default", "h13-web")
	wantWriters(t, web, "h13-applier Apply", "kubectl Update scale")
	if web.Counts.Added != 1 || web.FirstRevision < from || web.LastRevision.Revision > to {
		t.Errorf("h13-web: %+v, revisions %d-%d, want created within %d-%d", web.Counts, web.FirstRevision, web.LastRevision.Revision, from, to)
	}
	if live.From.Estimate == "unknown" || live.To.EstimatedTime == nil {
		t.Errorf("the window's times are not estimated: %+v %+v", live.From, live.To)
	}

	table := run(t, window...)
	if row := rowOf(table, "h13-settings"); !slices.Equal(row[3:6], []string{"1", "1", "1"}) || !strings.Contains(table, "created, then deleted") {
		t.Errorf("the table's row of h13-settings %q does not show its deletion:\n%s", row, table)
	}

	t.Run("since", func(t *testing.T) { changesSince(t, etcd, p.conn(), to, k) })

	if code := p.stop(t); code != 0 {
		t.Fatalf("serve exited %d", code)
	}
	dbs, _ := filepath.Glob(filepath.Join(dataDir, "*", "member", "snap", "db"))
	if len(dbs) != 1 {
		t.Fatalf("data files %q in %s, want one", dbs, dataDir)
	}
	offline := changesJSONOf(t, run(t, "changes", "--db", dbs[0], "--from-rev", fmt.Sprint(from), "--to-rev", fmt.Sprint(to), "-o", "json"))
	// The times are estimated from the Leases at each read's head: the
	// file's head is later, after the since test's writes.
	if a, b := mustJSON(t, withoutTimes(offline.Groups)), mustJSON(t, withoutTimes(live.Groups)); a != b {
		t.Errorf("the data file's changes differ from the live ones:\n%s\nlive:\n%s", a, b)
	}
}

// changesSince checks --since on the Lease kube-apiserver renews every
// 10 s: a window since a moment between two renewals holds what was
// written after it, and nothing written before the renewal before it.
func changesSince(t *testing.T, etcd *clientv3.Client, conn []string, before int64, k func(...string)) {
	waitRenewal(t, etcd, func(rev int64, _ time.Time) bool { return rev > before })
	split := time.Now()
	waitRenewal(t, etcd, func(_ int64, renew time.Time) bool { return renew.After(split.Add(time.Second)) })
	k("create", "configmap", "h13-late", "--from-literal=x=1", "--field-manager=h13-late")
	since := time.Since(split).Round(time.Millisecond)
	doc := changesJSONOf(t, run(t, append([]string{"changes", "--since", since.String(), "-o", "json"}, conn...)...))
	wantWriters(t, changedObject(t, doc, "configmaps", "default", "h13-late"), "h13-late Update")
	if doc.From.Revision <= before || !strings.Contains(doc.Since, "estimated") {
		t.Errorf("--since %s starts at %d (%q), want after the sequence's last revision %d", since, doc.From.Revision, doc.Since, before)
	}
	for _, g := range doc.Groups {
		for _, o := range g.Objects {
			if o.Name == "h13-kept" {
				t.Errorf("--since %s holds h13-kept, written before it", since)
			}
		}
	}
}

// waitRenewal waits until every Lease is renewed as ok wants it (its
// revision, its renew time): whichever of them changes picks as its clock.
func waitRenewal(t *testing.T, etcd *clientv3.Client, ok func(rev int64, renew time.Time) bool) {
	t.Helper()
	deadline := time.Now().Add(45 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := etcd.Get(t.Context(), "/registry/leases/", clientv3.WithPrefix())
		if err != nil {
			t.Fatal(err)
		}
		renewed, leases := 0, 0
		for _, kv := range resp.Kvs {
			l, isLease := decode.Decode(string(kv.Key), kv.Value).Object.(*coordinationv1.Lease)
			if isLease && l.Spec.RenewTime != nil {
				leases++
				if ok(kv.ModRevision, l.Spec.RenewTime.Time) {
					renewed++
				}
			}
		}
		if leases > 0 && renewed == leases {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatal("the Leases were not renewed as wanted within 45 s")
}

func writeManifest(t *testing.T, manifest string) string {
	path := filepath.Join(t.TempDir(), "manifest.yaml")
	if err := os.WriteFile(path, []byte(manifest), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func changesClient(t *testing.T, endpoints string, files *embedded.TLSFiles) *clientv3.Client {
	tc, err := files.ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: strings.Split(endpoints, ","), TLS: tc, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

func headRevision(t *testing.T, etcd *clientv3.Client) int64 {
	t.Helper()
	resp, err := etcd.Get(t.Context(), "health-probe-of-the-test")
	if err != nil {
		t.Fatal(err)
	}
	return resp.Header.Revision
}

// watchedCounts counts the events of revisions from to to by group, with a
// watch of etcd's own client: what changes must count.
func watchedCounts(t *testing.T, etcd *clientv3.Client, from, to int64) map[string]changes.Counts {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	wc := etcd.Watch(clientv3.WithRequireLeader(ctx), "\x00", clientv3.WithFromKey(), clientv3.WithRev(from), clientv3.WithProgressNotify())
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	counts := map[string]changes.Counts{}
	for {
		select {
		case <-tick.C:
			etcd.RequestProgress(ctx)
		case resp, ok := <-wc:
			if !ok || resp.Err() != nil {
				t.Fatalf("watch from %d: %v", from, resp.Err())
			}
			for _, ev := range resp.Events {
				if ev.Kv.ModRevision > to {
					return counts
				}
				k := decode.ParseKey(string(ev.Kv.Key))
				name := "other keys"
				if k.IsObject {
					name = k.Group + "/" + k.Resource + " " + k.Namespace
				}
				c := counts[name]
				switch {
				case ev.Type == clientv3.EventTypeDelete:
					c.Deleted++
				case ev.IsCreate():
					c.Added++
				default:
					c.Modified++
				}
				counts[name] = c
				if ev.Kv.ModRevision == to {
					return counts
				}
			}
			if resp.IsProgressNotify() && resp.Header.Revision >= to {
				return counts
			}
		}
	}
}

func groupCounts(doc changesJSON) map[string]changes.Counts {
	out := map[string]changes.Counts{}
	for _, g := range doc.Groups {
		name := "other keys"
		if g.Resource != "" {
			name = g.Group + "/" + g.Resource + " " + g.Namespace
		}
		out[name] = g.Counts
	}
	return out
}

func equalCounts(a, b map[string]changes.Counts) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func changesJSONOf(t *testing.T, out string) changesJSON {
	t.Helper()
	var doc changesJSON
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("changes -o json: %v\n%s", err, out)
	}
	return doc
}

func changedObject(t *testing.T, doc changesJSON, resource, ns, name string) changeObjectJSON {
	t.Helper()
	for _, g := range doc.Groups {
		for _, o := range g.Objects {
			if g.Resource == resource && g.Namespace == ns && o.Name == name {
				return o
			}
		}
	}
	t.Fatalf("no %s %s/%s among the changes: %s", resource, ns, name, mustJSON(t, doc.Groups))
	return changeObjectJSON{}
}

func withoutTimes(groups []changeGroupJSON) []changeGroupJSON {
	for _, g := range groups {
		for i := range g.Objects {
			g.Objects[i].LastRevision = revisionJSON{Revision: g.Objects[i].LastRevision.Revision}
		}
	}
	return groups
}

// wantWriters checks that o's writers include each of want,
// "manager Operation[ subresource]", the test's own each with a time. The
// API server records none for a write through the scale subresource
// (fieldmanager.ScaleHandler.ToParent keeps no time for its manager).
func wantWriters(t *testing.T, o changeObjectJSON, want ...string) {
	t.Helper()
	var got []string
	for _, w := range o.Writers {
		got = append(got, strings.TrimSpace(w.Manager+" "+w.Operation+" "+w.Subresource))
		if strings.HasPrefix(w.Manager, "h13-") && w.Time == nil {
			t.Errorf("%s: writer %s has no time", o.Name, w.Manager)
		}
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("%s: writers %q, want %q among them", o.Name, got, w)
		}
	}
}

// rowOf is the fields of the first line of out that names name.
func rowOf(out, name string) []string {
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); slices.Contains(f, name) && len(f) > 6 {
			return f
		}
	}
	return make([]string, 7)
}

func mustJSON(t *testing.T, v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestChangesRefusesABadWindow(t *testing.T) {
	db := kube17 + "boltdb-db"
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--from-rev", "5", "--to-rev", "3"}, "--from-rev 5 is after --to-rev 3"},
		{[]string{"--since", "0s"}, "want a positive duration"},
		{[]string{"--since", "10m", "--from-rev", "3"}, "[since from-rev]"},
		{[]string{"--from-rev", "1", "--to-rev", "999999999"}, "after the head revision 241828"},
		{[]string{"--since", "10m"}, "no Lease at revision 241828 records one: give --from-rev"},
		{[]string{"-o", "yaml"}, `unknown output format "yaml"`},
	}
	for _, tc := range tests {
		msg := runFails(t, append([]string{"changes", "--db", db}, tc.args...)...)
		if !strings.Contains(msg, tc.want) {
			t.Errorf("changes %q: %s, want %q in it", tc.args, msg, tc.want)
		}
	}
}

package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/embedded/etcdtest"
	"github.com/etcdscope/etcdscope/etcdview/etcdviewtest"
	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// matrixConfigMaps is how many ConfigMaps the matrix writes: more than a
// page of get's values (5,000), so that a List spans two.
const matrixConfigMaps = 5003

var matrixNamespaces = []string{"default", "kube-system", "team-a"}

// TestMatrixCommandsOnEachEtcd runs the commands against each etcd release
// line Kubernetes runs (3.4 to 3.7), in subtests named for the version.
// The steps share one etcd and run in order: the history step compacts, the
// last one turns authentication on.
func TestMatrixCommandsOnEachEtcd(t *testing.T) {
	etcdtest.EachVersion(t, func(t *testing.T, e etcdtest.Etcd) {
		m := &matrixRun{Etcd: e, flag: strings.Join(e.Endpoints, ",")}
		if e.TLS != nil {
			useTLS(t, e.TLS)
			m.tls = tlsFlags(e.TLS)
		}
		m.writeConfigMaps(t)
		for _, step := range []struct {
			name string
			run  func(t *testing.T)
		}{
			{"ls -l counts every key below each entry", m.ls},
			{"get -A lists every object across pages", m.getList},
			{"get --rev reads an object as it was", m.getAtRevision},
			{"history spans a deletion and a compaction", m.history},
			{"watch goes on after compaction and a restart", m.watch},
			{"status reports the member", m.status},
			{"a read-only user reads everything below /registry", m.readOnly},
		} {
			if !t.Run(step.name, step.run) {
				return
			}
		}
	})
}

type matrixRun struct {
	etcdtest.Etcd
	flag    string   // --endpoints
	tls     []string // the client certificate's flags, for a process of its own
	perNS   map[string]int
	written int64 // the revision the ConfigMaps were written at
}

func (m *matrixRun) put(t *testing.T, key, value string) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := m.Client.Put(ctx, key, value)
	if err != nil {
		t.Fatal(err)
	}
	return resp.Header.Revision
}

// writeConfigMaps writes the ConfigMaps as kube-apiserver stores them, a
// hundred to a transaction.
func (m *matrixRun) writeConfigMaps(t *testing.T) {
	m.perNS = map[string]int{}
	var ops []clientv3.Op
	for i := range matrixConfigMaps {
		ns := matrixNamespaces[i%len(matrixNamespaces)]
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%05d", i), Namespace: ns}, Data: map[string]string{"v": "1"}}
		key, err := etcdviewtest.Key(cm)
		if err != nil {
			t.Fatal(err)
		}
		val, err := etcdviewtest.Encode(cm)
		if err != nil {
			t.Fatal(err)
		}
		ops = append(ops, clientv3.OpPut(key, string(val)))
		m.perNS[ns]++
		if len(ops) == 100 || i == matrixConfigMaps-1 {
			resp, err := m.Client.Txn(t.Context()).Then(ops...).Commit()
			if err != nil {
				t.Fatal(err)
			}
			m.written, ops = resp.Header.Revision, nil
		}
	}
}

func (m *matrixRun) ls(t *testing.T) {
	want := fmt.Sprintf("%d  /registry/configmaps/\n", matrixConfigMaps)
	if got := run(t, "--endpoints", m.flag, "ls", "-l", "/registry/"); got != want {
		t.Errorf("ls -l /registry/ printed %q, want %q", got, want)
	}
	var lines []string
	for _, ns := range matrixNamespaces {
		lines = append(lines, fmt.Sprintf("%d  /registry/configmaps/%s/", m.perNS[ns], ns))
	}
	want = strings.Join(lines, "\n") + "\n"
	if got := run(t, "--endpoints", m.flag, "ls", "-l", "/registry/configmaps/"); got != want {
		t.Errorf("ls -l /registry/configmaps/ printed\n%s\nwant\n%s", got, want)
	}
	if got := run(t, "--endpoints", m.flag, "ls", "--count", "/registry/configmaps/team-a/"); got != fmt.Sprintln(m.perNS["team-a"]) {
		t.Errorf("ls --count printed %q, want %d", got, m.perNS["team-a"])
	}
}

func (m *matrixRun) getList(t *testing.T) {
	var list struct {
		Kind  string `json:"kind"`
		Items []struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
		} `json:"items"`
	}
	out := run(t, "--endpoints", m.flag, "get", "cm", "-A", "-o", "json")
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("get cm -A -o json: %v", err)
	}
	if len(list.Items) != matrixConfigMaps {
		t.Fatalf("a List of %d ConfigMaps, want %d", len(list.Items), matrixConfigMaps)
	}
	// Key order: namespace, then name.
	for i, item := range list.Items[1:] {
		prev := list.Items[i].Metadata
		if item.Metadata.Namespace+"/"+item.Metadata.Name <= prev.Namespace+"/"+prev.Name {
			t.Fatalf("item %s/%s after %s/%s: not once each in key order", item.Metadata.Namespace, item.Metadata.Name, prev.Namespace, prev.Name)
		}
	}
	table := strings.Split(strings.TrimSpace(run(t, "--endpoints", m.flag, "get", "cm", "-n", "team-a")), "\n")
	if len(table) != 1+m.perNS["team-a"] || !strings.HasPrefix(table[0], "NAME") {
		t.Errorf("get cm -n team-a: %d lines from %q, want a header and %d rows", len(table), table[0], m.perNS["team-a"])
	}
}

func (m *matrixRun) getAtRevision(t *testing.T) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm-00000", Namespace: "default"}, Data: map[string]string{"v": "2"}}
	etcdviewtest.Put(t, m.Client, cm)
	for rev, want := range map[string]string{fmt.Sprint(m.written): "1", "0": "2"} {
		var got corev1.ConfigMap
		out := run(t, "--endpoints", m.flag, "get", "cm", "cm-00000", "--rev", rev, "-o", "json")
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatal(err)
		}
		if got.Data["v"] != want {
			t.Errorf("get --rev %s: data %v, want v=%s", rev, got.Data, want)
		}
	}
}

func (m *matrixRun) history(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "default", Labels: map[string]string{"v": "1"}}}
	etcdviewtest.Put(t, m.Client, pod)
	pod.Labels["v"] = "2"
	kept := etcdviewtest.Put(t, m.Client, pod)
	if _, err := m.Client.Delete(t.Context(), "/registry/pods/default/web-0"); err != nil {
		t.Fatal(err)
	}
	pod.Labels["v"] = "3"
	etcdviewtest.Put(t, m.Client, pod)
	if _, err := m.Client.Compact(t.Context(), kept, clientv3.WithCompactPhysical()); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		CompactedAt int64 `json:"compactedAt"`
		Entries     []struct {
			Change string `json:"change"`
		} `json:"entries"`
	}
	out := run(t, "--endpoints", m.flag, "history", "/registry/pods/default/web-0", "-o", "json", "--all-incarnations")
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	var changes []string
	for _, e := range doc.Entries {
		changes = append(changes, e.Change)
	}
	if strings.Join(changes, " ") != "ADDED DELETED MODIFIED" || doc.CompactedAt != kept {
		t.Errorf("history %v compacted at %d, want ADDED DELETED MODIFIED compacted at %d", changes, doc.CompactedAt, kept)
	}
	if table := run(t, "--endpoints", m.flag, "history", "/registry/pods/default/web-0", "--all-incarnations"); !strings.Contains(table, fmt.Sprintf("before revision %d was compacted", kept)) {
		t.Errorf("the history table does not say where compaction cut it:\n%s", table)
	}
	if table := run(t, "--endpoints", m.flag, "history", "/registry/pods/default/web-0"); !strings.Contains(table, fmt.Sprintf("an earlier incarnation existed at revision %d", kept)) {
		t.Errorf("the history of the current incarnation does not say an earlier one exists:\n%s", table)
	}
}

func (m *matrixRun) watch(t *testing.T) {
	start := m.put(t, "/registry/busy/before", "x") + 1
	cmd, lines, stderr := startLines(t, append(m.tls, "--endpoints", m.flag, "watch", "/registry/quiet/", "--rev", fmt.Sprint(start), "-o", "json")...)

	var got []string
	expect := func(rev int64) {
		t.Helper()
		select {
		case line := <-lines:
			var ev struct{ Revision int64 }
			json.Unmarshal([]byte(line), &ev)
			got = append(got, line)
			if ev.Revision != rev {
				t.Fatalf("watch printed %q, want the event of revision %d; so far %q", line, rev, got)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("no event of revision %d within 30s; so far %q", rev, got)
		}
	}
	expect(m.put(t, "/registry/quiet/a", "1"))
	var head int64
	for i := range 50 {
		head = m.put(t, fmt.Sprintf("/registry/busy/k%02d", i), "a write outside the prefix")
	}
	if _, err := m.Client.Compact(t.Context(), head, clientv3.WithCompactPhysical()); err != nil {
		t.Fatal(err)
	}
	if err := m.Restart(); err != nil {
		t.Fatal(err)
	}
	expect(m.put(t, "/registry/quiet/b", "1"))
	cmd.Process.Signal(syscall.SIGINT)
	for line := range lines {
		t.Errorf("after the last write watch printed %q", line)
	}
	cmd.Wait()
	// 130 is Ctrl-C's status: the watch ran until interrupted.
	if code := cmd.ProcessState.ExitCode(); code != 130 || strings.Contains(stderr.String(), "Error") {
		t.Errorf("watch ended with status %d, want 130 from the interrupt; stderr:\n%s", code, stderr.String())
	}
	t.Logf("notes: %q", stderr.String())
}

func (m *matrixRun) status(t *testing.T) {
	var doc struct {
		Revision int64 `json:"revision"`
		Members  []struct {
			Leader  bool   `json:"leader"`
			Version string `json:"version"`
		} `json:"members"`
	}
	rev := m.put(t, "/registry/busy/status", "x")
	if err := json.Unmarshal([]byte(run(t, "--endpoints", m.flag, "status", "-o", "json")), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Members) != 1 || !doc.Members[0].Leader || !strings.HasPrefix(doc.Members[0].Version, m.Version+".") || doc.Revision < rev {
		t.Errorf("status %+v, want one leader of etcd %s at revision %d or later", doc, m.Version, rev)
	}
}

func (m *matrixRun) readOnly(t *testing.T) {
	etcdtest.EnableReadOnlyUser(t, m.Client)
	viewer := []string{"--endpoints", m.flag, "--user", etcdtest.ReadOnlyUser + ":" + etcdtest.ReadOnlyPassword}
	if got := run(t, append(viewer, "ls", "--count", "/registry/configmaps/")...); got != fmt.Sprintln(matrixConfigMaps) {
		t.Errorf("ls --count as the read-only user printed %q, want %d", got, matrixConfigMaps)
	}
	for _, args := range [][]string{
		{"ls", "-l", "/registry/"},
		{"get", "cm", "cm-00001", "-n", "kube-system"},
		{"history", "/registry/pods/default/web-0"},
		{"status"},
	} {
		run(t, append(viewer, args...)...)
	}
	if msg := runFails(t, append(viewer, "get", "/other")...); !strings.Contains(msg, "permission denied") {
		t.Errorf("a read outside the user's role failed with %q, want permission denied", msg)
	}
}

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
	"github.com/etcdscope/etcdscope/etcdview/changes"
	"github.com/etcdscope/etcdscope/etcdview/etcdviewtest"
	clientv3 "go.etcd.io/etcd/client/v3"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// matrixConfigMaps is how many ConfigMaps the matrix writes: more than a
// page of get's values (5,000), so that a List spans two.
const matrixConfigMaps = 5003

var matrixNamespaces = []string{"default", "kube-system", "team-a"}

// TestMatrixCommandsOnEachServer runs the commands against each etcd release
// line Kubernetes runs (3.4 to 3.7) and kine, in subtests named for the
// version, which run beside each other. The steps share one server and run
// in order: the history step compacts, the last one turns authentication
// on. Where kine answers otherwise than etcd, its subtest asserts what the
// user is told.
func TestMatrixCommandsOnEachServer(t *testing.T) {
	t.Parallel()
	etcdtest.EachServer(t, func(t *testing.T, e etcdtest.Etcd) {
		t.Parallel()
		m := &matrixRun{Etcd: e, flag: strings.Join(e.Endpoints, ","), kine: e.Version == "kine"}
		if e.TLS != nil {
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
			{"du --history counts the revisions held", m.du},
			{"changes counts what a window added, modified and deleted", m.changes},
			{"owners finds an owner and an orphan", m.owners},
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
	tls     []string // the client certificate's flags
	kine    bool
	perNS   map[string]int
	written int64 // the revision the ConfigMaps were written at
}

// args are etcdscope's connection flags for the server, then args.
func (m *matrixRun) args(args ...string) []string {
	return append(append([]string{"--endpoints", m.flag}, m.tls...), args...)
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
		m.perNS[ns]++
		if m.kine {
			// kine refuses a transaction of more than one write.
			m.written = m.put(t, key, string(val))
			continue
		}
		ops = append(ops, clientv3.OpPut(key, string(val)))
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
	if m.kine {
		// kine writes /registry/health itself, for its health check.
		want += "   1  /registry/health\n"
	}
	if got := run(t, m.args("ls", "-l", "/registry/")...); got != want {
		t.Errorf("ls -l /registry/ printed %q, want %q", got, want)
	}
	var lines []string
	for _, ns := range matrixNamespaces {
		lines = append(lines, fmt.Sprintf("%d  /registry/configmaps/%s/", m.perNS[ns], ns))
	}
	want = strings.Join(lines, "\n") + "\n"
	if got := run(t, m.args("ls", "-l", "/registry/configmaps/")...); got != want {
		t.Errorf("ls -l /registry/configmaps/ printed\n%s\nwant\n%s", got, want)
	}
	if got := run(t, m.args("ls", "--count", "/registry/configmaps/team-a/")...); got != fmt.Sprintln(m.perNS["team-a"]) {
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
	out := run(t, m.args("get", "cm", "-A", "-o", "json")...)
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
	table := strings.Split(strings.TrimSpace(run(t, m.args("get", "cm", "-n", "team-a")...)), "\n")
	if len(table) != 1+m.perNS["team-a"] || !strings.HasPrefix(table[0], "NAME") {
		t.Errorf("get cm -n team-a: %d lines from %q, want a header and %d rows", len(table), table[0], m.perNS["team-a"])
	}
}

func (m *matrixRun) getAtRevision(t *testing.T) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm-00000", Namespace: "default"}, Data: map[string]string{"v": "2"}}
	etcdviewtest.Put(t, m.Client, cm)
	for rev, want := range map[string]string{fmt.Sprint(m.written): "1", "0": "2"} {
		var got corev1.ConfigMap
		out := run(t, m.args("get", "cm", "cm-00000", "--rev", rev, "-o", "json")...)
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
	if err := etcdtest.Delete(t.Context(), m.Client, "/registry/pods/default/web-0"); err != nil {
		t.Fatal(err)
	}
	pod.Labels["v"] = "3"
	etcdviewtest.Put(t, m.Client, pod)
	m.compact(t, kept)
	var doc struct {
		CompactedAt int64 `json:"compactedAt"`
		Entries     []struct {
			Change string `json:"change"`
		} `json:"entries"`
	}
	out := run(t, m.args("history", "/registry/pods/default/web-0", "-o", "json", "--all-incarnations")...)
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
	if table := run(t, m.args("history", "/registry/pods/default/web-0", "--all-incarnations")...); !strings.Contains(table, fmt.Sprintf("before revision %d was compacted", kept)) {
		t.Errorf("the history table does not say where compaction cut it:\n%s", table)
	}
	table := run(t, m.args("history", "/registry/pods/default/web-0")...)
	if !strings.Contains(table, fmt.Sprintf("an earlier incarnation existed at revision %d", kept)) {
		t.Errorf("the history of the current incarnation does not say an earlier one exists:\n%s", table)
	}
	// The incarnation's one revision is its version 1, on kine too, which
	// reports none: its versions are counted from the creation.
	if rows := strings.Split(table, "\n"); len(rows) < 2 || len(strings.Fields(rows[1])) < 3 || strings.Fields(rows[1])[2] != "1" {
		t.Errorf("the history's VERSION is not 1:\n%s", table)
	}
	// The first version of web-0 is below the compaction: a reader is told
	// so, not that web-0 did not exist (what kine before 0.17 answered).
	want := fmt.Sprintf("revision %d has been compacted", kept-1)
	if msg := runFails(t, m.args("get", "pod", "web-0", "--rev", fmt.Sprint(kept-1))...); !strings.Contains(msg, want) {
		t.Errorf("get --rev below the compaction failed with %q, want %q", msg, want)
	}
}

// kineMinRetain is how many of the newest revisions kine never compacts
// (its --compact-min-retain, 1000 by default, as k3s runs it): it compacts
// to no more than the head minus these.
const kineMinRetain = 1000

// compact compacts to rev. On kine, which caps a compaction to its retained
// revisions and says nothing of it, as many writes elsewhere first put rev
// where kine compacts to it.
func (m *matrixRun) compact(t *testing.T, rev int64) {
	t.Helper()
	if m.kine {
		for i := range kineMinRetain {
			m.put(t, fmt.Sprintf("/registry/busy/retained-%d", i%10), "x")
		}
	}
	if _, err := m.Client.Compact(t.Context(), rev, clientv3.WithCompactPhysical()); err != nil {
		t.Fatal(err)
	}
}

// du reads what the history step left of web-0: the revision compaction
// kept, the deletion and the current value.
func (m *matrixRun) du(t *testing.T) {
	if m.Version == "3.4" {
		// Debian's 3.4.23 answers progress requests out of order (etcd#15220).
		msg := runFails(t, m.args("du", "/registry/pods/", "--history")...)
		if !strings.Contains(msg, "cannot be counted live; read a snapshot of it with --db") {
			t.Errorf("du --history on etcd 3.4 failed with %q, want it to say the revisions cannot be counted live", msg)
		}
		return
	}
	var doc struct {
		Tree struct {
			Keys, Revisions, Tombstones int64
		} `json:"tree"`
		Members []struct {
			DBSize int64 `json:"dbSize"`
		} `json:"members"`
	}
	if err := json.Unmarshal([]byte(run(t, m.args("du", "/registry/pods/", "--history", "-o", "json")...)), &doc); err != nil {
		t.Fatal(err)
	}
	if tr := doc.Tree; tr.Keys != 1 || tr.Revisions != 2 || tr.Tombstones != 1 {
		t.Errorf("du --history of /registry/pods/: %+v, want 1 key, 2 revisions that put a value and a deletion", tr)
	}
	if len(doc.Members) != 1 || doc.Members[0].DBSize <= 0 {
		t.Errorf("du's members %+v, want one with its DB size", doc.Members)
	}
	if !m.kine {
		return
	}
	// kine counts no writes of a key (etcd's version) and has no quota: du
	// says so rather than show zeros and a forecast against etcd's quota.
	table := run(t, m.args("du", "/registry/pods/")...)
	for _, want := range []string{"kine (emulating etcd ", "HOTTEST: not known: kine keeps no count of a key's writes", "kine has no quota"} {
		if !strings.Contains(table, want) || strings.Contains(table, "forecast:") {
			t.Errorf("du on kine lacks %q, or forecasts:\n%s", want, table)
		}
	}
}

// changes writes a window of one creation, one update and one deletion of
// ConfigMaps, and reads it back.
func (m *matrixRun) changes(t *testing.T) {
	from := m.put(t, "/registry/busy/before-changes", "x") + 1
	etcdviewtest.Put(t, m.Client, etcdviewtest.ConfigMap("changed"))
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm-00001", Namespace: "kube-system"}, Data: map[string]string{"v": "2"}}
	etcdviewtest.Put(t, m.Client, cm)
	if err := etcdtest.Delete(t.Context(), m.Client, "/registry/configmaps/team-a/cm-00002"); err != nil {
		t.Fatal(err)
	}
	var doc changesJSON
	out := run(t, m.args("changes", "/registry/configmaps/", "--from-rev", fmt.Sprint(from), "-o", "json")...)
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if want := (changes.Counts{Added: 1, Modified: 1, Deleted: 1}); doc.Counts != want || doc.Events != 3 {
		t.Errorf("changes from revision %d: %d events, %+v, want 3, %+v:\n%s", from, doc.Events, doc.Counts, want, out)
	}
}

// owners writes a ReplicaSet with a Pod it owns, and a ConfigMap whose
// owner no object is.
func (m *matrixRun) owners(t *testing.T) {
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "owned", UID: "0b7e5a3c-0000-4000-8000-000000000001"}}
	ref := func(uid types.UID) []metav1.OwnerReference {
		return []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web", UID: uid, Controller: ptr.To(true)}}
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "owned", UID: "0b7e5a3c-0000-4000-8000-000000000002", OwnerReferences: ref(rs.UID)}}
	orphan := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "orphan", Namespace: "owned", UID: "0b7e5a3c-0000-4000-8000-000000000003", OwnerReferences: ref("0b7e5a3c-0000-4000-8000-00000000dead")}}
	etcdviewtest.Put(t, m.Client, rs, pod, orphan)
	ep := m.args()
	tree := ownersJSON(t, ep, "pod", "web-1", "-n", "owned")
	if got := tree.Roots; len(got) != 1 || got[0].Kind != "ReplicaSet" || got[0].Name != "web" || len(got[0].Dependents) != 1 || got[0].Dependents[0].Name != "web-1" {
		t.Errorf("owners of pod web-1: %+v, want it below ReplicaSet web", got)
	}
	findings := findingsJSON(t, ep, "-n", "owned")
	if len(findings) != 1 || findings[0].Name != "orphan" || findings[0].Problem != "orphan" {
		t.Errorf("owners --orphans -n owned: %+v, want the ConfigMap orphan", findings)
	}
}

func (m *matrixRun) watch(t *testing.T) {
	start := m.put(t, "/registry/busy/before", "x") + 1
	cmd, lines, stderr := startLines(t, m.args("watch", "/registry/quiet/", "--rev", fmt.Sprint(start), "-o", "json")...)

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
	m.compact(t, head)
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
		Server   string `json:"server"`
		Revision int64  `json:"revision"`
		Members  []struct {
			Leader   bool   `json:"leader"`
			Version  string `json:"version"`
			Revision int64  `json:"revision"`
		} `json:"members"`
	}
	rev := m.put(t, "/registry/busy/status", "x")
	if err := json.Unmarshal([]byte(run(t, m.args("status", "-o", "json")...)), &doc); err != nil {
		t.Fatal(err)
	}
	server, version := "etcd", m.Version+"."
	if m.kine {
		// kine's Status says the etcd version it emulates, and no revision.
		st, err := m.Client.Status(t.Context(), m.Endpoints[0])
		if err != nil {
			t.Fatal(err)
		}
		server, version = "kine (emulating etcd "+st.Version+")", st.Version
		table := run(t, m.args("status")...)
		if want := fmt.Sprintf("%s at %s, revision ", server, m.flag); !strings.HasPrefix(table, want) || strings.Contains(table, "TERM") {
			t.Errorf("status on kine printed\n%s\nwant it to begin %q, without Raft's columns", table, want)
		}
	}
	if len(doc.Members) != 1 || !doc.Members[0].Leader || !strings.HasPrefix(doc.Members[0].Version, version) ||
		doc.Revision < rev || doc.Members[0].Revision != doc.Revision || doc.Server != server {
		t.Errorf("status %+v, want one leader of %s %s at revision %d or later", doc, server, version, rev)
	}
}

func (m *matrixRun) readOnly(t *testing.T) {
	if m.kine {
		// kine serves no Auth API: there is no user to make read-only,
		// and a user is refused when the client authenticates.
		if msg := runFails(t, m.args("--user", "viewer:secret", "ls", "/registry/")...); !strings.Contains(msg, "it serves no users") || !strings.Contains(msg, "connect without --user") {
			t.Errorf("--user against kine failed with %q, want it to say kine has no users", msg)
		}
		return
	}
	etcdtest.EnableReadOnlyUser(t, m.Client)
	viewer := m.args("--user", etcdtest.ReadOnlyUser+":"+etcdtest.ReadOnlyPassword)
	// kube-system's ConfigMaps are those the matrix wrote first: the
	// steps since created and deleted others.
	if got := run(t, append(viewer, "ls", "--count", "/registry/configmaps/kube-system/")...); got != fmt.Sprintln(m.perNS["kube-system"]) {
		t.Errorf("ls --count as the read-only user printed %q, want %d", got, m.perNS["kube-system"])
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

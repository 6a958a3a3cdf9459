package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/etcdview/etcdviewtest"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// duDoc is the part of du -o json the tests read.
type duDoc struct {
	Revision        int64 `json:"revision"`
	CompactRevision int64 `json:"compactRevision"`
	History         bool  `json:"history"`
	Tree            duNode
	Largest         []struct{ Key string }
	Hottest         []struct {
		Key     string
		Version int64
	}
	Members []struct {
		DBSize int64 `json:"dbSize"`
		Quota  int64 `json:"quota"`
	}
	Rates *struct {
		RevisionsPerSecond float64 `json:"revisionsPerSecond"`
	}
	Layout *struct {
		Size    int64 `json:"size"`
		Buckets []struct{ Name string }
	}
	Guidance []struct{ Subject, Text string }
}

type duNode struct {
	Name, Path         string
	Role               string
	Keys, Bytes        int64
	Writes, Revisions  int64
	ShareOfParent      float64 `json:"shareOfParent"`
	RevisionsPerSecond float64 `json:"revisionsPerSecond"`
	Children           []duNode
}

func duJSON(t *testing.T, args ...string) duDoc {
	t.Helper()
	out := run(t, append([]string{"du", "-o", "json"}, args...)...)
	var d duDoc
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("du -o json: %v\n%s", err, out)
	}
	return d
}

func (n duNode) child(name string) duNode {
	for _, c := range n.Children {
		if c.Name == name {
			return c
		}
	}
	return duNode{}
}

func TestDuOnAKubernetes17DataFile(t *testing.T) {
	db := kube17 + "boltdb-db"
	b, err := os.ReadFile(kube17 + "boltdb-keys.txt")
	if err != nil {
		t.Fatal(err)
	}
	var registry int64
	for _, k := range strings.Fields(string(b)) {
		if strings.HasPrefix(k, "/registry/") {
			registry++
		}
	}
	d := duJSON(t, "--db", db, "--depth", "3")
	if d.Tree.Path != "/registry/" || d.Tree.Keys != registry || !d.History || d.CompactRevision != 241828 {
		t.Errorf("tree %s with %d keys, history %v, compaction %d; want /registry/ with %d, history, 241828", d.Tree.Path, d.Tree.Keys, d.History, d.CompactRevision, registry)
	}
	pod := d.Tree.child("pods/").child("default/").child("pi-dqtsw")
	if pod.Role != "object" || pod.Keys != 1 || pod.Revisions != 1 || d.Largest[0].Key != "/registry/pods/default/pi-dqtsw" {
		t.Errorf("the pod %+v, largest %+v: want an object with one revision, the largest", pod, d.Largest)
	}
	if d.Layout == nil || d.Layout.Size != d.Members[0].DBSize || len(d.Layout.Buckets) == 0 {
		t.Errorf("layout %+v, members %+v: want the file's pages, and its DB size", d.Layout, d.Members)
	}
	table := run(t, "du", "--db", db, "--depth", "1", "--sort", "keys")
	for _, want := range []string{"NAME", "KEYS", "%PARENT", "REVISIONS", "LARGEST", "MEMBER", "BUCKET", "GUIDANCE", "/registry/pods/default/pi-dqtsw"} {
		if !strings.Contains(table, want) {
			t.Errorf("the table lacks %q:\n%s", want, table)
		}
	}
	if strings.Contains(table, "history: not read") || strings.Contains(table, "\x1b[") {
		t.Errorf("a data file's table says history was not read, or has colour codes on a pipe:\n%s", table)
	}
}

func TestDuRefusesWhatMeansNothing(t *testing.T) {
	db := kube17 + "boltdb-db"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--sort", "size"}, `--sort: unknown measure "size": want bytes, keys, revisions or rate`},
		{[]string{"--depth", "-1"}, "--depth -1: want 0 or more"},
		{[]string{"--top", "-3"}, "--top -3: want 0 or more"},
		{[]string{"--quota-bytes", "0"}, "--quota-bytes 0: want more than 0"},
		{[]string{"--rate-for", "-1s"}, "--rate-for -1s: want 0 or more"},
		{[]string{"-o", "yaml"}, `unknown output format "yaml": want table or json`},
		{[]string{"--rev", "3"}, "revision 3 has been compacted: the oldest revision etcd still holds is 241828"},
		{[]string{"--rev", "999999999"}, "revision 999999999 is in the future"},
	} {
		if msg := runFails(t, append([]string{"du", "--db", db}, c.args...)...); !strings.Contains(msg, c.want) {
			t.Errorf("du %s: %q, want it to say %q", strings.Join(c.args, " "), msg, c.want)
		}
	}
}

// lease is a node's Lease as its kubelet writes it, with the managedFields
// kube-apiserver records.
func lease(name string, renewals int32) *coordinationv1.Lease {
	now := metav1.NewTime(time.Unix(1_700_000_000, 0))
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kube-node-lease", ManagedFields: []metav1.ManagedFieldsEntry{
			{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, Time: &metav1.Time{Time: now.Add(-time.Hour)}},
			{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate, Time: &now},
		}},
		Spec: coordinationv1.LeaseSpec{LeaseTransitions: &renewals},
	}
}

func TestDuLiveShowsEventsLeasesAndTheHotKeysWriter(t *testing.T) {
	_, endpoints, cli := startEtcd(t, 1)
	var events []string
	for i := range 300 {
		events = append(events, fmt.Sprintf("/registry/events/crashloop/web-%d.17a", i))
	}
	etcdviewtest.PutKeys(t, cli, events, strings.Repeat("e", 1000))
	for i := range 60 {
		etcdviewtest.Put(t, cli, lease("node-1", int32(i)))
	}
	etcdviewtest.Put(t, cli, lease("node-2", 0))
	d := duJSON(t, "--endpoints", endpoints, "--depth", "2", "--history")
	first := d.Tree.Children[0]
	if first.Name != "events/" || first.Keys != 300 || first.ShareOfParent < 0.9 {
		t.Errorf("first level %+v, want events/ with 300 keys and most of the bytes", first)
	}
	leases := d.Tree.child("leases/")
	// 60 and 1 versions; with history, each version is a revision etcd
	// still holds (nothing was compacted).
	if leases.Writes != 61 || leases.Revisions != 61 || !d.History {
		t.Errorf("leases/ %+v, want 61 writes and 61 revisions held", leases)
	}
	if len(d.Hottest) == 0 || d.Hottest[0].Key != "/registry/leases/kube-node-lease/node-1" || d.Hottest[0].Version != 60 {
		t.Errorf("hottest %+v, want node-1's lease with 60 versions", d.Hottest)
	}
	var guidance []string
	for _, g := range d.Guidance {
		guidance = append(guidance, g.Subject+": "+g.Text)
	}
	all := strings.Join(guidance, "\n")
	for _, want := range []string{
		"/registry/events/: Events: 300 keys",
		"/registry/leases/kube-node-lease/node-1: hot key: 60 writes",
		"last written by kubelet (Update) (managedFields)",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("guidance lacks %q:\n%s", want, all)
		}
	}
	if len(d.Members) != 1 || d.Members[0].DBSize == 0 || d.Members[0].Quota != 2<<30 {
		t.Errorf("members %+v, want one with its DB size, against 2 GiB", d.Members)
	}
}

func TestDuMeasuresTheLiveRateOfWrites(t *testing.T) {
	_, endpoints, cli := startEtcd(t, 1)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	stop := func() { cancel(); wg.Wait() }
	t.Cleanup(stop) // before etcd stops, however the test ends
	wg.Add(1)
	// du scans once the writes flow: a scan that starts before the first
	// put lands finds an empty tree, with no events/ to rank.
	flowing := make(chan struct{})
	go func() {
		defer wg.Done()
		landed := false
		for i := 0; ctx.Err() == nil; i++ {
			if _, err := cli.Put(ctx, fmt.Sprintf("/registry/events/ns/e-%d", i%50), "x"); err == nil && !landed {
				landed = true
				close(flowing)
			}
		}
	}()
	select {
	case <-flowing:
	case <-time.After(30 * time.Second):
		t.Fatal("no write landed in 30s")
	}
	d := duJSON(t, "--endpoints", endpoints, "--depth", "1", "--rate-for", "2s", "--sort", "rate")
	stop()
	if len(d.Tree.Children) == 0 {
		t.Fatalf("du found no keys under /registry/ with the writes flowing: %+v", d.Tree)
	}
	events := d.Tree.child("events/")
	if d.Rates == nil || d.Rates.RevisionsPerSecond <= 0 || events.RevisionsPerSecond <= 0 || d.Tree.Children[0].Name != "events/" {
		t.Errorf("rates %+v, events/ %+v, first %q: want writes measured, events/ first by rate", d.Rates, events, d.Tree.Children[0].Name)
	}
	table := run(t, "du", "--endpoints", endpoints, "--depth", "0")
	if !strings.Contains(table, "history: not read") {
		t.Errorf("a live table without --history does not say history was not read:\n%s", table)
	}
}

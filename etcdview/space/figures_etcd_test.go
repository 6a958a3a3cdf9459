package space

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/etcdscope/etcdscope/embedded/etcdtest"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/etcdview/etcdviewtest"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/protobuf/proto"
)

const kube17 = "../../testdata/kube-1.7/"

// runJSON runs a command and decodes its JSON output into v.
func runJSON(t *testing.T, v any, name string, args ...string) {
	t.Helper()
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr)
	}
	if err := json.Unmarshal(out, v); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// TestReportAgreesWithEtcdsOwnFigures holds a report to what etcd's own
// tools say of the same data: etcdctl endpoint status and a count of keys
// on the live etcd, etcdutl snapshot status on a snapshot of it.
func TestReportAgreesWithEtcdsOwnFigures(t *testing.T) {
	c, cli := etcdtest.StartBundled(t, 1)
	writeFixture(t, cli)
	var keys []string
	for i := range 2000 {
		keys = append(keys, fmt.Sprintf("/registry/configmaps/ns-%d/cm-%d", i%20, i))
	}
	etcdviewtest.PutKeys(t, cli, keys, strings.Repeat("x", 1024))
	if _, err := cli.Delete(testCtx(t), "/registry/configmaps/ns-1/", clientv3.WithPrefix()); err != nil {
		t.Fatal(err)
	}
	f := c.TLS()
	ep := []string{"--endpoints", c.Endpoints()[0], "--cacert", f.CA, "--cert", f.Cert, "--key", f.Key}
	// A snapshot makes etcd commit its backend (it sizes the DB at each
	// commit, every 100 ms by default): the figures hold still after it.
	file, path := snapshotFile(t, cli)

	live := runReport(t, etcdview.NewLive(cli, 0), Options{Depth: 1})
	etcdctl := etcdtest.Etcdctl(t)
	var status []struct {
		Status struct {
			DBSize      int64 `json:"dbSize"`
			DBSizeInUse int64 `json:"dbSizeInUse"`
		}
	}
	runJSON(t, &status, etcdctl, append(ep, "endpoint", "status", "-w", "json")...)
	// The same Status RPC, on an etcd nothing writes to: the same figures.
	if len(status) != 1 || len(live.Members) != 1 || live.Members[0].DBSize != status[0].Status.DBSize || live.Members[0].InUse != status[0].Status.DBSizeInUse {
		t.Errorf("members %+v, etcdctl endpoint status %+v: want the same DB size and size in use", live.Members, status)
	}
	// A range's count is the keys etcd holds as of its revision; etcd 3.4's
	// etcdctl has no --count-only, a limit of 1 still counts them all.
	var count struct{ Count int64 }
	runJSON(t, &count, etcdctl, append(ep, "get", "", "--from-key", "--limit", "1", "-w", "json")...)
	if live.Root.Keys != count.Count {
		t.Errorf("live report: %d keys, etcdctl counts %d", live.Root.Keys, count.Count)
	}

	offline := runReport(t, file, Options{Depth: 1})
	etcdutl := etcdtest.VersionBinary(t, "etcdutl")
	var snap struct {
		Revision  int64 `json:"revision"`
		TotalKey  int64 `json:"totalKey"`
		TotalSize int64 `json:"totalSize"`
	}
	runJSON(t, &snap, etcdutl, "snapshot", "status", path, "-w", "json")
	// etcdutl counts the keys whose newest revision in the file is not a
	// deletion, as du does; its size is bbolt's high-water mark, du's DB
	// size; its revision the newest in the "key" bucket, du's too while
	// nothing was compacted after the last write.
	if offline.Root.Keys != snap.TotalKey || offline.Members[0].DBSize != snap.TotalSize || offline.Layout.Size != snap.TotalSize || offline.Revision != snap.Revision {
		t.Errorf("offline: %d keys, %d bytes, revision %d; etcdutl snapshot status: %+v", offline.Root.Keys, offline.Members[0].DBSize, offline.Revision, snap)
	}
	if offline.Root.Keys != live.Root.Keys || offline.Root.Bytes != live.Root.Bytes || offline.Root.Writes != live.Root.Writes {
		t.Errorf("offline %+v, live %+v: want the same keys, bytes and writes", offline.Root.Stats, live.Root.Stats)
	}
	// A snapshot is the member's file as bbolt copies it (Tx.WriteTo): the
	// same pages, so the same size. In use differs by the pages the last
	// commits freed: a running etcd counts them in use (bbolt's pending
	// pages, not in its FreePageN until no reader may need them), the file
	// free, as etcd would after a restart.
	m := live.Members[0]
	if offline.Layout.Size != m.DBSize || offline.Layout.InUse > m.InUse || offline.Layout.InUse <= 0 {
		t.Errorf("snapshot layout %d bytes, %d in use; the member says %d, %d", offline.Layout.Size, offline.Layout.InUse, m.DBSize, m.InUse)
	}
}

func TestReportOfAKubernetes17DataFile(t *testing.T) {
	f, err := etcdview.OpenFile(kube17 + "boltdb-db")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := os.ReadFile(kube17 + "boltdb-keys.txt")
	if err != nil {
		t.Fatal(err)
	}
	keys := strings.Fields(string(b))
	// Every level down to the objects: "/", "registry/", resource,
	// namespace, name.
	r := runReport(t, f, Options{Depth: 5})
	var total Stats
	perResource := map[string]int64{}
	for _, key := range keys {
		kv, err := f.Get(testCtx(t), key, 0)
		if err != nil {
			t.Fatal(err)
		}
		n := r.Find(key)
		size := int64(proto.Size(&mvccpb.KeyValue{Key: []byte(key), Value: kv.Value, CreateRevision: kv.CreateRevision,
			ModRevision: kv.ModRevision, Version: kv.Version, Lease: kv.Lease}))
		// The file was compacted at its last revision: each key holds
		// its current revision alone.
		want := Stats{Keys: 1, Bytes: size, Writes: kv.Version, Revisions: 1, RevisionBytes: size}
		if n == nil || n.Stats != want {
			t.Errorf("%s: %+v, want %+v", key, n, want)
		}
		total.Keys, total.Bytes = total.Keys+1, total.Bytes+size
		if strings.HasPrefix(key, "/registry/") {
			perResource[strings.SplitN(key, "/", 4)[2]]++
		}
	}
	if r.Root.Keys != total.Keys || r.Root.Bytes != total.Bytes || r.Root.HeldBytes() != total.Bytes {
		t.Errorf("root %+v, want %d keys, %d bytes, history the same bytes", r.Root.Stats, total.Keys, total.Bytes)
	}
	reg := r.Find("/registry/")
	var counts []string
	for _, c := range Sorted(reg.Children, ByKeys, nil, true) {
		counts = append(counts, fmt.Sprintf("%s%d", c.Name, c.Keys))
		if c.Keys != perResource[strings.TrimSuffix(c.Name, "/")] {
			t.Errorf("%s counts %d objects, boltdb-keys.txt has %d", c.Name, c.Keys, perResource[c.Name])
		}
	}
	if len(counts) != len(perResource) {
		t.Errorf("resources %q, boltdb-keys.txt has %v", counts, perResource)
	}
	if len(r.Root.Largest) == 0 || r.Root.Largest[0].Key != "/registry/pods/default/pi-dqtsw" {
		t.Errorf("largest %+v, want the pod first", r.Root.Largest)
	}
	if r.CompactRevision != 241828 || r.Layout == nil || r.Members[0].DBSize != r.Layout.Size || !slices.ContainsFunc(r.Layout.Buckets, func(b etcdview.BucketLayout) bool {
		return b.Name == "key" && b.Keys == len(keys) && b.Pages > 0
	}) {
		t.Errorf("compaction %d, layout %+v, members %+v: want the compaction at 241828 and a key bucket of %d entries", r.CompactRevision, r.Layout, r.Members, len(keys))
	}
}

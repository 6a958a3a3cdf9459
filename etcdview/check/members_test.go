package check

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/embedded/etcdtest"
	"github.com/etcdscope/etcdscope/etcdview"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// clusterWithKeys is a 3-member cluster holding n ConfigMap keys, each
// written twice (so that versions and mod revisions differ from creation).
func clusterWithKeys(t *testing.T, n int) (*etcdtest.Cluster, *clientv3.Client) {
	t.Helper()
	c := etcdtest.StartCluster(t, 3, etcdtest.ClusterOptions{})
	cli := c.Client(t)
	ctx := context.Background()
	for i := range n {
		key := fmt.Sprintf("/registry/configmaps/default/cm-%03d", i)
		for v := range 2 {
			if _, err := cli.Put(ctx, key, fmt.Sprintf("value %d of %d", v, i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	return c, cli
}

func dial(t *testing.T, c *etcdtest.Cluster, user, password string) *etcdview.Live {
	t.Helper()
	l, err := etcdview.Connect(context.Background(), etcdview.Config{Endpoints: c.Endpoints(), Username: user, Password: password})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func run(t *testing.T, src etcdview.Source, opts Options) *Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := Members(ctx, src, opts)
	if err != nil {
		t.Fatalf("check members: %v", err)
	}
	return r
}

// waitRevision waits until every member of c has applied rev, so that a
// member just restarted is not reported behind.
func waitRevision(t *testing.T, cli *clientv3.Client, c *etcdtest.Cluster, rev int64) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for _, m := range c.Members {
		for {
			st, err := cli.Status(context.Background(), m.Endpoint)
			if err == nil && st.Header.Revision >= rev {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s not at revision %d: %v", m.Endpoint, rev, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// wrapped is a Source that wraps a live etcd, as a screen's source may: its
// members are compared through the DialMember it passes on.
type wrapped struct{ *etcdview.Live }

func TestMembersOfAHealthyClusterAgreeByHash(t *testing.T) {
	t.Parallel()
	c, _ := clusterWithKeys(t, 50)
	live := dial(t, c, "", "")
	for _, src := range []etcdview.Source{live, wrapped{live}} {
		r := run(t, src, Options{})
		if !r.Consistent || r.Failed() || r.Method != MethodHash || len(r.Differences) != 0 {
			t.Fatalf("healthy cluster through %T: consistent %v, method %q, %d differences, note %q, single %q", src, r.Consistent, r.Method, len(r.Differences), r.Note, r.Single)
		}
		if len(r.Members) != 3 {
			t.Fatalf("members: %+v", r.Members)
		}
		for _, m := range r.Members {
			if !m.Hashed || m.Hash != r.Members[0].Hash || !strings.HasPrefix(m.State, "hash ") {
				t.Errorf("member %s: hashed %v, hash %08x, state %q", m.Name, m.Hashed, m.Hash, m.State)
			}
		}
	}
}

func TestMembersFindTheKeyAlteredOnOneMembersDisk(t *testing.T) {
	t.Parallel()
	c, cli := clusterWithKeys(t, 200)
	const key = "/registry/configmaps/default/cm-117"
	orig, err := cli.Get(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	bad := c.Members[2]
	bad.Stop()
	if err := bad.AlterValue(key, []byte("value 1 of 117, flipped")); err != nil {
		t.Fatal(err)
	}
	if err := bad.Start(); err != nil {
		t.Fatal(err)
	}
	waitRevision(t, cli, c, orig.Header.Revision)

	var phases []string
	r := run(t, dial(t, c, "", ""), Options{Progress: func(p Progress) { phases = append(phases, p.Phase) }})
	if r.Consistent || !r.Failed() || r.Method != MethodRange {
		t.Fatalf("altered member: consistent %v, method %q, note %q", r.Consistent, r.Method, r.Note)
	}
	if r.DifferencesTotal != 1 || len(r.Differences) != 1 || r.Differences[0].Key != key {
		t.Fatalf("differences: %d, %+v; want only %s", r.DifferencesTotal, r.Differences, key)
	}
	if r.Compared != 200 {
		t.Errorf("compared %d keys, want 200", r.Compared)
	}
	d := r.Differences[0]
	want := orig.Kvs[0]
	hashes := map[string]string{}
	for _, ks := range d.Members {
		if !ks.Present || ks.ModRevision != want.ModRevision || ks.Version != want.Version || ks.CreateRevision != want.CreateRevision {
			t.Errorf("%s: %+v; want present at mod %d version %d", ks.Member, ks, want.ModRevision, want.Version)
		}
		hashes[ks.Member] = ks.ValueHash
	}
	if hashes["member-0"] != hashes["member-1"] || hashes["member-2"] == hashes["member-0"] || len(hashes["member-2"]) != 16 {
		t.Errorf("value hashes %v: want member-2's alone to differ", hashes)
	}
	if phases[0] != PhaseHash || phases[len(phases)-1] != PhaseCompare {
		t.Errorf("progress phases %v", phases)
	}
	var hashed []uint32
	for _, m := range r.Members {
		hashed = append(hashed, m.Hash)
	}
	if hashed[0] != hashed[1] || hashed[2] == hashed[0] {
		t.Errorf("hashes %08x: want member-2's alone to differ", hashed)
	}

	vals, err := MemberValues(context.Background(), dial(t, c, "", ""), key, r.Rev)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vals {
		want := "value 1 of 117"
		if v.Member == "member-2" {
			want = "value 1 of 117, flipped"
		}
		if v.Err != nil || v.KV == nil || string(v.KV.Value) != want {
			t.Errorf("%s: %+v, want %q", v.Member, v, want)
		}
	}
}

// alter stops m, changes its file with each of edits, and starts it again.
func alter(t *testing.T, m *etcdtest.External, edits ...func(*etcdtest.External) error) {
	t.Helper()
	m.Stop()
	for _, edit := range edits {
		if err := edit(m); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Start(); err != nil {
		t.Fatal(err)
	}
}

func alterValue(key, value string) func(*etcdtest.External) error {
	return func(m *etcdtest.External) error { return m.AlterValue(key, []byte(value)) }
}

func removeKey(key string) func(*etcdtest.External) error {
	return func(m *etcdtest.External) error { return m.RemoveKey(key) }
}

// TestMembersFindEveryDifferenceWhereverTheChunksFall alters keys where
// etcd's RangeStream cuts its chunks (10 keys, then 20, 40, 80…: cm-009
// ends the first, cm-010 starts the second), in the middle of one
// (cm-117) and at the end of the range (cm-199), and removes a key from a
// member, which shifts every later chunk of its stream by one key (its
// cm-030 ends a chunk that starts cm-030 on the others): the comparison
// aligns keys, not chunks, and finds each difference and no other.
func TestMembersFindEveryDifferenceWhereverTheChunksFall(t *testing.T) {
	t.Parallel()
	c, cli := clusterWithKeys(t, 200)
	cm := func(i int) string { return fmt.Sprintf("/registry/configmaps/default/cm-%03d", i) }
	orig, err := cli.Get(context.Background(), "/registry/configmaps/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	alter(t, c.Members[1], alterValue(cm(9), "flipped on member-1"), alterValue(cm(199), "flipped on member-1"))
	alter(t, c.Members[2], removeKey(cm(10)), alterValue(cm(30), "flipped on member-2"), alterValue(cm(117), "flipped on member-2"))
	waitRevision(t, cli, c, orig.Header.Revision)

	r := run(t, dial(t, c, "", ""), Options{})
	// Which members' states differ from the others', by key; "-" is absent.
	want := map[string]string{cm(9): "member-1", cm(10): "-member-2", cm(30): "member-2", cm(117): "member-2", cm(199): "member-1"}
	if r.Consistent || r.Method != MethodRange || r.DifferencesTotal != int64(len(want)) || r.Compared != 200 {
		t.Fatalf("consistent %v, method %q, %d differences of %d keys compared: %+v; want %d of 200",
			r.Consistent, r.Method, r.DifferencesTotal, r.Compared, r.Differences, len(want))
	}
	origKV := map[string]*mvccpb.KeyValue{}
	for _, kv := range orig.Kvs {
		origKV[string(kv.Key)] = kv
	}
	for _, d := range r.Differences {
		odd, ok := want[d.Key]
		if !ok {
			t.Errorf("%s differs: %+v", d.Key, d.Members)
			continue
		}
		o := origKV[d.Key]
		sum := sha256.Sum256(o.Value)
		for _, ks := range d.Members {
			switch {
			case "-"+ks.Member == odd:
				if ks.Present {
					t.Errorf("%s on %s: %+v; want absent", d.Key, ks.Member, ks)
				}
			case !ks.Present || ks.ModRevision != o.ModRevision || ks.Version != o.Version:
				t.Errorf("%s on %s: %+v; want present at mod %d, version %d", d.Key, ks.Member, ks, o.ModRevision, o.Version)
			case (ks.Member == odd) == (ks.ValueHash == hex.EncodeToString(sum[:8])):
				t.Errorf("%s on %s: value hash %s, the original's %x; want only %s's to differ", d.Key, ks.Member, ks.ValueHash, sum[:8], odd)
			}
		}
	}
}

func TestMembersSayAStoppedMemberIsDownAndCompareTheOthers(t *testing.T) {
	t.Parallel()
	c, _ := clusterWithKeys(t, 20)
	src := dial(t, c, "", "")
	c.Members[1].Stop()
	r := run(t, src, Options{})
	if !r.Consistent || r.Failed() {
		t.Fatalf("one member down: consistent %v, note %q", r.Consistent, r.Note)
	}
	for _, m := range r.Members {
		down := strings.HasPrefix(m.State, "down: ")
		if (m.Endpoint == c.Members[1].Endpoint) != down || down != m.Problem {
			t.Errorf("member %s at %s: state %q, problem %v", m.Name, m.Endpoint, m.State, m.Problem)
		}
	}
}

func TestMembersAtACompactedRevisionNameTheOldest(t *testing.T) {
	t.Parallel()
	c, cli := clusterWithKeys(t, 10)
	resp, err := cli.Get(context.Background(), "x")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Compact(context.Background(), resp.Header.Revision-5, clientv3.WithCompactPhysical()); err != nil {
		t.Fatal(err)
	}
	_, err = Members(context.Background(), dial(t, c, "", ""), Options{Rev: 3})
	var ce *etcdview.CompactedError
	if !errors.As(err, &ce) || ce.Compacted != resp.Header.Revision-5 {
		t.Fatalf("check at a compacted revision: %v; want a CompactedError naming %d", err, resp.Header.Revision-5)
	}
	if !strings.Contains(err.Error(), fmt.Sprint(resp.Header.Revision-5)) {
		t.Errorf("error %q does not name the oldest revision", err)
	}
}

func TestMembersUnderAReadOnlyUserCompareByRangeReads(t *testing.T) {
	t.Parallel()
	c, cli := clusterWithKeys(t, 30)
	etcdtest.EnableReadOnlyUser(t, cli)
	r := run(t, dial(t, c, etcdtest.ReadOnlyUser, etcdtest.ReadOnlyPassword), Options{Prefix: "/registry/"})
	if !r.Consistent || r.Method != MethodRange || r.Compared != 30 || !strings.Contains(r.Note, "root") {
		t.Fatalf("read-only user: consistent %v, method %q, compared %d, note %q", r.Consistent, r.Method, r.Compared, r.Note)
	}
}

func TestMembersOfAnOfflineFileHaveNothingToCompare(t *testing.T) {
	t.Parallel()
	c, _ := clusterWithKeys(t, 5)
	m := c.Members[0]
	m.Stop()
	f, err := etcdview.OpenOffline(m.DataDir+"/member/snap/db", etcdview.FileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := run(t, f, Options{})
	if r.Failed() || r.Single == "" {
		t.Fatalf("a data file: failed %v, single %q", r.Failed(), r.Single)
	}
}

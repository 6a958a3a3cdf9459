package space

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/embedded/etcdtest"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/etcdview/etcdviewtest"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/protobuf/proto"
)

// The fixture's keys.
const (
	keyA     = "/registry/pods/default/a"
	keyB     = "/registry/pods/default/b"
	keyC     = "/registry/pods/kube-system/c"
	keyE1    = "/registry/events/default/e1"
	keyE2    = "/registry/events/default/e2"
	keyCart  = "/registry/shop.etcdscope.io/carts/default/cart-1"
	keyLease = "/registry/leases/kube-node-lease/node-1"
	keyNS    = "/registry/namespaces/default"
)

// write is one step of the fixture: a put of value bytes, or a delete (-1).
type write struct {
	key   string
	value int
}

// fixture is written in order, one revision a step, and compacted at the
// revision of step compactAt (1-based).
var fixture = []write{
	{keyA, 100}, {keyA, 150}, {keyB, 50}, {keyB, -1},
	{keyC, 200}, {keyE1, 300}, {keyCart, 80},
	{keyLease, 40}, {keyLease, 40}, {keyLease, 40},
	{keyA, 120}, {keyE2, 310}, {keyE2, -1}, {keyNS, 20},
}

const compactAt = 4

// facts are what the fixture leaves of each key, worked out by hand, as
// steps of the fixture (1-based): compaction at step 4 keeps each key's
// newest revision at or before it (a's 150-byte put, step 2), and a
// deletion only when it is at the compaction revision itself (b's: mvcc's
// keyIndex.compact keeps it, and the backend with it, since etcd 3.5; 3.4
// drops it, see factsOf).
type facts struct {
	current    int   // the step of the current value, 0 when the key is gone
	version    int64 // writes since creation
	held       []int // the steps of the puts etcd holds
	tombstones []int // the steps of the deletions it holds
}

var fixtureFacts = map[string]facts{
	keyA:     {current: 11, version: 3, held: []int{2, 11}},
	keyB:     {tombstones: []int{4}},
	keyC:     {current: 5, version: 1, held: []int{5}},
	keyE1:    {current: 6, version: 1, held: []int{6}},
	keyE2:    {held: []int{12}, tombstones: []int{13}},
	keyCart:  {current: 7, version: 1, held: []int{7}},
	keyLease: {current: 10, version: 3, held: []int{8, 9, 10}},
	keyNS:    {current: 14, version: 1, held: []int{14}},
}

// factsOf are the facts on etcd of release line version.
func factsOf(version string) map[string]facts {
	fs := maps.Clone(fixtureFacts)
	if version == "3.4" {
		// etcd 3.4's keyIndex.compact removes a tombstone at the
		// compaction revision from the index and the backend.
		fs[keyB] = facts{}
	}
	return fs
}

// writeFixture writes the fixture and returns the last revision, the
// compaction's, and the bytes etcd stores for each step (index 0 unused):
// the KeyValue a read right after the step returns, or a deletion's, its
// key alone.
func writeFixture(t *testing.T, cli *clientv3.Client) (rev, compacted int64, sizes []int64) {
	return writeSteps(t, cli, fixture, compactAt)
}

// writeSteps is writeFixture of steps, compacted at step compactAt (none
// when 0). A deletion is kube-apiserver's transaction, which kine takes.
func writeSteps(t *testing.T, cli *clientv3.Client, steps []write, compactAt int) (rev, compacted int64, sizes []int64) {
	t.Helper()
	ctx := testCtx(t)
	sizes = make([]int64, len(steps)+1)
	for i, w := range steps {
		if w.value < 0 {
			if err := etcdtest.Delete(ctx, cli, w.key); err != nil {
				t.Fatal(err)
			}
			sizes[i+1] = int64(proto.Size(&mvccpb.KeyValue{Key: []byte(w.key)}))
		} else if _, err := cli.Put(ctx, w.key, strings.Repeat("v", w.value)); err != nil {
			t.Fatal(err)
		}
		resp, err := cli.Get(ctx, w.key)
		if err != nil {
			t.Fatal(err)
		}
		rev = resp.Header.Revision
		if w.value >= 0 {
			sizes[i+1] = int64(proto.Size(resp.Kvs[0]))
		}
		if i+1 == compactAt {
			if _, err := cli.Compact(ctx, rev, clientv3.WithCompactPhysical()); err != nil {
				t.Fatal(err)
			}
			compacted = rev
		}
	}
	return rev, compacted, sizes
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// snapshotFile saves cli's etcd to a file, as `etcdctl snapshot save`
// does, and opens it.
func snapshotFile(t *testing.T, cli *clientv3.Client) (*etcdview.File, string) {
	t.Helper()
	path := etcdviewtest.SaveSnapshot(t, cli)
	f, err := etcdview.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f, path
}

func runReport(t *testing.T, src Source, opts Options) *Report {
	t.Helper()
	r, err := Run(testCtx(t), src, opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// fixtureRun is the fixture as one etcd took it.
type fixtureRun struct {
	facts map[string]facts
	sizes []int64 // by step
}

// wantStats is the reference: the sums of the facts of the keys below
// path, as etcd would count them had it a du.
func (fr fixtureRun) wantStats(path string, history bool) (s Stats, exists bool) {
	for key, f := range fr.facts {
		if !strings.HasPrefix(key, path) {
			continue
		}
		if f.current > 0 {
			s.Keys++
			s.Bytes += fr.sizes[f.current]
			s.Writes += f.version
			if f.version == 0 { // kine counts none: not known
				s.WritesUnknown++
			}
			exists = true
		}
		if !history {
			continue
		}
		for _, step := range f.held {
			s.Revisions++
			s.RevisionBytes += fr.sizes[step]
			exists = true
		}
		for _, step := range f.tombstones {
			s.Tombstones++
			s.TombstoneBytes += fr.sizes[step]
			exists = true
		}
	}
	return s, exists
}

// wantPaths are the nodes a tree of depth below /registry/ has: every
// prefix of a counted key cut after up to depth segments.
func (fr fixtureRun) wantPaths(depth int, history bool) []string {
	seen := map[string]bool{"/registry/": true}
	for key := range fr.facts {
		if _, ok := fr.wantStats(key, history); !ok {
			continue
		}
		at := len("/registry/")
		for d := 1; d <= depth && at < len(key); d++ {
			name, _ := Segment(key[at:])
			at += len(name)
			seen[key[:at]] = true
		}
	}
	var paths []string
	for p := range seen {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	return paths
}

// checkTree holds every node of r to the reference.
func (fr fixtureRun) checkTree(t *testing.T, what string, r *Report, depth int) {
	t.Helper()
	var paths []string
	var walk func(n *Node)
	walk = func(n *Node) {
		paths = append(paths, n.Path)
		want, _ := fr.wantStats(n.Path, r.History)
		if n.Stats != want {
			t.Errorf("%s, depth %d: %s has %+v, want %+v", what, depth, n.Path, n.Stats, want)
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(r.Root)
	slices.Sort(paths)
	if want := fr.wantPaths(depth, r.History); !slices.Equal(paths, want) {
		t.Errorf("%s, depth %d: nodes %q, want %q", what, depth, paths, want)
	}
}

func TestReportCountsKnownWritesLiveAndOffline(t *testing.T) {
	etcdtest.EachVersion(t, func(t *testing.T, e etcdtest.Etcd) {
		rev, compacted, sizes := writeFixture(t, e.Client)
		fr := fixtureRun{facts: factsOf(e.Version), sizes: sizes}
		live := etcdview.NewLive(e.Client, 0)
		file, _ := snapshotFile(t, e.Client)
		for depth := 1; depth <= 4; depth++ {
			opts := Options{Prefix: "/registry", Depth: depth, Top: 3}
			values := runReport(t, live, opts)
			if values.History {
				t.Errorf("a live report without History says it read history")
			}
			fr.checkTree(t, "live, values", values, depth)
			opts.History = true
			sources := []struct {
				what string
				src  Source
			}{{"live, with history", live}, {"offline", file}}
			if e.Version == "3.4" {
				// Debian's 3.4.23 answers progress requests out of
				// order: a live replay would stop short.
				if _, err := Run(testCtx(t), live, opts, nil); err == nil || !strings.Contains(err.Error(), "read a snapshot of it with --db") {
					t.Errorf("live history on etcd 3.4.23: %v, want a refusal that points at --db", err)
				}
				sources = sources[1:]
			}
			for _, c := range sources {
				r := runReport(t, c.src, opts)
				if !r.History || r.Revision != rev || r.CompactRevision != compacted {
					t.Errorf("%s: history %v, revision %d, compaction %d; want true, %d, %d", c.what, r.History, r.Revision, r.CompactRevision, rev, compacted)
				}
				fr.checkTree(t, c.what, r, depth)
			}
		}
		r := runReport(t, file, Options{Prefix: "/registry", Depth: 2, Top: 3})
		if got := keysOf(r.Root.Largest); !slices.Equal(got, []string{keyE1, keyC, keyA}) {
			t.Errorf("largest %q, want e1, c, a (300, 200, 120 bytes)", got)
		}
		// a and the lease have 3 versions each: the earlier key first.
		if got := keysOf(r.Root.Hottest); !slices.Equal(got, []string{keyLease, keyA, keyE1}) {
			t.Errorf("hottest %q, want the lease, a, then e1 (3, 3, 1 versions)", got)
		}
		if got := keysOf(r.Find("/registry/pods/").Largest); !slices.Equal(got, []string{keyC, keyA}) {
			t.Errorf("largest pods %q, want c, a", got)
		}
	})
}

func keysOf(ks []KeyStat) []string {
	var keys []string
	for _, k := range ks {
		keys = append(keys, k.Key)
	}
	return keys
}

// TestReportCountsKnownWritesOnKine reads the fixture, uncompacted (kine
// compacts nothing of its newest 1000 revisions), through kine: live, and
// live with the history kine holds, every put and deletion.
func TestReportCountsKnownWritesOnKine(t *testing.T) {
	k := etcdtest.StartKine(t, etcdtest.KineOptions{})
	cli := k.Client(t)
	// kine writes /registry/health itself when it starts, and the fixture
	// once more: that is two revisions held, the first as step 0.
	const health = "/registry/health"
	first, err := cli.Get(testCtx(t), health)
	if err != nil || len(first.Kvs) != 1 {
		t.Fatalf("kine's %s: %+v, %v", health, first, err)
	}
	steps := append([]write{{health, 10}}, fixture...)
	rev, _, sizes := writeSteps(t, cli, steps, 0)
	sizes[0] = int64(proto.Size(first.Kvs[0]))
	fr := fixtureRun{facts: uncompactedFacts(steps), sizes: sizes}
	f := fr.facts[health]
	f.held = append([]int{0}, f.held...)
	fr.facts[health] = f
	live := etcdview.NewLive(cli, 0)
	for depth := 1; depth <= 4; depth++ {
		opts := Options{Prefix: "/registry", Depth: depth, Top: 3}
		fr.checkTree(t, "kine, values", runReport(t, live, opts), depth)
		opts.History = true
		r := runReport(t, live, opts)
		if !r.History || r.Revision != rev || r.CompactRevision != 0 {
			t.Errorf("kine with history: history %v, revision %d, compaction %d; want true, %d, 0", r.History, r.Revision, r.CompactRevision, rev)
		}
		fr.checkTree(t, "kine, with history", r, depth)
	}
}

// uncompactedFacts are the facts of steps on kine, uncompacted: every put
// and deletion held, and no version, which kine does not count.
func uncompactedFacts(steps []write) map[string]facts {
	fs := map[string]facts{}
	for i, w := range steps {
		f := fs[w.key]
		if w.value < 0 {
			f.current, f.tombstones = 0, append(f.tombstones, i+1)
		} else {
			f.current, f.held = i+1, append(f.held, i+1)
		}
		fs[w.key] = f
	}
	return fs
}

package etcdview

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/etcdscope/etcdscope/bench/fill"
)

// sliceRanger serves ranges from sorted keys, as etcd would with limit and
// more, and counts the ranges it is asked. With counts, it walks every key
// of a range as etcd before 3.7 does to count it, and as kine does, which
// reads every key of a range before it answers, and counts those too.
//
// With ahead, it answers as kine does (rangeResult.ahead), and may be
// asked ranges at the same time.
type sliceRanger struct {
	keys   []string
	counts bool
	ahead  bool
	mu     sync.Mutex
	calls  int
	walked int
}

func (s *sliceRanger) rangeKeys(_ context.Context, r rangeRequest) (rangeResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	res := rangeResult{rev: 1, counted: s.counts && r.uncounted, ahead: s.ahead}
	for i := sort.SearchStrings(s.keys, r.key); i < len(s.keys) && inRange(s.keys[i], r.key, r.end); i++ {
		s.walked++
		res.count++
		if r.countOnly || r.limit > 0 && int64(len(res.kvs)) == r.limit {
			res.more = !r.countOnly
			if s.counts {
				continue
			}
			break
		}
		res.kvs = append(res.kvs, KV{Key: s.keys[i]})
	}
	return res, nil
}

// wantChildren groups keys below prefix by their first segment, the slow
// and obvious way.
func wantChildren(keys []string, prefix string) []Child {
	var out []Child
	for _, k := range keys {
		if !strings.HasPrefix(k, prefix) || k == prefix {
			continue
		}
		name, dir := segment(k[len(prefix):])
		if n := len(out); n > 0 && out[n-1].Name == name {
			out[n-1].Count++
			continue
		}
		out = append(out, Child{Name: name, Prefix: prefix + name, Dir: dir, Count: 1})
	}
	return out
}

// sameChildren fails t unless got lists the entries of want, with their
// counts, or CountUnknown for a directory too large for a batch, or for
// any directory where etcd counts (a head range may end inside it).
func sameChildren(t *testing.T, got, want []Child, counted bool) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d children, want %d:\n%+v\n%+v", len(got), len(want), got, want)
	}
	for i, c := range got {
		w := want[i]
		if c.Name != w.Name || c.Prefix != w.Prefix || c.Dir != w.Dir || (c.Count != w.Count && c.Count != CountUnknown) {
			t.Fatalf("child %d = %+v, want %+v", i, c, w)
		}
		if c.Count == CountUnknown && w.Count < scanBatch && !counted {
			t.Errorf("%s left uncounted with %d keys, which fit in a batch", c.Prefix, w.Count)
		}
	}
}

// listFake lists the level below prefix of keys from a fake etcd, counting
// every range when counts, checks it against brute-force grouping, and
// returns the fake, to see what the level cost, and the entries.
func listFake(t *testing.T, keys []string, prefix string, counts bool) (*sliceRanger, []Child) {
	t.Helper()
	return listFakeOf(t, &sliceRanger{keys: keys, counts: counts}, prefix)
}

// listFakeOf is listFake of the fake r.
func listFakeOf(t *testing.T, r *sliceRanger, prefix string) (*sliceRanger, []Child) {
	t.Helper()
	slices.Sort(r.keys)
	r.keys = slices.Compact(r.keys)
	keys, counts := r.keys, r.counts
	lvl, err := children(context.Background(), r, prefix, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := wantChildren(keys, prefix)
	sameChildren(t, lvl.Children, want, counts)
	return r, want
}

func TestChildrenFindsEveryEntryOfNumberedRuns(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 40 {
		var keys []string
		// Namespaces of a numbered run with gaps, of 1 to 300 keys each
		// (the batch is 100), leaves among them, names that end in 0xff
		// bytes, and keys outside the level.
		for ns := range 120 {
			if rng.IntN(4) == 0 {
				continue
			}
			name := fmt.Sprintf("team-%03d", ns)
			if rng.IntN(10) == 0 {
				name += "\xff"
			}
			for k := range 1 + rng.IntN(300) {
				keys = append(keys, fmt.Sprintf("/registry/pods/%s/pod-%04d", name, k))
			}
			if rng.IntN(8) == 0 {
				keys = append(keys, "/registry/pods/"+name+"-leaf")
			}
		}
		keys = append(keys, "/registry/pods0", "/registry/pod/x", "/registry/pods/\xff\xff/x")
		r, want := listFake(t, keys, "/registry/pods/", round%2 == 1)
		// A range or few per entry, however many keys.
		if limit := (maxProbes + 2) * (len(want) + 1); r.calls > limit {
			t.Errorf("round %d: %d ranges for %d entries over %d keys, want at most %d", round, r.calls, len(want), len(keys), limit)
		}
	}
}

// registryKeys lays out keys as kube-apiserver stores the bench fill's
// cluster of n keys (bench/fill): each resource's objects spread over the
// namespaces, nodes and namespaces cluster-scoped, node leases in
// kube-node-lease.
func registryKeys(n int) []string {
	p := fill.NewPlan(n)
	var keys []string
	for res, count := range p.Counts {
		for i := range count {
			ns := fmt.Sprintf("team-%03d", i%p.Namespaces)
			switch {
			case res == "namespaces":
				keys = append(keys, "/registry/namespaces/"+ns)
			case res == "minions":
				keys = append(keys, fmt.Sprintf("/registry/minions/node-%04d", i))
			case res == "leases" && i < p.Nodes:
				keys = append(keys, fmt.Sprintf("/registry/leases/kube-node-lease/node-%04d", i))
			default:
				keys = append(keys, fmt.Sprintf("/registry/%s/%s/obj-%07d", res, ns, i))
			}
		}
	}
	slices.Sort(keys)
	return keys
}

func TestChildrenOfTheRegistryOnACountingEtcdWalkANamespacePerResource(t *testing.T) {
	keys := registryKeys(200_000)
	r, want := listFake(t, keys, "/registry/", true)
	// Each resource is found by a range that ends after its first
	// namespace (team-000/, 1/500 of it), the cluster-scoped minions/ and
	// namespaces/ are read whole (5,500 keys a million), and kube-node-lease
	// comes before team-000 in leases/: about 2% of the keys a million, in
	// a round trip per resource kube-apiserver may store.
	if limit := len(keys) / 40; r.walked > limit {
		t.Errorf("etcd walked %d keys to list %d, want at most %d", r.walked, len(keys), limit)
	}
	if limit := len(registryNames()) + 2*len(want); r.calls > limit {
		t.Errorf("%d ranges, want at most %d", r.calls, limit)
	}
}

func TestChildrenOnACountingEtcdWalksABucketPerEntry(t *testing.T) {
	// A level as large as /registry, but not below kube-apiserver's prefix:
	// a few kinds of very different sizes, most with a first letter of
	// their own.
	sizes := map[string]int{"configmaps": 1100, "endpointslices": 645, "events": 4800, "leases": 100,
		"minions": 50, "namespaces": 5, "pods": 1000, "replicasets": 1200, "secrets": 1100}
	var keys []string
	for kind, n := range sizes {
		for i := range n {
			keys = append(keys, fmt.Sprintf("/data/%s/ns-%d/obj-%d", kind, i%5, i))
		}
	}
	r, _ := listFake(t, keys, "/data/", true)
	// A range to the end of the level after each kind would walk what
	// follows it (about 3.4 times the level here, 4.4 with the first
	// range's); the buckets walk each kind once, events twice
	// (endpointslices shares its e).
	if limit := len(keys) + sizes["events"]; r.walked > limit {
		t.Errorf("etcd walked %d keys to list %d, want at most %d", r.walked, len(keys), limit)
	}
}

func TestChildrenOfRandomRegistriesMatchBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	names := registryNames()
	namespaces := []string{"a", "default", "kube-node-lease", "kube-system", "team-000", "team-001", "team-001\xff", "zz"}
	for round := range 60 {
		var keys []string
		// Resources kube-apiserver stores, of up to 3, 30 or 250 objects in
		// each namespace, some not namespaced; directories it does not know of
		// (custom resources' groups); leaves beside them; and keys outside
		// the level.
		var dirs []registryName
		for _, n := range names {
			if rng.IntN(3) == 0 {
				dirs = append(dirs, n)
			}
		}
		for _, d := range []string{"aaa/", "crd.example.io/", "configmaps-x/", "pods.example.io/", "zzz\xff/"} {
			if rng.IntN(2) == 0 {
				dirs = append(dirs, registryName{d, rng.IntN(2) == 0})
			}
		}
		for _, d := range dirs {
			most := []int{3, 30, 250}[rng.IntN(3)]
			for _, ns := range namespaces {
				if rng.IntN(3) == 0 {
					continue
				}
				for i := range rng.IntN(most) {
					if d.namespaced {
						keys = append(keys, fmt.Sprintf("/registry/%s%s/obj-%03d", d.name, ns, i))
					} else {
						keys = append(keys, fmt.Sprintf("/registry/%s%s-%03d", d.name, ns, i))
					}
				}
			}
		}
		// Custom resources, stored as <group>/<plural>/[<namespace>/]<name>
		// and defined or not by a CustomResourceDefinition, beside
		// definitions of none and names that are no <plural>.<group>.
		for _, cr := range []struct{ plural, group string }{{"widgets", "example.io"}, {"gadgets", "example.io"}, {"zebras", "zoo.io"}, {"a", "b.c"}} {
			if rng.IntN(2) == 0 {
				keys = append(keys, "/registry/apiextensions.k8s.io/customresourcedefinitions/"+cr.plural+"."+cr.group)
			}
			for _, ns := range namespaces[:rng.IntN(len(namespaces))] {
				for i := range rng.IntN(150) {
					keys = append(keys, fmt.Sprintf("/registry/%s/%s/%s/obj-%03d", cr.group, cr.plural, ns, i))
				}
			}
		}
		keys = append(keys, "/registry/apiextensions.k8s.io/customresourcedefinitions/noplural", "/registry/apiextensions.k8s.io/customresourcedefinitions/.x")
		for _, leaf := range []string{"/registry/health", "/registry/pods", "/registry/namespaces0", "/registry0", "/registrx/a"} {
			if rng.IntN(2) == 0 {
				keys = append(keys, leaf)
			}
		}
		// Every third round as kine, which reads some ranges ahead.
		r, want := listFakeOf(t, &sliceRanger{keys: keys, counts: round%3 > 0, ahead: round%3 == 2}, "/registry/")
		if limit := len(names) + 3*(len(want)+1); r.calls > limit {
			t.Errorf("round %d: %d ranges for %d entries, want at most %d", round, r.calls, len(want), limit)
		}
	}
}

func TestChildrenOnAnEtcdThatCountsLeaveTheRestOfADirectoryForCount(t *testing.T) {
	// configmaps/ has 3 keys in the first namespace, a/, and 5,000 after
	// it: its head range ends inside it. An etcd that counts (and kine,
	// which reads every key of a range before it answers) would walk the
	// rest to count it, so it is left for Count; etcd 3.7 streams the rest
	// a batch at a time, and counts it when it fits.
	keys := []string{"/registry/namespaces/a", "/registry/namespaces/b"}
	for i := range 3 {
		keys = append(keys, fmt.Sprintf("/registry/configmaps/a/cm-%d", i))
	}
	for i := range 5000 {
		keys = append(keys, fmt.Sprintf("/registry/configmaps/b/cm-%04d", i))
	}
	keys = append(keys, "/registry/pods/a/p-0", "/registry/secrets/b/s-0")
	slices.Sort(keys)
	for _, counts := range []bool{false, true} {
		r := &sliceRanger{keys: keys, counts: counts}
		lvl, err := children(context.Background(), r, "/registry/", 0)
		if err != nil {
			t.Fatal(err)
		}
		want := wantChildren(keys, "/registry/")
		if len(lvl.Children) != len(want) {
			t.Fatalf("counts %v: children %+v, want %+v", counts, lvl.Children, want)
		}
		for i, c := range lvl.Children {
			if w := want[i]; c.Name != w.Name || c.Dir != w.Dir || c.Count != w.Count && c.Count != CountUnknown {
				t.Errorf("counts %v: child %+v, want %+v", counts, c, w)
			}
		}
		if cm := lvl.Children[0]; counts && (cm.Name != "configmaps/" || cm.Count != CountUnknown) {
			t.Errorf("on an etcd that counts, configmaps/ is %+v, want it left for Count", cm)
		}
		if counts && r.walked > 100 {
			t.Errorf("etcd walked %d keys to list %d entries over %d keys, want the heads of the directories only", r.walked, len(want), len(keys))
		}
	}
}

func TestChildrenOnAnEtcdThatCountsFindAResourceMissingFromTheFirstNamespace(t *testing.T) {
	// events/ has nothing in the first namespace, a/ (its Events there
	// expired), 50 keys in b/ and 4,950 in c/: its head gets a second
	// chance up to b/, instead of a range to the next resource's head
	// that would walk all of it.
	keys := []string{"/registry/namespaces/a", "/registry/namespaces/b", "/registry/namespaces/c", "/registry/pods/a/p-0", "/registry/secrets/a/s-0"}
	for i := range 5000 {
		keys = append(keys, fmt.Sprintf("/registry/events/%s/ev-%04d", map[bool]string{true: "b", false: "c"}[i < 50], i))
	}
	slices.Sort(keys)
	r := &sliceRanger{keys: keys, counts: true}
	lvl, err := children(context.Background(), r, "/registry/", 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range lvl.Children {
		names = append(names, c.Name)
	}
	if want := []string{"events/", "namespaces/", "pods/", "secrets/"}; !slices.Equal(names, want) {
		t.Fatalf("children %v, want %v", names, want)
	}
	if r.walked > 200 {
		t.Errorf("etcd walked %d keys to list %d entries over %d keys, want events/ up to b/ at most", r.walked, len(names), len(keys))
	}
}

func TestChildrenOfManyLeavesWalkThemAFewTimes(t *testing.T) {
	// A level of 30,000 keys, Events named after their Pods: listed in
	// batches of a hundred, each range of an etcd that counts would walk
	// every key after its start, 150 times the level in all.
	var keys []string
	for i := range 30_000 {
		keys = append(keys, fmt.Sprintf("/registry/events/team-000/web-%d-7d4b9c8f6d-%05d.%016x", i%7, i, i))
	}
	r, want := listFake(t, keys, "/registry/events/team-000/", true)
	if limit := 4 * len(want); r.walked > limit {
		t.Errorf("etcd walked %d keys to list %d leaves, want at most %d", r.walked, len(want), limit)
	}
}

func TestChildrenOnKineReadTheSecondChanceOfAResourceWithItsHead(t *testing.T) {
	// Of the resources kube-apiserver may store, pods/ and secrets/ have
	// keys in the first namespace, a/: their heads find them, as the head
	// of networkpolicies/ finds namespaces/, between it and the resource
	// before. On kine each head is read with its second chance, up to b/,
	// which for these three is read for nothing: three ranges more than on
	// an etcd that counts, and the same level.
	keys := []string{"/registry/namespaces/a", "/registry/namespaces/b"}
	for _, res := range []string{"pods", "secrets"} {
		for _, ns := range []string{"a", "b"} {
			for i := range 3 {
				keys = append(keys, fmt.Sprintf("/registry/%s/%s/x-%d", res, ns, i))
			}
		}
	}
	counting, want := listFakeOf(t, &sliceRanger{keys: slices.Clone(keys), counts: true}, "/registry/")
	kine, _ := listFakeOf(t, &sliceRanger{keys: slices.Clone(keys), counts: true, ahead: true}, "/registry/")
	if len(want) != 3 || kine.calls != counting.calls+3 {
		t.Errorf("%d entries, %d ranges on kine, %d on an etcd that counts: want 3 entries, and 3 second chances more", len(want), kine.calls, counting.calls)
	}
}

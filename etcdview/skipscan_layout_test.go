package etcdview

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/etcdscope/etcdscope/bench/fill"
)

// layoutKeys are the keys bench/fill writes for layout l at n keys, sorted.
func layoutKeys(l fill.Layout, n int) ([]string, fill.Plan) {
	p := l.Plan(n)
	var keys []string
	for k := range p.KeyNames() {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys, p
}

// TestChildrenOfEveryLayoutWalkAboutOnce lists a level of each of the
// bench's key layouts from a fake etcd that counts the keys each range
// walks, as etcd does before 3.7 (mvcc's treeIndex.Revisions walks the whole
// range however small the limit), and as kine does (it reads every key of a
// range before it answers). What a level costs such an etcd is the keys it
// walks per key of the level: one walk is every key once, what a listing
// would cost it without the listing. Below kube-apiserver's prefix, each
// resource costs its keys in the first namespace; elsewhere each entry is
// found by the range of its first-byte bucket, which walks it.
func TestChildrenOfEveryLayoutWalkAboutOnce(t *testing.T) {
	const n = 100_000
	for _, l := range fill.Layouts {
		t.Run(l.Name, func(t *testing.T) {
			t.Parallel()
			keys, p := layoutKeys(l, n)
			levels := []layoutLevel{{l.Level + "/", 1.3, "each entry once; those that share a first byte with one before them, twice"}}
			if p.Namespaces > 0 {
				levels[0].walks, levels[0].why = 1/float64(p.Namespaces)+0.03, "the first namespace of each resource, and the cluster-scoped ones"
			}
			levels = append(levels, deeperLevels[l.Name]...)
			for _, lv := range levels {
				inLevel := 0
				for _, k := range keys {
					if strings.HasPrefix(k, lv.prefix) {
						inLevel++
					}
				}
				r := &sliceRanger{keys: keys, counts: true}
				lvl, err := children(context.Background(), r, lv.prefix, 0)
				if err != nil {
					t.Fatal(err)
				}
				sameNames(t, lvl.Children, wantChildren(keys, lv.prefix))
				if walks := float64(r.walked) / float64(inLevel); walks > lv.walks {
					t.Errorf("%s: %d keys walked for %d, %.3f walks, want at most %.3f (%s)", lv.prefix, r.walked, inLevel, walks, lv.walks, lv.why)
				}
				// etcd 3.7 streams a range without counting it: what a
				// level costs it is its round trips, a range or two per
				// entry, and below kube-apiserver's prefix one per head.
				r = &sliceRanger{keys: keys}
				if lvl, err = children(context.Background(), r, lv.prefix, 0); err != nil {
					t.Fatal(err)
				}
				limit := 2*len(lvl.Children) + 4
				if strings.HasSuffix(lv.prefix, registryPrefix) {
					limit += len(registryNames()) + len(customKinds(keys))
				}
				if lv.prefix == l.Level+"/" && r.calls > limit {
					t.Errorf("%s on an etcd that streams: %d ranges for %d entries, want at most %d", lv.prefix, r.calls, len(lvl.Children), limit)
				}
			}
		})
	}
}

// layoutLevel is a level of a layout and the most keys listing it may walk
// per key of it, and why.
type layoutLevel struct {
	prefix string
	walks  float64
	why    string
}

// deeperLevels are levels below the bench's, by layout.
var deeperLevels = map[string][]layoutLevel{
	"cluster": {
		{"/registry/pods/", 2.1, "every namespace in the first one's bucket, then each namespace of the run once"},
		{"/registry/events/team-000/", 2.5, "leaves, in batches as large as the keys left"},
	},
	"crds":    {{"/registry/cilium.io/", 1.3, "each resource of the group once, the second twice"}},
	"foreign": {{"/app/cache-index/", 3.2, "64 hashed shards crowded in a few first bytes, by second byte there"}},
}

// customKinds are the CustomResourceDefinitions among keys.
func customKinds(keys []string) []string {
	var crds []string
	for _, k := range keys {
		if strings.HasPrefix(k, "/registry/apiextensions.k8s.io/customresourcedefinitions/") {
			crds = append(crds, k)
		}
	}
	return crds
}

// sameNames fails t unless got lists the entries of want, in order.
func sameNames(t *testing.T, got, want []Child) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d children, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i].Prefix != want[i].Prefix || got[i].Dir != want[i].Dir {
			t.Fatalf("child %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

// TestChildrenOfARegistryWhoseFirstNamespacesHoldLittle lists /registry/ as
// a real cluster lays it out, unlike the bench's fills: the namespaces that
// sort first (default, kube-node-lease, kube-public, kube-system) hold a
// ConfigMap and a ServiceAccount each, node Events, leases and the system
// Pods, and the applications' namespaces after them the rest. A head range
// that ends inside a resource leaves it for Count, and a resource the
// first namespace has none of gets a second chance up to the next: neither
// is read whole.
func TestChildrenOfARegistryWhoseFirstNamespacesHoldLittle(t *testing.T) {
	var keys []string
	add := func(resource, ns string, n int) {
		for i := range n {
			keys = append(keys, fmt.Sprintf("/registry/%s/%s/obj-%05d", resource, ns, i))
		}
	}
	namespaces := []string{"default", "kube-node-lease", "kube-public", "kube-system"}
	for i := range 20 {
		namespaces = append(namespaces, fmt.Sprintf("team-%03d", i))
	}
	for _, ns := range namespaces {
		keys = append(keys, "/registry/namespaces/"+ns)
		add("configmaps", ns, 1)
		add("serviceaccounts", ns, 1)
	}
	add("events", "default", 30)
	add("endpointslices", "default", 1)
	add("services/specs", "default", 1)
	add("leases", "kube-node-lease", 500)
	add("leases", "kube-system", 10)
	add("pods", "kube-system", 50)
	add("secrets", "kube-system", 20)
	for _, ns := range namespaces[4:] {
		add("events", ns, 4800)
		add("configmaps", ns, 1100)
		add("secrets", ns, 1100)
		add("pods", ns, 1000)
		add("replicasets", ns, 1200)
		add("endpointslices", ns, 600)
	}
	for i := range 500 {
		keys = append(keys, fmt.Sprintf("/registry/minions/node-%04d", i))
	}
	r, _ := listFake(t, keys, "/registry/", true)
	// What is walked: the Pods, first found in kube-system, the third
	// namespace, and the ReplicaSets, first found in team-000 after the
	// system's, read whole; a listing walks it all once.
	if limit := len(keys) * 3 / 10; r.walked > limit {
		t.Errorf("etcd walked %d keys to list /registry/ of %d, want at most %d", r.walked, len(keys), limit)
	}
}

package etcdview

import (
	"context"
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
				for _, kine := range []bool{false, true} {
					if kine && !strings.HasSuffix(lv.prefix, registryPrefix) {
						continue // Live lists kine's other levels from one stream
					}
					r := &sliceRanger{keys: keys, counts: true, whole: kine}
					lvl, err := children(context.Background(), r, lv.prefix, 0)
					if err != nil {
						t.Fatal(err)
					}
					sameNames(t, lvl.Children, wantChildren(keys, lv.prefix))
					if walks := float64(r.walked) / float64(inLevel); walks > lv.walks {
						t.Errorf("%s (kine %v): %d keys walked for %d, %.3f walks, want at most %.3f (%s)", lv.prefix, kine, r.walked, inLevel, walks, lv.walks, lv.why)
					}
				}
				// etcd 3.7 streams a range without counting it: what a
				// level costs it is its round trips, a range or two per
				// entry, and below kube-apiserver's prefix one per head.
				r := &sliceRanger{keys: keys}
				lvl, err := children(context.Background(), r, lv.prefix, 0)
				if err != nil {
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

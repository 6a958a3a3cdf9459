package etcdview

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
)

// sliceRanger serves ranges from sorted keys, as etcd would with limit and
// more, and counts the ranges it is asked. With counts, it walks every key
// of a range as etcd before 3.7 does to count it, and counts those too.
type sliceRanger struct {
	keys   []string
	counts bool
	calls  int
	walked int
}

func (s *sliceRanger) rangeKeys(_ context.Context, r rangeRequest) (rangeResult, error) {
	s.calls++
	res := rangeResult{rev: 1, counted: s.counts && r.uncounted}
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
		slices.Sort(keys)
		keys = slices.Compact(keys)

		r := &sliceRanger{keys: keys, counts: round%2 == 1}
		lvl, err := children(context.Background(), r, "/registry/pods/", 0)
		if err != nil {
			t.Fatal(err)
		}
		want := wantChildren(keys, "/registry/pods/")
		if len(lvl.Children) != len(want) {
			t.Fatalf("round %d: %d children, want %d", round, len(lvl.Children), len(want))
		}
		for i, c := range lvl.Children {
			w := want[i]
			if c.Name != w.Name || c.Prefix != w.Prefix || c.Dir != w.Dir || (c.Count != w.Count && c.Count != CountUnknown) {
				t.Fatalf("round %d: child %d = %+v, want %+v", round, i, c, w)
			}
			if c.Count == CountUnknown && w.Count < scanBatch {
				t.Errorf("round %d: %s left uncounted with %d keys, which fit in a batch", round, c.Prefix, w.Count)
			}
		}
		// A range or few per entry, however many keys.
		if limit := (maxProbes + 2) * (len(want) + 1); r.calls > limit {
			t.Errorf("round %d: %d ranges for %d entries over %d keys, want at most %d", round, r.calls, len(want), len(keys), limit)
		}
	}
}

func TestChildrenOnACountingEtcdWalksABucketPerEntry(t *testing.T) {
	// /registry as a large cluster has it: a few kinds of very different
	// sizes, most with a first letter of their own.
	sizes := map[string]int{"configmaps": 1100, "endpointslices": 645, "events": 4800, "leases": 100,
		"minions": 50, "namespaces": 5, "pods": 1000, "replicasets": 1200, "secrets": 1100}
	var keys []string
	for kind, n := range sizes {
		for i := range n {
			keys = append(keys, fmt.Sprintf("/registry/%s/ns-%d/obj-%d", kind, i%5, i))
		}
	}
	slices.Sort(keys)
	r := &sliceRanger{keys: keys, counts: true}
	lvl, err := children(context.Background(), r, "/registry/", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(lvl.Children) != len(sizes) {
		t.Fatalf("%d children, want %d: %+v", len(lvl.Children), len(sizes), lvl.Children)
	}
	// The first range walks the level once to count it; after it, a
	// range to the end of the level after each kind would walk what
	// follows it (about 3.4 times the level here), where the buckets walk
	// each kind once more, events twice (endpointslices shares its e).
	if limit := len(keys) + len(keys) + sizes["events"]; r.walked > limit {
		t.Errorf("etcd walked %d keys to list %d, want at most %d", r.walked, len(keys), limit)
	}
}

package space

import (
	"container/heap"
	"slices"
	"strings"
)

// topN keeps the n greatest keys by one order: a min-heap, whose least is
// the one a greater key replaces, so that offering every key of a store
// costs a comparison for most and log n for the few that enter. The
// comparison is a method of the order, not a func value: it is made for
// every current key at every level of its path, and inlined it is a
// branch, where a call through a func value copied both keys.
type topN struct {
	n  int
	by order
	h  []KeyStat
}

func newTopN(n int, by order) topN { return topN{n: n, by: by} }

func (t *topN) offer(k *KeyStat) {
	switch {
	case t.n <= 0 || k.Key == "":
	case len(t.h) < t.n:
		// Appended and fixed rather than heap.Push, which takes an any:
		// a KeyStat boxed, an allocation a key.
		t.h = append(t.h, *k)
		heap.Fix(t, len(t.h)-1)
	case t.by.less(&t.h[0], k):
		t.h[0] = *k
		heap.Fix(t, 0)
	}
}

// sorted is the kept keys, greatest first.
func (t *topN) sorted() []KeyStat {
	s := slices.Clone(t.h)
	slices.SortFunc(s, func(a, b KeyStat) int {
		switch {
		case t.by.less(&b, &a):
			return -1
		case t.by.less(&a, &b):
			return 1
		}
		return 0
	})
	return s
}

func (t *topN) Len() int           { return len(t.h) }
func (t *topN) Less(i, j int) bool { return t.by.less(&t.h[i], &t.h[j]) }
func (t *topN) Swap(i, j int)      { t.h[i], t.h[j] = t.h[j], t.h[i] }

// Push and Pop are heap.Interface's; offer appends itself, and no heap
// is popped.
func (t *topN) Push(x any) { t.h = append(t.h, x.(KeyStat)) }
func (t *topN) Pop() any {
	last := t.h[len(t.h)-1]
	t.h = t.h[:len(t.h)-1]
	return last
}

// order is what a top list ranks keys by.
type order uint8

const (
	bySize    order = iota // bytes
	byVersion              // writes since creation
)

// less orders keys by the order's figure, then by key (the earlier key
// first), so that ties keep the same keys whatever the order they came
// in. The keys are compared only on a tie: every key of a store is
// offered.
func (o order) less(a, b *KeyStat) bool {
	fa, fb := a.Size, b.Size
	if o == byVersion {
		fa, fb = a.Version, b.Version
	}
	if fa != fb {
		return fa < fb
	}
	return a.Key > b.Key
}

func sortByName(nodes []*Node) {
	slices.SortFunc(nodes, func(a, b *Node) int { return strings.Compare(a.Name, b.Name) })
}

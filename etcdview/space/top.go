package space

import (
	"slices"
	"strings"
)

// topN keeps the n greatest keys by one order, in a slice sorted from the
// least, which a greater key replaces: offering every key of a store costs
// one comparison for most, and for the few that enter a search and a
// shift of n entries. The comparisons are a method of the order, inlined,
// not a func value or a heap.Interface: a key is offered at every level of
// its path, and a store walked newest first, its names created in order,
// brings each key in before the ones kept (a list by version of keys that
// were all written once keeps the first names), where a heap's sift, its
// comparisons made through an interface, was half a report's tree.
type topN struct {
	n  int
	by order
	h  []KeyStat
}

func newTopN(n int, by order) topN { return topN{n: n, by: by} }

func (t *topN) offer(k *KeyStat) {
	if t.n <= 0 || k.Key == "" || len(t.h) == t.n && !t.by.less(&t.h[0], k) {
		return
	}
	// i is where k goes: after every kept key less than it.
	lo, hi := 0, len(t.h)
	for lo < hi {
		if m := int(uint(lo+hi) >> 1); t.by.less(&t.h[m], k) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if len(t.h) < t.n {
		if t.h == nil {
			// Room for the n at once: a store fills most lists.
			t.h = make([]KeyStat, 0, t.n)
		}
		t.h = slices.Insert(t.h, lo, *k)
		return
	}
	// Full: the least goes, the keys below k move down one.
	copy(t.h, t.h[1:lo])
	t.h[lo-1] = *k
}

// sorted is the kept keys, greatest first; t is done.
func (t *topN) sorted() []KeyStat {
	s := t.h
	slices.Reverse(s)
	*t = topN{}
	return s
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

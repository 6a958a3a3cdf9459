package space

import (
	"container/heap"
	"slices"
	"strings"
)

// topN keeps the n greatest keys by one order: a min-heap, whose least is
// the one a greater key replaces, so that offering every key of a store
// costs a comparison for most and log n for the few that enter.
type topN struct {
	n    int
	less func(a, b KeyStat) bool
	h    []KeyStat
}

func newTopN(n int, less func(a, b KeyStat) bool) topN { return topN{n: n, less: less} }

func (t *topN) offer(k KeyStat) {
	switch {
	case t.n <= 0 || k.Key == "":
	case len(t.h) < t.n:
		heap.Push(t, k)
	case t.less(t.h[0], k):
		t.h[0] = k
		heap.Fix(t, 0)
	}
}

// sorted is the kept keys, greatest first.
func (t *topN) sorted() []KeyStat {
	s := slices.Clone(t.h)
	slices.SortFunc(s, func(a, b KeyStat) int {
		switch {
		case t.less(b, a):
			return -1
		case t.less(a, b):
			return 1
		}
		return 0
	})
	return s
}

func (t *topN) Len() int           { return len(t.h) }
func (t *topN) Less(i, j int) bool { return t.less(t.h[i], t.h[j]) }
func (t *topN) Swap(i, j int)      { t.h[i], t.h[j] = t.h[j], t.h[i] }
func (t *topN) Push(x any)         { t.h = append(t.h, x.(KeyStat)) }
func (t *topN) Pop() any {
	last := t.h[len(t.h)-1]
	t.h = t.h[:len(t.h)-1]
	return last
}

// bySize orders keys by bytes, then by key (the earlier key first), so
// that ties keep the same keys whatever the order they came in. The keys
// are compared only on a tie: every key of a store is offered.
func bySize(a, b KeyStat) bool {
	if a.Size != b.Size {
		return a.Size < b.Size
	}
	return a.Key > b.Key
}

// byVersion orders keys by writes since creation, then by key.
func byVersion(a, b KeyStat) bool {
	if a.Version != b.Version {
		return a.Version < b.Version
	}
	return a.Key > b.Key
}

func sortByName(nodes []*Node) {
	slices.SortFunc(nodes, func(a, b *Node) int { return strings.Compare(a.Name, b.Name) })
}

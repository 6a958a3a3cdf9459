package space

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Measure is what nodes are ordered and compared by.
type Measure string

const (
	ByBytes Measure = "bytes" // bytes of the current values
	ByKeys  Measure = "keys"
	// ByRevisions is the revisions etcd holds, deletions included, when
	// the report read history; otherwise the writes since creation
	// (churn), the figure that stands for them without history.
	ByRevisions Measure = "revisions"
	ByRate      Measure = "rate" // revisions a second, measured live
)

// Measures are the measures, in the order a user is offered them.
var Measures = []Measure{ByBytes, ByKeys, ByRevisions, ByRate}

// ParseMeasure reads a measure's name, as --sort takes it.
func ParseMeasure(s string) (Measure, error) {
	for _, m := range Measures {
		if string(m) == s {
			return m, nil
		}
	}
	names := make([]string, len(Measures))
	for i, m := range Measures {
		names[i] = string(m)
	}
	return "", fmt.Errorf("unknown measure %q: want %s or %s", s, strings.Join(names[:len(names)-1], ", "), names[len(names)-1])
}

// Of is n's figure by m: rates, when m is ByRate, come from rates (nil: no
// rate measured, 0 for every node); history says the report read it.
func (m Measure) Of(n *Node, rates *Rates, history bool) float64 {
	switch m {
	case ByKeys:
		return float64(n.Keys)
	case ByRevisions:
		if history {
			return float64(n.Revisions + n.Tombstones)
		}
		return float64(n.Writes)
	case ByRate:
		return rates.Of(n.Path).Revisions
	}
	return float64(n.Bytes)
}

// Sorted is a copy of nodes, greatest first by m, then by name.
func Sorted(nodes []*Node, m Measure, rates *Rates, history bool) []*Node {
	s := slices.Clone(nodes)
	slices.SortStableFunc(s, func(a, b *Node) int {
		return cmp.Or(cmp.Compare(m.Of(b, rates, history), m.Of(a, rates, history)), strings.Compare(a.Name, b.Name))
	})
	return s
}

// Share is n's part of its parent's figure and of the root's by m, between
// 0 and 1; 0 where the whole is 0. The root is the whole of itself.
func Share(n *Node, m Measure, rates *Rates, history bool) (ofParent, ofRoot float64) {
	root := n.root()
	parent := n.parent
	if parent == nil {
		parent = n
	}
	v := m.Of(n, rates, history)
	return ratio(v, m.Of(parent, rates, history)), ratio(v, m.Of(root, rates, history))
}

func ratio(part, whole float64) float64 {
	if whole == 0 {
		return 0
	}
	return part / whole
}

package owners

import (
	"fmt"
	"slices"
	"strings"
)

// TreeNode is one place of an object in the tree of another.
type TreeNode struct {
	ID ID
	// Link is the reference that ties the node to the row above it: the
	// node's own ownerReference to that row's object. Nil for a root.
	Link *Link
	// Target marks the object the tree was asked for.
	Target bool
	// Repeated marks a node already shown above (a dependent of several
	// owners, or a cycle of references): it is not expanded again, so a
	// cycle ends.
	Repeated bool
	Children []*TreeNode
}

// Tree is the view of target, as kubectl-tree draws an object: from each
// root above target (an object with no ownerReferences, or an owner no
// object has) the owners down to it, and below target every dependent,
// recursively. Each node is expanded once.
func (g *Graph) Tree(target ID) []*TreeNode {
	onPath := g.ancestors(target)
	onPath[target] = true
	var roots []ID
	for id := range onPath {
		if len(g.nodes[id].Owners) == 0 {
			roots = append(roots, id)
		}
	}
	if len(roots) == 0 {
		// Every owner above target is in a cycle: the tree starts at it.
		roots = []ID{target}
	}
	slices.SortFunc(roots, g.compare)
	t := treeWalk{g: g, target: target, onPath: onPath, shown: map[ID]bool{}}
	out := make([]*TreeNode, len(roots))
	for i, r := range roots {
		out[i] = t.expand(r, nil, false)
	}
	return out
}

// ancestors are the nodes above id, each once, however the references loop.
func (g *Graph) ancestors(id ID) map[ID]bool {
	seen := map[ID]bool{}
	queue := []ID{id}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for _, r := range g.nodes[n].Owners {
			if owner := g.byUID[r.UID]; !seen[owner] {
				seen[owner] = true
				queue = append(queue, owner)
			}
		}
	}
	return seen
}

type treeWalk struct {
	g      *Graph
	target ID
	onPath map[ID]bool
	shown  map[ID]bool
}

// expand is id's node with its dependents: all of them once below the
// target, else only those on the way down to it.
func (t *treeWalk) expand(id ID, link *Link, below bool) *TreeNode {
	n := &TreeNode{ID: id, Link: link, Target: id == t.target}
	if t.shown[id] {
		n.Repeated = true
		return n
	}
	t.shown[id] = true
	below = below || n.Target
	for _, l := range t.g.Dependents(id) {
		if below || t.onPath[l.Dependent] {
			n.Children = append(n.Children, t.expand(l.Dependent, &l, below))
		}
	}
	return n
}

// Row is one line of a drawn tree.
type Row struct {
	*TreeNode
	Depth int
	// Indent is the drawing before the object's name: "│  └─ ".
	Indent string
}

// Rows flattens a tree into its lines, drawn as kubectl-tree draws them.
func Rows(roots []*TreeNode) []Row {
	var out []Row
	var walk func(n *TreeNode, depth int, lead string, last bool)
	walk = func(n *TreeNode, depth int, lead string, last bool) {
		indent, next := "", ""
		if depth > 0 {
			indent, next = lead+"├─ ", lead+"│  "
			if last {
				indent, next = lead+"└─ ", lead+"   "
			}
		}
		out = append(out, Row{TreeNode: n, Depth: depth, Indent: indent})
		for i, c := range n.Children {
			walk(c, depth+1, next, i == len(n.Children)-1)
		}
	}
	for _, r := range roots {
		walk(r, 0, "", true)
	}
	return out
}

// State is what a row says of its object beyond its identity: the object
// asked about, an owner no object has, a reference the collector does not
// take as it stands, a dependent that blocks its owner's foreground
// deletion, a deletion waiting on finalizers, a node shown above already.
func (g *Graph) State(r Row) string {
	var notes []string
	o := g.nodes[r.ID]
	if r.Target {
		notes = append(notes, "this object")
	}
	if g.Virtual(r.ID) {
		notes = append(notes, "missing: "+Absent.String())
	}
	if l := r.Link; l != nil {
		if l.State != Solid && l.State != Absent {
			notes = append(notes, "its reference: "+l.State.String())
		}
		if owner := g.nodes[l.Owner]; l.Ref.BlockOwnerDeletion && owner.Deleting() && owner.HasFinalizer(FinalizerForeground) {
			notes = append(notes, "blocks its owner's foreground deletion")
		}
	}
	if o.Deleting() {
		notes = append(notes, fmt.Sprintf("deleting since %s (finalizers: %s)", stamp(o.Deleted), strings.Join(o.Finalizers, ", ")))
	}
	if r.Repeated {
		notes = append(notes, "shown above")
	}
	return strings.Join(notes, "; ")
}

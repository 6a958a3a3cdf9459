package owners

import (
	"cmp"
	"slices"
	"strings"

	"github.com/etcdscope/etcdscope/decode"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ID is a node of a Graph: an object, or an owner no object has.
type ID int32

// Graph is the ownerReferences graph of the objects of one revision.
type Graph struct {
	// nodes are the objects, then the owners no object has ("virtual"
	// nodes, as the collector's graph has them: GraphBuilder.
	// addDependentToOwners), known only from references to their uid and
	// without a Key.
	nodes []Object
	byUID map[string]ID
	// dependents are the references to each node that has any.
	dependents map[ID][]edge
	// scopes says, for each kind the graph has seen an object of or a
	// CustomResourceDefinition for, whether it is namespaced.
	scopes map[schema.GroupKind]bool
	// unreadable counts the values a Builder was given that held no
	// object, by format.
	unreadable map[decode.Format]int
}

// edge is one reference to a node: from the dependent to, its ref-th.
type edge struct {
	to    ID
	ref   int32
	state RefState
}

// Link is one ownerReference of Dependent, to Owner, as the collector
// judges it.
type Link struct {
	Owner, Dependent ID
	Ref              Ref
	State            RefState
}

// New is the graph of objects (as a Builder would collect them).
func New(objects []Object) *Graph { return build(slices.Clone(objects), nil) }

// build makes the graph of the objects of nodes, which it keeps: one copy
// of each object's metadata, in a slice grown once for the owners no object
// has.
func build(nodes []Object, crdScopes map[schema.GroupKind]bool) *Graph {
	objects := len(nodes)
	g := &Graph{byUID: make(map[string]ID, objects), dependents: map[ID][]edge{}, scopes: map[schema.GroupKind]bool{}}
	for i := range nodes {
		o := &nodes[i]
		// One node per uid, as the collector's uidToNode holds: a second
		// object claiming a uid (never written by kube-apiserver) is
		// shown, but owns nothing.
		if _, dup := g.byUID[o.UID]; o.UID != "" && !dup {
			g.byUID[o.UID] = ID(i)
		}
		if o.Kind != "" {
			g.scopes[schema.GroupKind{Group: o.Group(), Kind: o.Kind}] = o.Namespace != ""
		}
	}
	for gk, namespaced := range crdScopes {
		if _, seen := g.scopes[gk]; !seen {
			g.scopes[gk] = namespaced
		}
	}
	absent := map[string]bool{}
	for i := range nodes {
		for _, r := range nodes[i].Owners {
			if _, ok := g.byUID[r.UID]; !ok {
				absent[r.UID] = true
			}
		}
	}
	g.nodes = slices.Grow(nodes, len(absent))
	for id := range ID(objects) {
		g.link(id)
	}
	for _, deps := range g.dependents {
		slices.SortFunc(deps, func(a, b edge) int { return g.compare(a.to, b.to) })
	}
	return g
}

// link ties each ownerReference of dependent to its owner node, making a
// virtual one for a uid no object has.
func (g *Graph) link(dependent ID) {
	for i, r := range g.nodes[dependent].Owners {
		owner, ok := g.byUID[r.UID]
		if !ok {
			owner = g.addVirtual(r, g.nodes[dependent].Namespace)
		}
		state := g.judge(g.nodes[dependent], r)
		g.dependents[owner] = append(g.dependents[owner], edge{to: dependent, ref: int32(i), state: state})
	}
}

// addVirtual is a node for an owner no object has, named as ref names it,
// in the dependent's namespace unless its kind is cluster-scoped.
func (g *Graph) addVirtual(r Ref, namespace string) ID {
	if namespaced, known := g.scope(groupOf(r.APIVersion), r.Kind); known && !namespaced {
		namespace = ""
	}
	id := ID(len(g.nodes))
	g.nodes = append(g.nodes, Object{UID: r.UID, APIVersion: r.APIVersion, Kind: r.Kind, Name: r.Name, Namespace: namespace})
	g.byUID[r.UID] = id
	return id
}

// judge says whether the collector would find the owner r names, in the
// order its isDangling looks: the kind's REST mapping, a cluster-scoped
// dependent of a namespaced kind (never valid), then a Get of the owner by
// kind and name in the dependent's namespace (cluster-wide for a
// cluster-scoped kind), whose uid must be r's.
func (g *Graph) judge(dependent Object, r Ref) RefState {
	group := groupOf(r.APIVersion)
	namespaced, known := g.scope(group, r.Kind)
	if !known {
		return UnknownKind
	}
	if namespaced && dependent.Namespace == "" {
		return NamespacedOwnerOfClusterScoped
	}
	id, ok := g.byUID[r.UID]
	if !ok || g.Virtual(id) {
		return Absent
	}
	owner := g.nodes[id]
	if owner.Group() != group || owner.Kind != r.Kind || owner.Name != r.Name {
		return Mismatch
	}
	if namespaced && owner.Namespace != dependent.Namespace {
		return OtherNamespace
	}
	return Solid
}

// scope says whether the kind is namespaced, and whether that is known:
// from the objects and definitions in the graph, else from the kinds this
// build knows.
func (g *Graph) scope(group, kind string) (namespaced, known bool) {
	if namespaced, ok := g.scopes[schema.GroupKind{Group: group, Kind: kind}]; ok {
		return namespaced, true
	}
	name := strings.ToLower(kind)
	if group != "" {
		name += "." + group
	}
	res, ok := decode.LookupResource(name)
	if !ok || res.Kind != kind || res.Group != group {
		return false, false
	}
	return res.Namespaced, true
}

// Len is the number of nodes: objects, then owners no object has.
func (g *Graph) Len() int { return len(g.nodes) }

// Unreadable counts the values the graph was built from that held no
// object with metadata, by the format decode found: what it cannot see
// (an encrypted Secret's ownerReferences are unknown without its key).
func (g *Graph) Unreadable() map[decode.Format]int { return g.unreadable }

// Object is the metadata of node id; a virtual node has only what the
// references to it say (no Key).
func (g *Graph) Object(id ID) Object { return g.nodes[id] }

// Virtual says whether id is an owner no object has.
func (g *Graph) Virtual(id ID) bool { return g.nodes[id].Key == "" }

// Lookup is the node of the object stored at key.
func (g *Graph) Lookup(key string) (ID, bool) {
	for i := range g.nodes {
		if g.nodes[i].Key == key && key != "" {
			return ID(i), true
		}
	}
	return 0, false
}

// Owners are id's ownerReferences, in the order the object lists them.
func (g *Graph) Owners(id ID) []Link {
	o := g.nodes[id]
	out := make([]Link, len(o.Owners))
	for i, r := range o.Owners {
		out[i] = Link{Owner: g.byUID[r.UID], Dependent: id, Ref: r, State: g.judge(o, r)}
	}
	return out
}

// Dependents are the references to id, by the dependents' kind, namespace
// and name.
func (g *Graph) Dependents(id ID) []Link {
	out := make([]Link, len(g.dependents[id]))
	for i, e := range g.dependents[id] {
		out[i] = Link{Owner: id, Dependent: e.to, Ref: g.nodes[e.to].Owners[e.ref], State: e.state}
	}
	return out
}

// compare orders nodes as the tree lists them: by kind, namespace, name.
func (g *Graph) compare(a, b ID) int {
	x, y := g.nodes[a], g.nodes[b]
	return cmp.Or(
		cmp.Compare(x.Kind, y.Kind),
		cmp.Compare(x.Namespace, y.Namespace),
		cmp.Compare(x.Name, y.Name),
		cmp.Compare(x.Key, y.Key),
		cmp.Compare(a, b),
	)
}

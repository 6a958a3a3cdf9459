// Package owners is the ownerReferences graph of the objects stored at one
// revision, matched as Kubernetes' garbage collector matches it
// (k8s.io/kubernetes/pkg/controller/garbagecollector): owners by uid, an
// owner no object has standing in as a virtual node, and each reference
// judged as the collector's isDangling judges it. From the graph: the chain
// of one object up to its roots and the tree of its dependents down, and the
// findings a stuck garbage collection raises (orphans, invalid references,
// dependents that block their owner's deletion, owners stuck with the orphan
// or foregroundDeletion finalizer). Read is its one read of a store, which
// the CLI's owners and the TUI's owners pane both call; the rest does no
// I/O.
package owners

import (
	"strings"
	"time"

	"github.com/etcdscope/etcdscope/decode"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Object is what the graph keeps of one stored object: its identity, its
// ownerReferences and its deletion state, nothing of its spec or status.
type Object struct {
	Key        string // the etcd key; "" for an owner no object has
	Revision   int64  // the key's mod revision
	UID        string
	APIVersion string
	Kind       string
	Namespace  string // "" for a cluster-scoped object
	Name       string
	Created    time.Time
	// Deleted is metadata.deletionTimestamp: zero unless a deletion waits
	// on the object's finalizers.
	Deleted    time.Time
	Finalizers []string
	Owners     []Ref
}

// Ref is one metadata.ownerReferences entry.
type Ref struct {
	APIVersion string
	Kind       string
	Name       string
	UID        string
	Controller bool
	// BlockOwnerDeletion makes a foreground deletion of the owner wait for
	// this dependent to be gone.
	BlockOwnerDeletion bool
}

// The finalizers the garbage collector acts on (metav1.FinalizerOrphanDependents
// and FinalizerDeleteDependents): kubectl delete --cascade=orphan and
// --cascade=foreground set them on the object deleted.
const (
	FinalizerOrphan     = "orphan"
	FinalizerForeground = "foregroundDeletion"
)

// Ident is the object as kubectl names it: Kind/name.
func (o Object) Ident() string { return o.Kind + "/" + o.Name }

// Group is the API group of the object's apiVersion.
func (o Object) Group() string { return groupOf(o.APIVersion) }

// Deleting says whether a deletion of the object waits on its finalizers.
func (o Object) Deleting() bool { return !o.Deleted.IsZero() }

// HasFinalizer says whether f is among the object's finalizers.
func (o Object) HasFinalizer(f string) bool {
	for _, have := range o.Finalizers {
		if have == f {
			return true
		}
	}
	return false
}

// Ignored says whether the garbage collector leaves the objects of the
// resource k is a key of out of its graph: Events, core and
// events.k8s.io, which share one storage prefix (its ignoredResources).
func Ignored(k decode.Key) bool { return k.Group == "" && k.Resource == "events" }

func groupOf(apiVersion string) string {
	return schema.FromAPIVersionAndKind(apiVersion, "").Group
}

// Builder collects the metadata of stored values into the objects of a
// graph, keeping none of the values: a cluster's worth of objects reduces to
// their identities and references. Strings every object repeats (apiVersion,
// kind, finalizers) are kept once.
type Builder struct {
	// Decoder decodes the values; JSONOnly is set on it, as nothing is
	// rendered.
	Decoder decode.Decoder
	nodes   []Object
	scopes  map[schema.GroupKind]bool
	strs    map[string]string
	// unreadable counts the values that held no object with metadata, by
	// the format decode found (encrypted, text, binary, ...).
	unreadable map[decode.Format]int
}

// Add decodes the value of key, written at modRevision, and keeps its
// metadata; it returns false for a value that holds no object with
// metadata, counted in the graph's Unreadable.
func (b *Builder) Add(key string, value []byte, modRevision int64) bool {
	d := b.Decoder
	d.JSONOnly = true
	o := d.DecodeAt(key, value, modRevision)
	obj, ok := b.meta(o, modRevision)
	if !ok {
		if b.unreadable == nil {
			b.unreadable = map[decode.Format]int{}
		}
		b.unreadable[o.Format]++
		return false
	}
	b.nodes = append(b.nodes, obj)
	b.noteScope(o)
	return true
}

// Graph is the graph of the objects added so far. The builder is spent.
func (b *Builder) Graph() *Graph {
	g := build(b.nodes, b.scopes)
	g.unreadable = b.unreadable
	b.nodes, b.strs = nil, nil
	return g
}

// meta is the metadata of a decoded object, its strings interned.
func (b *Builder) meta(o decode.Object, modRevision int64) (Object, bool) {
	if o.Object == nil {
		return Object{}, false
	}
	m, err := meta.Accessor(o.Object)
	if err != nil {
		return Object{}, false
	}
	apiVersion, kind := o.GVK.ToAPIVersionAndKind()
	key := o.Key.Raw
	obj := Object{
		Key:        key,
		Revision:   modRevision,
		UID:        string(m.GetUID()),
		APIVersion: b.intern(apiVersion),
		Kind:       b.intern(kind),
		Namespace:  within(key, m.GetNamespace()),
		Name:       within(key, m.GetName()),
		Created:    m.GetCreationTimestamp().Time,
	}
	if t := m.GetDeletionTimestamp(); t != nil {
		obj.Deleted = t.Time
	}
	for _, f := range m.GetFinalizers() {
		obj.Finalizers = append(obj.Finalizers, b.intern(f))
	}
	for _, r := range m.GetOwnerReferences() {
		obj.Owners = append(obj.Owners, Ref{
			APIVersion:         b.intern(r.APIVersion),
			Kind:               b.intern(r.Kind),
			Name:               r.Name,
			UID:                string(r.UID),
			Controller:         r.Controller != nil && *r.Controller,
			BlockOwnerDeletion: r.BlockOwnerDeletion != nil && *r.BlockOwnerDeletion,
		})
	}
	return obj, true
}

// noteScope records the scope of the kind a CustomResourceDefinition
// defines, so that a reference to an owner of that kind that no object has
// can still be judged as the collector judges it (namespaced or not), as
// its REST mapping would say.
func (b *Builder) noteScope(o decode.Object) {
	if o.GVK.Group != "apiextensions.k8s.io" || o.GVK.Kind != "CustomResourceDefinition" {
		return
	}
	u, ok := o.Object.(*unstructured.Unstructured)
	if !ok {
		return
	}
	group, _, _ := unstructured.NestedString(u.Object, "spec", "group")
	kind, _, _ := unstructured.NestedString(u.Object, "spec", "names", "kind")
	scope, _, _ := unstructured.NestedString(u.Object, "spec", "scope")
	if kind == "" {
		return
	}
	if b.scopes == nil {
		b.scopes = map[schema.GroupKind]bool{}
	}
	b.scopes[schema.GroupKind{Group: group, Kind: kind}] = scope == "Namespaced"
}

func (b *Builder) intern(s string) string {
	if b.strs == nil {
		b.strs = map[string]string{}
	}
	if have, ok := b.strs[s]; ok {
		return have
	}
	b.strs[s] = s
	return s
}

// within is s as a slice of key when the key holds it, as it holds the
// namespace and name of every object kube-apiserver stores: the object
// then costs no string of its own for them.
func within(key, s string) string {
	if i := strings.LastIndex(key, s); i >= 0 && s != "" {
		return key[i : i+len(s)]
	}
	return s
}

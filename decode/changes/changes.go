// Package changes is the model behind `etcdscope changes` and the timeline
// screen: fed the events of a window of revisions, it groups them by
// resource and namespace, counts what happened to each object, and says of
// each object which fields changed and who wrote it. It does no I/O.
package changes

import (
	"cmp"
	"slices"
	"strconv"

	"github.com/etcdscope/etcdscope/decode"
)

// Type is what an event did to its key, in kubectl's watch words.
type Type string

const (
	Added    Type = "ADDED"
	Modified Type = "MODIFIED"
	Deleted  Type = "DELETED"
)

// Event is one change of one key, as a watch delivers it.
type Event struct {
	Type     Type
	Key      string
	Revision int64 // the revision of the change
	// CreateRevision is the key's create revision after the change; 0
	// for a deletion.
	CreateRevision int64
	Value          []byte // after the change; nil for a deletion
	// Prev is the value before the change, written at PrevRevision; nil
	// when the key did not exist before, or the source no longer held it.
	Prev         []byte
	PrevRevision int64
}

// Counts are a window's events of each type.
type Counts struct {
	Added    int `json:"added"`
	Modified int `json:"modified"`
	Deleted  int `json:"deleted"`
}

func (c *Counts) add(t Type) {
	switch t {
	case Added:
		c.Added++
	case Deleted:
		c.Deleted++
	default:
		c.Modified++
	}
}

func (c *Counts) plus(o Counts) {
	c.Added += o.Added
	c.Modified += o.Modified
	c.Deleted += o.Deleted
}

// Total is the number of events counted.
func (c Counts) Total() int { return c.Added + c.Modified + c.Deleted }

// Window gathers the events of a span of revisions, in revision order.
//
// What it keeps of each key is what the report needs: the counts, the value
// the key held before the window (the Prev of its first event) and its
// newest value (for a deletion, the value before it), as etcd stores them.
// Nothing is decoded until Report, which decodes the two values of one key
// at a time. So memory grows with the number of keys the window touched, at
// most two values each, not with its revisions: 100k renewals of 5,000
// Leases hold 10,000 values, and never 100k decoded objects.
type Window struct {
	keys     map[string]*tracked
	from, to int64 // the first and last revision of an event
	events   int
}

// tracked is one key's part of a window.
type tracked struct {
	counts      Counts
	first, last int64 // revisions of its first and last event
	// existed is true when the key existed before its first event;
	// before is its value then (nil when the source no longer held it).
	existed   bool
	before    []byte
	beforeRev int64
	// exists is true when the key exists after its last event; value is
	// its newest value, written at valueRev, created at createRev.
	exists    bool
	value     []byte
	valueRev  int64
	createRev int64
}

// NewWindow is an empty window.
func NewWindow() *Window { return &Window{keys: map[string]*tracked{}} }

// Add counts ev and keeps what the report needs of it. Events must come in
// revision order, as a watch delivers them.
func (w *Window) Add(ev Event) {
	if w.events == 0 {
		w.from = ev.Revision
	}
	w.to = ev.Revision
	w.events++
	t := w.keys[ev.Key]
	if t == nil {
		t = &tracked{first: ev.Revision, existed: ev.Type != Added}
		if t.existed {
			t.before, t.beforeRev = ev.Prev, ev.PrevRevision
		}
		w.keys[ev.Key] = t
	}
	t.counts.add(ev.Type)
	t.last = ev.Revision
	if ev.Type == Deleted {
		t.exists = false
		if ev.Prev != nil {
			t.value, t.valueRev = ev.Prev, ev.PrevRevision
		}
		return
	}
	t.exists = true
	t.value, t.valueRev, t.createRev = ev.Value, ev.Revision, ev.CreateRevision
}

// Events is how many events the window holds.
func (w *Window) Events() int { return w.events }

// Report is a window's changes, grouped.
type Report struct {
	// From and To are the revisions of the window's first and last
	// event; 0 when it has none.
	From, To int64
	Events   int
	Counts   Counts
	Groups   []Group // by group, resource, then namespace
}

// Group is the changes of one resource in one namespace.
type Group struct {
	// Group and Resource name the resource as the API serves it
	// ("apps", "deployments"); Resource is "" for the keys that are not
	// objects laid out as kube-apiserver lays them out.
	Group, Resource string
	Namespace       string // "" for cluster-scoped resources
	Counts
	Objects []Object // by name
}

// ResourceName is the resource as kubectl names it with its group,
// "deployments.apps".
func (g Group) ResourceName() string {
	switch {
	case g.Resource == "":
		return "(keys that are not objects)"
	case g.Group == "":
		return g.Resource
	}
	return g.Resource + "." + g.Group
}

// Object is the changes of one key in the window.
type Object struct {
	Key  string
	Name string // the object's name; the key itself when not an object
	Counts
	FirstRevision, LastRevision int64
	// Summary says in one line what the window did to the object:
	// "created", "deleted", "created, then deleted", or the fields that
	// differ between its value before the window and after it
	// (decode.DiffSummary).
	Summary string
	// Writers are the managedFields entries the window's writes added or
	// renewed, oldest first (see writersOf).
	Writers []Writer
}

// Revisions is "first-last", or the one revision of an object changed once.
func (o Object) Revisions() string {
	if o.FirstRevision == o.LastRevision {
		return strconv.FormatInt(o.FirstRevision, 10)
	}
	return strconv.FormatInt(o.FirstRevision, 10) + "-" + strconv.FormatInt(o.LastRevision, 10)
}

// Report decodes what the window kept, one key at a time, with d, and
// records what the values say of time in times (nil records nothing).
// Summaries compare the objects' fields (decode.DiffSummary), never their
// YAML, so none is rendered.
func (w *Window) Report(d decode.Decoder, times *TimeMap) Report {
	d.JSONOnly = true
	r := Report{From: w.from, To: w.to, Events: w.events}
	type groupKey struct{ group, resource, namespace string }
	groups := map[groupKey]*Group{}
	for key, t := range w.keys {
		k := d.Keys.Parse(key)
		gk, name := groupKey{k.Group, k.Resource, k.Namespace}, k.Name
		if !k.IsObject {
			gk, name = groupKey{}, decode.EscapeKey(key)
		}
		g := groups[gk]
		if g == nil {
			g = &Group{Group: gk.group, Resource: gk.resource, Namespace: gk.namespace}
			groups[gk] = g
		}
		o := t.report(d, key, times)
		o.Name = name
		g.Counts.plus(o.Counts)
		r.Counts.plus(o.Counts)
		g.Objects = append(g.Objects, o)
	}
	for _, g := range groups {
		slices.SortFunc(g.Objects, func(a, b Object) int { return cmp.Compare(a.Name, b.Name) })
		r.Groups = append(r.Groups, *g)
	}
	slices.SortFunc(r.Groups, func(a, b Group) int {
		return cmp.Or(cmp.Compare(a.Group, b.Group), cmp.Compare(a.Resource, b.Resource), cmp.Compare(a.Namespace, b.Namespace))
	})
	return r
}

// report decodes the key's two values and says what changed and who wrote.
func (t *tracked) report(d decode.Decoder, key string, times *TimeMap) Object {
	o := Object{Key: key, Counts: t.counts, FirstRevision: t.first, LastRevision: t.last}
	var before, after *decode.Object
	if t.existed && t.before != nil {
		b := d.DecodeAt(key, t.before, t.beforeRev)
		times.Observe(b, t.beforeRev, 0)
		before = &b
	}
	if t.value != nil {
		a := d.DecodeAt(key, t.value, t.valueRev)
		created := int64(0)
		if t.exists {
			created = t.createRev
		}
		times.Observe(a, t.valueRev, created)
		after = &a
	}
	o.Summary = t.summary(before, after)
	if after != nil {
		o.Writers = writersOf(before, *after)
	}
	return o
}

// summary is Object.Summary.
func (t *tracked) summary(before, after *decode.Object) string {
	switch {
	case !t.existed && !t.exists:
		return "created, then deleted"
	case !t.existed:
		return "created"
	case !t.exists:
		return "deleted"
	case before == nil || after == nil:
		return "(the value before the window is gone)"
	case t.counts.Deleted > 0:
		return "deleted and created again: " + decode.DiffSummary(*before, *after)
	}
	return decode.DiffSummary(*before, *after)
}

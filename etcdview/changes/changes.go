// Package changes is the feature behind `etcdscope changes` and screen 7:
// the read of a window of revisions (Read: a watch from its first revision,
// ended at its last, and the Leases that say when each revision was), and
// its model, which groups the window's events by resource and namespace,
// counts what happened to each object, and says of each object which
// fields changed and who wrote it, from the values alone.
package changes

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"

	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/etcdview"
)

// Counts are a window's events of each type.
type Counts struct {
	Added    int `json:"added"`
	Modified int `json:"modified"`
	Deleted  int `json:"deleted"`
}

func (c *Counts) add(t etcdview.EventType) {
	switch t {
	case etcdview.Added:
		c.Added++
	case etcdview.Deleted:
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

// Window is what changed in a span of revisions, and how the span was
// found: Read sets its bounds, then adds the events of a watch over it, in
// revision order, and reports them.
//
// What it keeps of each key, until the report, is what the report needs:
// the counts, the value the key held before the window (the Prev of its
// first event) and its newest value (for a deletion, the value before it),
// as etcd stores them. Nothing is decoded until report, which decodes the
// two values of one key at a time. So memory grows with the number of keys
// the window touched, at most two values each, not with its revisions:
// 100k renewals of 5,000 Leases hold 10,000 values, and never 100k decoded
// objects.
type Window struct {
	// From and To are the window's revisions, both included: the range
	// read, whether or not each revision changed a key below the prefix.
	From, To int64
	Head     int64 // the store's revision when the read started
	// CompactedAt is where etcd's history begins, when the start asked
	// for was compacted away: the window starts there instead.
	CompactedAt int64
	// Since says how Range.Since became From, "" when it did not.
	Since string
	// Notes are what the watch said about its stream (a resume, a gap).
	Notes []string
	// Times are what the Leases at the head and the window's values say
	// of time.
	Times *TimeMap
	// Recorded says that Times holds the window's ends at the times a
	// recording received their revisions (etcdscope record): theirs are
	// not estimates.
	Recorded bool

	Events int
	Counts Counts
	Groups []Group // by group, resource, then namespace

	keys map[string]*tracked // until report
}

// Span names the window's revisions: "revisions 5-12", or none when its
// start is after its end (nothing was written since the time asked).
func (w Window) Span() string {
	if w.From > w.To {
		return fmt.Sprintf("no revision: the window starts after revision %d", w.To)
	}
	return fmt.Sprintf("revisions %d-%d", w.From, w.To)
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

// add counts ev and keeps what the report needs of it. Events must come in
// revision order, as a watch delivers them.
func (w *Window) add(ev etcdview.Event) {
	if w.keys == nil {
		w.keys = map[string]*tracked{}
	}
	w.Events++
	rev := ev.KV.ModRevision
	prev, prevRev := previous(ev)
	t := w.keys[ev.KV.Key]
	if t == nil {
		t = &tracked{first: rev, existed: ev.Type != etcdview.Added}
		if t.existed {
			t.before, t.beforeRev = prev, prevRev
		}
		w.keys[ev.KV.Key] = t
	}
	t.counts.add(ev.Type)
	t.last = rev
	if ev.Type == etcdview.Deleted {
		t.exists = false
		if prev != nil {
			t.value, t.valueRev = prev, prevRev
		}
		return
	}
	t.exists = true
	t.value, t.valueRev, t.createRev = ev.KV.Value, rev, ev.KV.CreateRevision
}

// previous is the value ev replaced and its revision; nil when the key did
// not exist before, or the source no longer held it.
func previous(ev etcdview.Event) ([]byte, int64) {
	if ev.Prev == nil {
		return nil, 0
	}
	return ev.Prev.Value, ev.Prev.ModRevision
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

// report decodes what the window kept, one key at a time, with d, into its
// groups, records what the values say of time in w.Times (nil records
// nothing), and lets go of the values. Summaries compare the objects'
// fields (decode.DiffSummary), never their YAML, so none is rendered.
func (w *Window) report(d decode.Decoder) {
	d.JSONOnly = true
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
		o := t.report(d, key, w.Times)
		o.Name = name
		g.Counts.plus(o.Counts)
		w.Counts.plus(o.Counts)
		g.Objects = append(g.Objects, o)
	}
	w.keys = nil
	for _, g := range groups {
		slices.SortFunc(g.Objects, func(a, b Object) int { return cmp.Compare(a.Name, b.Name) })
		w.Groups = append(w.Groups, *g)
	}
	slices.SortFunc(w.Groups, func(a, b Group) int {
		return cmp.Or(cmp.Compare(a.Group, b.Group), cmp.Compare(a.Resource, b.Resource), cmp.Compare(a.Namespace, b.Namespace))
	})
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

package owners

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/decode"
)

var created = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// obj is an object of kind in namespace ns ("" cluster-scoped), with
// uid "uid-NAME", stored where kube-apiserver would store it.
func obj(apiVersion, kind, ns, name string, owners ...Ref) Object {
	key := "/registry/" + strings.ToLower(kind) + "s/"
	if ns != "" {
		key += ns + "/"
	}
	return Object{
		Key: key + name, Revision: 10, UID: "uid-" + name, APIVersion: apiVersion, Kind: kind,
		Namespace: ns, Name: name, Created: created, Owners: owners,
	}
}

// ownedBy is a controller reference to o, blocking its owner's deletion
// as the workload controllers set it.
func ownedBy(o Object) Ref {
	return Ref{APIVersion: o.APIVersion, Kind: o.Kind, Name: o.Name, UID: o.UID, Controller: true, BlockOwnerDeletion: true}
}

func deleting(o Object, finalizers ...string) Object {
	o.Deleted = created.Add(time.Hour)
	o.Finalizers = finalizers
	return o
}

// drawn is the tree of target drawn one line a row: indent, Kind/name,
// and a mark for the target, a repeated node and a virtual one.
func drawn(g *Graph, target ID) string {
	var b strings.Builder
	for _, r := range Rows(g.Tree(target)) {
		b.WriteString(r.Indent + g.Object(r.ID).Ident())
		if r.Target {
			b.WriteString(" *")
		}
		if r.Repeated {
			b.WriteString(" (above)")
		}
		if g.Virtual(r.ID) {
			b.WriteString(" (missing)")
		}
		b.WriteString("\n")
	}
	return b.String()
}

func lookup(t *testing.T, g *Graph, o Object) ID {
	t.Helper()
	id, ok := g.Lookup(o.Key)
	if !ok {
		t.Fatalf("%s not in the graph", o.Key)
	}
	return id
}

func TestTreeGoesFromTheRootThroughTheChainToTheDependents(t *testing.T) {
	deploy := obj("apps/v1", "Deployment", "default", "web")
	rs := obj("apps/v1", "ReplicaSet", "default", "web-7d9c", ownedBy(deploy))
	pod1 := obj("v1", "Pod", "default", "web-7d9c-b", ownedBy(rs))
	pod2 := obj("v1", "Pod", "default", "web-7d9c-a", ownedBy(rs))
	other := obj("v1", "Pod", "default", "lone")
	g := New([]Object{pod1, other, rs, deploy, pod2})

	for _, tc := range []struct {
		of   Object
		want string
	}{
		{deploy, "Deployment/web *\n└─ ReplicaSet/web-7d9c\n   ├─ Pod/web-7d9c-a\n   └─ Pod/web-7d9c-b\n"},
		{rs, "Deployment/web\n└─ ReplicaSet/web-7d9c *\n   ├─ Pod/web-7d9c-a\n   └─ Pod/web-7d9c-b\n"},
		// A pod's tree shows the way down to it, not its siblings.
		{pod1, "Deployment/web\n└─ ReplicaSet/web-7d9c\n   └─ Pod/web-7d9c-b *\n"},
		{other, "Pod/lone *\n"},
	} {
		if got := drawn(g, lookup(t, g, tc.of)); got != tc.want {
			t.Errorf("tree of %s:\n%s\nwant:\n%s", tc.of.Ident(), got, tc.want)
		}
	}
	if f := g.Findings(); len(f) != 0 {
		t.Errorf("a healthy chain has findings: %+v", f)
	}
	links := g.Owners(lookup(t, g, pod1))
	if len(links) != 1 || links[0].Owner != lookup(t, g, rs) || links[0].State != Solid || !links[0].Ref.Controller {
		t.Errorf("pod's owners = %+v, want the ReplicaSet, solid, controller", links)
	}
}

func TestCyclesEndInTreesAndFindings(t *testing.T) {
	a := obj("v1", "ConfigMap", "default", "a")
	b := obj("v1", "ConfigMap", "default", "b")
	c := obj("v1", "ConfigMap", "default", "c")
	a.Owners = []Ref{ownedBy(c)}
	b.Owners = []Ref{ownedBy(a)}
	c.Owners = []Ref{ownedBy(b)}
	self := obj("v1", "ConfigMap", "default", "self")
	self.Owners = []Ref{ownedBy(self)}
	g := New([]Object{a, b, c, self})

	want := "ConfigMap/a *\n└─ ConfigMap/b\n   └─ ConfigMap/c\n      └─ ConfigMap/a * (above)\n"
	if got := drawn(g, lookup(t, g, a)); got != want {
		t.Errorf("tree of a cycle:\n%s\nwant:\n%s", got, want)
	}
	want = "ConfigMap/self *\n└─ ConfigMap/self * (above)\n"
	if got := drawn(g, lookup(t, g, self)); got != want {
		t.Errorf("tree of an object owning itself:\n%s\nwant:\n%s", got, want)
	}
	if f := g.Findings(); len(f) != 0 {
		t.Errorf("a cycle of existing owners has findings: %+v", f)
	}
}

func TestTreeShowsADependentOfTwoOwnersOnce(t *testing.T) {
	left := obj("v1", "ConfigMap", "default", "left")
	right := obj("v1", "ConfigMap", "default", "right")
	shared := obj("v1", "ConfigMap", "default", "shared", ownedBy(left), ownedBy(right))
	child := obj("v1", "ConfigMap", "default", "child", ownedBy(shared))
	g := New([]Object{left, right, shared, child})
	want := "ConfigMap/left\n└─ ConfigMap/shared *\n   └─ ConfigMap/child\n" +
		"ConfigMap/right\n└─ ConfigMap/shared * (above)\n"
	if got := drawn(g, lookup(t, g, shared)); got != want {
		t.Errorf("tree of a dependent of two owners:\n%s\nwant:\n%s", got, want)
	}
}

func TestMissingOwnerMakesAnOrphan(t *testing.T) {
	gone := obj("apps/v1", "ReplicaSet", "default", "gone")
	orphan := obj("v1", "ConfigMap", "default", "orphan", ownedBy(gone))
	held := deleting(obj("v1", "ConfigMap", "default", "held", ownedBy(gone)), "example.com/keep")
	// kubectl delete --cascade=orphan leaves no reference: not an orphan.
	released := obj("v1", "Pod", "default", "released")
	g := New([]Object{orphan, held, released})

	id := lookup(t, g, orphan)
	want := "ReplicaSet/gone (missing)\n└─ ConfigMap/orphan *\n"
	if got := drawn(g, id); got != want {
		t.Errorf("tree of an orphan:\n%s\nwant:\n%s", got, want)
	}
	if l := g.Owners(id); l[0].State != Absent || !g.Virtual(l[0].Owner) || g.Object(l[0].Owner).Namespace != "default" {
		t.Errorf("orphan's owner = %+v (%+v), want absent, virtual, in the dependent's namespace", l[0], g.Object(l[0].Owner))
	}
	got := findingsText(g)
	want = "ConfigMap/held orphan: owner ReplicaSet/gone (uid uid-gone) (no object has this uid); already being deleted since 2026-11-30T13:00:00Z, held by finalizers example.com/keep\n" +
		"ConfigMap/orphan orphan: owner ReplicaSet/gone (uid uid-gone) (no object has this uid); the garbage collector deletes it\n"
	if got != want {
		t.Errorf("findings:\n%s\nwant:\n%s", got, want)
	}
}

func findingsText(g *Graph) string {
	var b strings.Builder
	for _, f := range g.Findings() {
		fmt.Fprintf(&b, "%s %s: %s\n", g.Object(f.ID).Ident(), f.Problem, f.Why)
	}
	return b.String()
}

func TestReferencesAreJudgedAsTheCollectorDoes(t *testing.T) {
	node := obj("v1", "Node", "", "n1")
	rsA := obj("apps/v1", "ReplicaSet", "a", "rs")
	rsB := obj("apps/v1", "ReplicaSet", "b", "other")
	tests := []struct {
		name string
		dep  Object
		want RefState
	}{
		{"namespaced dependent, cluster-scoped owner", obj("coordination.k8s.io/v1", "Lease", "kube-node-lease", "n1", ownedBy(node)), Solid},
		{"owner in another namespace", obj("v1", "Pod", "b", "p", ownedBy(rsA)), OtherNamespace},
		{"cluster-scoped dependent, namespaced owner", obj("rbac.authorization.k8s.io/v1", "ClusterRole", "", "cr", ownedBy(rsA)), NamespacedOwnerOfClusterScoped},
		{"cluster-scoped dependent, absent namespaced owner", obj("rbac.authorization.k8s.io/v1", "ClusterRole", "", "cr2",
			Ref{APIVersion: "apps/v1", Kind: "Deployment", Name: "x", UID: "nope"}), NamespacedOwnerOfClusterScoped},
		{"uid of another name", obj("v1", "Pod", "b", "p2", Ref{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "renamed", UID: rsB.UID}), Mismatch},
		{"uid of another kind", obj("v1", "Pod", "b", "p3", Ref{APIVersion: "apps/v1", Kind: "Deployment", Name: "other", UID: rsB.UID}), Mismatch},
		{"another version of the group", obj("v1", "Pod", "b", "p4", Ref{APIVersion: "apps/v1beta2", Kind: "ReplicaSet", Name: "other", UID: rsB.UID}), Solid},
		{"absent owner of a known kind", obj("v1", "Pod", "b", "p5", Ref{APIVersion: "batch/v1", Kind: "Job", Name: "j", UID: "nope"}), Absent},
		{"kind nobody knows", obj("v1", "Pod", "b", "p6", Ref{APIVersion: "example.com/v1", Kind: "Widget", Name: "w", UID: "nope"}), UnknownKind},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := New([]Object{node, rsA, rsB, tc.dep})
			l := g.Owners(lookup(t, g, tc.dep))
			if len(l) != 1 || l[0].State != tc.want {
				t.Fatalf("state = %v, want %v", l[0].State, tc.want)
			}
		})
	}
}

func TestInvalidReferencesAreReportedNotCollected(t *testing.T) {
	rs := obj("apps/v1", "ReplicaSet", "a", "rs")
	cross := obj("v1", "Pod", "b", "cross", ownedBy(rs))
	cr := obj("rbac.authorization.k8s.io/v1", "ClusterRole", "", "cr", ownedBy(rs))
	widget := obj("v1", "Pod", "b", "w", Ref{APIVersion: "example.com/v1", Kind: "Widget", Name: "w", UID: "nope"},
		Ref{APIVersion: "v1", Kind: "Pod", Name: "gone", UID: "gone"})
	g := New([]Object{rs, cross, cr, widget})
	got := findingsText(g)
	for _, want := range []string{
		"ClusterRole/cr invalid-owner: owner ReplicaSet/rs (uid uid-rs): invalid: a cluster-scoped object cannot have a namespaced owner; the collector reports it and never collects this object for it\n",
		"Pod/cross orphan: owner ReplicaSet/rs (uid uid-rs) (invalid: the owner is in another namespace (the collector looks in the dependent's)); the garbage collector deletes it\n",
		// The unknown kind stops the collector before the dangling pod reference counts.
		"Pod/w unknown-owner-kind: owner Widget/w (uid nope): kind not stored here nor known to this build: the collector cannot look it up, so it decides nothing for this object\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("findings lack\n%s\ngot:\n%s", want, got)
		}
	}
	if strings.Count(got, "\n") != 3 {
		t.Errorf("want 3 findings, got:\n%s", got)
	}
}

func TestDanglingReferenceBesideASolidOneIsRemovedNotCollected(t *testing.T) {
	keeper := obj("v1", "ConfigMap", "default", "keeper")
	dep := obj("v1", "ConfigMap", "default", "dep", ownedBy(keeper), Ref{APIVersion: "v1", Kind: "ConfigMap", Name: "gone", UID: "gone"})
	g := New([]Object{keeper, dep})
	want := "ConfigMap/dep dangling-owner: owner ConfigMap/gone (uid gone) (no object has this uid); another owner holds it, so the collector removes that reference\n"
	if got := findingsText(g); got != want {
		t.Errorf("findings:\n%s\nwant:\n%s", got, want)
	}
}

func TestForegroundDeletionIsBlockedByDependentsWithBlockOwnerDeletion(t *testing.T) {
	owner := deleting(obj("v1", "ConfigMap", "default", "owner"), FinalizerForeground)
	held := deleting(obj("v1", "Pod", "default", "held", ownedBy(owner)), "example.com/keep")
	next := obj("v1", "Pod", "default", "next", ownedBy(owner))
	kept := obj("v1", "Pod", "default", "kept", ownedBy(owner), ownedBy(obj("v1", "ConfigMap", "default", "keeper")))
	notBlocking := obj("v1", "Pod", "default", "free", Ref{APIVersion: "v1", Kind: "ConfigMap", Name: "owner", UID: owner.UID})
	g := New([]Object{owner, held, next, kept, notBlocking, obj("v1", "ConfigMap", "default", "keeper")})
	want := "ConfigMap/owner waits-for-dependents: deleted in the foreground since 2026-11-30T13:00:00Z: waits for 3 dependent(s) with blockOwnerDeletion to go\n" +
		"Pod/held blocks-deletion: blocks the foreground deletion of ConfigMap/owner (blockOwnerDeletion); being deleted itself since 2026-11-30T13:00:00Z, held by finalizers example.com/keep\n" +
		"Pod/kept blocks-deletion: blocks the foreground deletion of ConfigMap/owner (blockOwnerDeletion); ConfigMap/keeper still owns it, so the collector removes the blocking reference\n" +
		"Pod/next blocks-deletion: blocks the foreground deletion of ConfigMap/owner (blockOwnerDeletion); the collector deletes it next\n"
	if got := findingsText(g); got != want {
		t.Errorf("findings:\n%s\nwant:\n%s", got, want)
	}

	alone := deleting(obj("v1", "ConfigMap", "default", "alone"), FinalizerForeground, FinalizerOrphan)
	g = New([]Object{alone, obj("v1", "Pod", "default", "p", ownedBy(alone))})
	want = "ConfigMap/alone waits-for-dependents: deleted in the foreground since 2026-11-30T13:00:00Z: waits for 1 dependent(s) with blockOwnerDeletion to go\n" +
		"ConfigMap/alone waits-for-orphaning: deleted with the orphan finalizer since 2026-11-30T13:00:00Z: waits for the collector to remove its reference from 1 dependent(s)\n" +
		"Pod/p blocks-deletion: blocks the foreground deletion of ConfigMap/alone (blockOwnerDeletion); the collector deletes it next\n"
	if got := findingsText(g); got != want {
		t.Errorf("findings:\n%s\nwant:\n%s", got, want)
	}
}

func TestManyDependentsAreAllListedInOrder(t *testing.T) {
	const n = 10_000
	rs := obj("apps/v1", "ReplicaSet", "default", "big")
	objects := []Object{rs}
	for i := n - 1; i >= 0; i-- {
		objects = append(objects, obj("v1", "Pod", "default", fmt.Sprintf("big-%05d", i), ownedBy(rs)))
	}
	g := New(objects)
	rows := Rows(g.Tree(lookup(t, g, rs)))
	if len(rows) != n+1 {
		t.Fatalf("%d rows, want %d", len(rows), n+1)
	}
	for i, r := range rows[1:] {
		if want := fmt.Sprintf("big-%05d", i); g.Object(r.ID).Name != want || r.Depth != 1 {
			t.Fatalf("row %d is %s at depth %d, want %s at depth 1", i+1, g.Object(r.ID).Name, r.Depth, want)
		}
	}
	if rows[n].Indent != "└─ " || rows[1].Indent != "├─ " {
		t.Errorf("indents %q, %q", rows[1].Indent, rows[n].Indent)
	}
}

func TestRowStatesSayWhatTheCollectorSees(t *testing.T) {
	owner := deleting(obj("v1", "ConfigMap", "default", "owner"), FinalizerForeground)
	held := deleting(obj("v1", "Pod", "default", "held", ownedBy(owner)), "example.com/keep")
	cross := obj("v1", "Pod", "other", "cross", ownedBy(owner))
	g := New([]Object{owner, held, cross})
	var got []string
	for _, r := range Rows(g.Tree(lookup(t, g, owner))) {
		got = append(got, g.Object(r.ID).Ident()+": "+g.State(r))
	}
	want := []string{
		"ConfigMap/owner: this object; deleting since 2026-11-30T13:00:00Z (finalizers: foregroundDeletion)",
		"Pod/held: blocks its owner's foreground deletion; deleting since 2026-11-30T13:00:00Z (finalizers: example.com/keep)",
		"Pod/cross: its reference: invalid: the owner is in another namespace (the collector looks in the dependent's); blocks its owner's foreground deletion",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("states:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	missing := obj("v1", "ConfigMap", "default", "m", Ref{APIVersion: "v1", Kind: "ConfigMap", Name: "gone", UID: "gone"})
	g = New([]Object{missing})
	rows := Rows(g.Tree(lookup(t, g, missing)))
	if s := g.State(rows[0]); s != "missing: no object has this uid" {
		t.Errorf("state of a missing owner: %q", s)
	}
}

func TestTheCollectorIgnoresEventsOnly(t *testing.T) {
	for key, want := range map[string]bool{
		"/registry/events/default/web.17a":     true,
		"/registry/events/":                    true,
		"/registry/pods/default/events":        false,
		"/registry/configmaps/events/x":        false,
		"/registry/example.com/events/ns/name": false,
	} {
		if got := Ignored(decode.ParseKey(key)); got != want {
			t.Errorf("Ignored(%s) = %v, want %v", key, got, want)
		}
	}
}

package owners

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Problem is what a finding is about.
type Problem string

// The questions a stuck garbage collection raises, each answered from the
// collector's own rules (garbagecollector.attemptToDeleteItem,
// processDeletingDependentsItem, attemptToOrphanWorker).
const (
	// Orphan: every ownerReference of the object dangles; the collector
	// deletes it. An object without ownerReferences is never one: kubectl
	// delete --cascade=orphan has the collector remove them, on purpose.
	Orphan Problem = "orphan"
	// DanglingOwner: a reference dangles while another owner holds; the
	// collector removes the dangling reference and keeps the object.
	DanglingOwner Problem = "dangling-owner"
	// InvalidOwner: a reference the collector reports and cannot act on
	// (a namespaced owner of a cluster-scoped object).
	InvalidOwner Problem = "invalid-owner"
	// UnknownOwnerKind: a reference to a kind the collector cannot look
	// up; it decides nothing for the object.
	UnknownOwnerKind Problem = "unknown-owner-kind"
	// BlocksDeletion: a dependent with blockOwnerDeletion whose owner
	// waits in foreground deletion for it to go.
	BlocksDeletion Problem = "blocks-deletion"
	// WaitsForDependents: an object deleted in the foreground, held by the
	// foregroundDeletion finalizer until its blocking dependents are gone.
	WaitsForDependents Problem = "waits-for-dependents"
	// WaitsForOrphaning: an object deleted with the orphan finalizer, held
	// until the collector has removed its references from its dependents.
	WaitsForOrphaning Problem = "waits-for-orphaning"
)

// Finding is one object with a problem, and why, in one line.
type Finding struct {
	ID      ID
	Problem Problem
	Why     string
}

// Findings are the graph's problems, by namespace, kind and name.
func (g *Graph) Findings() []Finding {
	var out []Finding
	for i := range g.nodes {
		id := ID(i)
		if g.Virtual(ID(i)) {
			continue
		}
		out = append(out, g.referenceFindings(id)...)
		out = append(out, g.deletionFindings(id)...)
	}
	slices.SortStableFunc(out, func(a, b Finding) int {
		x, y := g.nodes[a.ID], g.nodes[b.ID]
		if x.Namespace != y.Namespace {
			return strings.Compare(x.Namespace, y.Namespace)
		}
		return g.compare(a.ID, b.ID)
	})
	return out
}

// referenceFindings judge id's ownerReferences as attemptToDeleteItem
// does: a reference the collector cannot look up stops it for the whole
// object (classifyReferences returns at the first error); else no solid
// owner means deletion, and a dangling one beside a solid one is removed.
func (g *Graph) referenceFindings(id ID) []Finding {
	links := g.Owners(id)
	if len(links) == 0 {
		return nil
	}
	var out []Finding
	var dangling []Link
	stuck := false
	for _, l := range links {
		switch {
		case l.State == NamespacedOwnerOfClusterScoped:
			out = append(out, Finding{id, InvalidOwner, fmt.Sprintf("owner %s: %s; the collector reports it and never collects this object for it", refName(l), l.State)})
			stuck = true
		case l.State == UnknownKind:
			out = append(out, Finding{id, UnknownOwnerKind, fmt.Sprintf("owner %s: %s, so it decides nothing for this object", refName(l), l.State)})
			stuck = true
		case l.State.Dangling():
			dangling = append(dangling, l)
		}
	}
	if len(dangling) == 0 || stuck {
		return out
	}
	gone := make([]string, len(dangling))
	for i, l := range dangling {
		gone[i] = fmt.Sprintf("%s (%s)", refName(l), l.State)
	}
	o := g.nodes[id]
	switch {
	case len(dangling) < len(links):
		out = append(out, Finding{id, DanglingOwner, fmt.Sprintf("owner %s; another owner holds it, so the collector removes that reference", strings.Join(gone, ", "))})
	case o.Deleting():
		out = append(out, Finding{id, Orphan, fmt.Sprintf("owner %s; already being deleted since %s, held by %s", strings.Join(gone, ", "), stamp(o.Deleted), finalizerList(o))})
	default:
		out = append(out, Finding{id, Orphan, fmt.Sprintf("owner %s; the garbage collector deletes it", strings.Join(gone, ", "))})
	}
	return out
}

// deletionFindings are id's part in a deletion that waits on the
// collector: as an owner held by the orphan or foregroundDeletion
// finalizer, and as a dependent blocking an owner's foreground deletion.
func (g *Graph) deletionFindings(id ID) []Finding {
	o := g.nodes[id]
	var out []Finding
	if o.Deleting() && o.HasFinalizer(FinalizerForeground) {
		n := len(g.blocking(id))
		why := fmt.Sprintf("deleted in the foreground since %s: waits for %d dependent(s) with blockOwnerDeletion to go", stamp(o.Deleted), n)
		if n == 0 {
			why = fmt.Sprintf("deleted in the foreground since %s, no blocking dependent left: the collector removes the %s finalizer next", stamp(o.Deleted), FinalizerForeground)
		}
		out = append(out, Finding{id, WaitsForDependents, why})
	}
	if o.Deleting() && o.HasFinalizer(FinalizerOrphan) {
		out = append(out, Finding{id, WaitsForOrphaning, fmt.Sprintf("deleted with the %s finalizer since %s: waits for the collector to remove its reference from %d dependent(s)",
			FinalizerOrphan, stamp(o.Deleted), len(g.dependents[id]))})
	}
	for _, l := range g.Owners(id) {
		owner := g.nodes[l.Owner]
		if !l.Ref.BlockOwnerDeletion || !owner.Deleting() || !owner.HasFinalizer(FinalizerForeground) {
			continue
		}
		out = append(out, Finding{id, BlocksDeletion, fmt.Sprintf("blocks the foreground deletion of %s (blockOwnerDeletion); %s", owner.Ident(), g.fateOf(id))})
	}
	return out
}

// blocking are the dependents that hold id's foreground deletion: every
// reference to it with blockOwnerDeletion (node.blockingDependents).
func (g *Graph) blocking(id ID) []Link {
	var out []Link
	for _, l := range g.Dependents(id) {
		if l.Ref.BlockOwnerDeletion {
			out = append(out, l)
		}
	}
	return out
}

// fateOf says what becomes of a dependent whose owner waits in foreground
// deletion: held by finalizers of its own, kept by another owner (the
// collector drops the waiting reference), or deleted.
func (g *Graph) fateOf(id ID) string {
	o := g.nodes[id]
	if o.Deleting() {
		return fmt.Sprintf("being deleted itself since %s, held by %s", stamp(o.Deleted), finalizerList(o))
	}
	for _, l := range g.Owners(id) {
		owner := g.nodes[l.Owner]
		if l.State == Solid && !(owner.Deleting() && owner.HasFinalizer(FinalizerForeground)) {
			return fmt.Sprintf("%s still owns it, so the collector removes the blocking reference", owner.Ident())
		}
	}
	return "the collector deletes it next"
}

// refName names the owner a reference names, with its uid.
func refName(l Link) string {
	return fmt.Sprintf("%s/%s (uid %s)", l.Ref.Kind, l.Ref.Name, l.Ref.UID)
}

func finalizerList(o Object) string {
	if len(o.Finalizers) == 0 {
		return "no finalizer"
	}
	return "finalizers " + strings.Join(o.Finalizers, ", ")
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

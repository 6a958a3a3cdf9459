package restore

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/etcdview"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Namespace restores what a user wrote in namespace ns as of rev (0, the
// newest): the Namespace, then each object its selector matches, as
// Object restores one, in an order kubectl applies (sortForApply), as a v1
// List. It leaves out, each in LeftOut with why, what the cluster makes
// again: objects whose controller is among the namespace's objects (the
// Pods of a ReplicaSet, the ReplicaSets of a Deployment, the Jobs of a
// CronJob), the claims of a StatefulSet's volumeClaimTemplates, and the
// kinds madeByKind names; and Secrets unless shown. A custom resource's
// CRD, cluster-scoped, is put in only when it is gone at the newest
// revision: without it kubectl cannot apply the resource, and with it an
// existing definition would be rolled back. A compacted rev fails with a
// *etcdview.CompactedError.
func Namespace(ctx context.Context, src etcdview.Source, ns string, rev int64, opts Options) (*Manifest, error) {
	r, err := newReader(src, opts)
	if err != nil {
		return nil, err
	}
	// Reading the CRDs pins the revision every other read is made at.
	if rev, err = r.readCustom(ctx, rev); err != nil {
		return nil, err
	}
	nsRes, _ := decode.LookupResource("namespaces")
	nsKey := nsRes.KeyPrefix(r.prefix, "") + ns
	kv, err := src.Get(ctx, nsKey, rev)
	if errors.Is(err, etcdview.ErrNotFound) {
		return nil, r.noNamespace(ctx, ns, nsKey, rev)
	}
	if err != nil {
		return nil, err
	}
	n := &namespaceRead{r: r, rev: rev, m: &Manifest{Revision: rev}, uids: map[string]bool{},
		sets: claimTemplates{}, services: selected{}, owners: &owners{r: r, exists: map[string]bool{}}}
	if err := n.namespace(ctx, *kv); err != nil {
		return nil, err
	}
	for _, prefix := range r.namespacedPrefixes(ns) {
		err := etcdview.Pages(src, prefix, rev, etcdview.Paging{Values: true})(ctx, func(p etcdview.Page) error {
			for _, kv := range p.Keys {
				if err := n.add(ctx, kv); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	if err := n.settle(ctx); err != nil {
		return nil, err
	}
	sortForApply(n.kept)
	return n.m, n.m.fill(n.kept, true)
}

// noNamespace is the error for namespace ns absent at rev; when it was
// deleted, with the revision to restore it from: the one before its
// deletion began (the first version with a deletionTimestamp), for the
// namespace controller deletes every object in it before the Namespace.
func (r *reader) noNamespace(ctx context.Context, ns, key string, rev int64) error {
	h, err := r.src.History(ctx, key, etcdview.HistoryOptions{})
	if err != nil {
		return fmt.Errorf("namespace %s does not exist at revision %d", ns, rev)
	}
	for i, e := range h.Entries {
		if !e.Deleted || e.KV.ModRevision > rev {
			continue
		}
		began := e.KV.ModRevision
		for _, v := range h.Entries[i+1:] {
			m, err := meta.Accessor(r.dec.Decode(v.KV.Key, v.KV.Value).Object)
			if v.Deleted || err != nil || m.GetDeletionTimestamp() == nil {
				break
			}
			began = v.KV.ModRevision
		}
		return fmt.Errorf("namespace %s does not exist at revision %d: its deletion began at revision %d; restore it with --rev %d",
			ns, rev, began, began-1)
	}
	return fmt.Errorf("namespace %s does not exist at revision %d", ns, rev)
}

// namespacedPrefixes are the key prefixes of ns's objects, one per
// namespaced resource, built-in and custom, each once: resources of two
// groups can share one (events and events.k8s.io's Events).
func (r *reader) namespacedPrefixes(ns string) []string {
	var out []string
	for _, res := range decode.Resources() {
		if res.Namespaced && !res.Singleton {
			out = append(out, res.KeyPrefix(r.prefix, ns))
		}
	}
	for _, res := range r.custom {
		if res.Namespaced {
			out = append(out, res.KeyPrefix(r.prefix, ns))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// namespaceRead is a namespace restore under way.
type namespaceRead struct {
	r      *reader
	rev    int64
	m      *Manifest
	kept   []entry
	uids   map[string]bool // of every object read
	sets   claimTemplates  // of the StatefulSets read
	owners *owners
	// controlled are the objects with a controller, left out once the
	// controller is found among uids; their content is read again if not.
	controlled []controlled
	claims     []item // decided once every StatefulSet is read
	services   selected
	endpoints  []item // decided once every Service is read
	crds       map[string]bool
}

type controlled struct {
	key  string
	kind string
	ref  metav1.OwnerReference
}

// namespace puts the Namespace itself first: always without a selector;
// with one, only when it is gone at the newest revision, as the objects
// cannot be applied without it.
func (n *namespaceRead) namespace(ctx context.Context, kv etcdview.KV) error {
	it, why := n.r.read(ctx, kv)
	if why != "" {
		return fmt.Errorf("namespace at %s: %s", decode.EscapeKey(kv.Key), why)
	}
	if !n.r.sel.Empty() {
		if there, err := n.r.exists(ctx, kv.Key, ""); there || err != nil {
			return err
		}
	}
	return n.keep(ctx, it)
}

// add judges one object of the namespace.
func (n *namespaceRead) add(ctx context.Context, kv etcdview.KV) error {
	it, why := n.r.read(ctx, kv)
	k := n.r.dec.Keys.Parse(kv.Key)
	if why != "" {
		n.m.LeftOut = append(n.m.LeftOut, leftOut(k, it, why))
		return nil
	}
	n.uids[it.uid] = true
	u := it.u()
	n.sets.add(u)
	n.services.add(u)
	if !n.r.sel.Matches(labels.Set(u.GetLabels())) {
		return nil
	}
	if why := madeByKind(u); why != "" {
		n.m.LeftOut = append(n.m.LeftOut, leftOut(k, it, why))
		return nil
	}
	if u.GroupVersionKind().GroupKind().String() == "Endpoints" {
		n.endpoints = append(n.endpoints, it)
		return nil
	}
	if ref := metav1.GetControllerOf(u); ref != nil {
		n.controlled = append(n.controlled, controlled{key: kv.Key, kind: u.GetKind(), ref: *ref})
		return nil
	}
	return n.judged(ctx, it)
}

// judged keeps it, an object no controller of the namespace makes, unless
// it is a Secret not shown or a StatefulSet's claim.
func (n *namespaceRead) judged(ctx context.Context, it item) error {
	if why := secretLeftOut(it, n.r.opts); why != "" {
		n.m.LeftOut = append(n.m.LeftOut, leftOut(n.r.dec.Keys.Parse(it.key), it, why))
		return nil
	}
	if it.u().GroupVersionKind().GroupKind().String() == "PersistentVolumeClaim" {
		n.claims = append(n.claims, it)
		return nil
	}
	return n.keep(ctx, it)
}

func (n *namespaceRead) keep(ctx context.Context, it item) error {
	e, err := n.r.finish(ctx, it, n.owners)
	if err != nil {
		return err
	}
	n.kept = append(n.kept, e)
	return nil
}

// settle decides what waited on the whole namespace: objects whose
// controller was not among its objects are read again and kept, claims
// the StatefulSets make are left out, and the CRDs gone are put in.
func (n *namespaceRead) settle(ctx context.Context) error {
	for _, c := range n.controlled {
		if n.uids[string(c.ref.UID)] {
			n.m.LeftOut = append(n.m.LeftOut, LeftOut{Key: c.key, Kind: c.kind,
				Namespace: n.r.dec.Keys.Parse(c.key).Namespace, Name: n.r.dec.Keys.Parse(c.key).Name,
				Why: madeByController(c.kind, &c.ref)})
			continue
		}
		kv, err := n.r.src.Get(ctx, c.key, n.rev)
		if err != nil {
			return err
		}
		it, why := n.r.read(ctx, *kv)
		if why != "" {
			n.m.LeftOut = append(n.m.LeftOut, leftOut(n.r.dec.Keys.Parse(c.key), it, why))
			continue
		}
		if err := n.judged(ctx, it); err != nil {
			return err
		}
	}
	for _, it := range n.endpoints {
		if n.services[it.u().GetName()] {
			n.m.LeftOut = append(n.m.LeftOut, leftOut(n.r.dec.Keys.Parse(it.key), it, "Endpoints of a Service with a selector: the endpoints controller makes them again"))
		} else if err := n.keep(ctx, it); err != nil {
			return err
		}
	}
	for _, it := range n.claims {
		if why := n.sets.madeByStatefulSet(it.u()); why != "" {
			n.m.LeftOut = append(n.m.LeftOut, leftOut(n.r.dec.Keys.Parse(it.key), it, why))
		} else if err := n.keep(ctx, it); err != nil {
			return err
		}
	}
	return n.goneCRDs(ctx)
}

// goneCRDs puts in the CRD of each custom resource kept when the CRD is
// gone at the newest revision.
func (n *namespaceRead) goneCRDs(ctx context.Context) error {
	crdRes, _ := decode.LookupResource("customresourcedefinitions.apiextensions.k8s.io")
	seen := map[string]bool{}
	for _, e := range n.kept {
		name := n.r.crdOf(e.Key)
		if name == "" || seen[name] {
			continue
		}
		seen[name] = true
		key := crdRes.KeyPrefix(n.r.prefix, "") + name
		if there, err := n.r.exists(ctx, key, ""); there || err != nil {
			if err != nil {
				return err
			}
			continue
		}
		kv, err := n.r.src.Get(ctx, key, n.rev)
		if err != nil {
			return err
		}
		it, why := n.r.read(ctx, *kv)
		if why != "" {
			return fmt.Errorf("the CustomResourceDefinition %s: %s", name, why)
		}
		if err := n.keep(ctx, it); err != nil {
			return err
		}
		n.kept[len(n.kept)-1].Note = "the definition of the " + e.Kind + " objects restored, gone since: kubectl cannot apply them without it"
	}
	return nil
}

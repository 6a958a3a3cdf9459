package restore

import (
	"context"

	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/decode/table"
	"github.com/etcdscope/etcdscope/etcdview"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Object restores the object at key as it was at rev (0, the newest): as
// the API server served it then, what the server sets removed (strip),
// and its ownerReferences to owners gone at the newest revision dropped.
// A key absent at rev is restored as it last was before its newest
// deletion at or before rev. The manifest holds the object alone, or
// nothing and a LeftOut that says why (a Secret without ShowSecrets). A
// compacted rev fails with a *etcdview.CompactedError, whose Compacted is
// the oldest revision that can be restored.
func Object(ctx context.Context, src etcdview.Source, key string, rev int64, opts Options) (*Manifest, error) {
	r, err := newReader(src, opts)
	if err != nil {
		return nil, err
	}
	kv, at, err := r.version(ctx, key, rev)
	if err != nil {
		return nil, err
	}
	if _, err := r.readCustom(ctx, at); err != nil {
		return nil, err
	}
	m := &Manifest{Revision: at}
	if at == 0 {
		m.Revision = kv.ModRevision
	}
	it, why := r.read(ctx, kv)
	if why == "" {
		why = secretLeftOut(it, opts)
	}
	if why != "" {
		m.LeftOut = append(m.LeftOut, leftOut(r.dec.Keys.Parse(key), it, why))
		return m, nil
	}
	e, err := r.finish(ctx, it, &owners{r: r, exists: map[string]bool{}})
	if err != nil {
		return nil, err
	}
	return m, m.fill([]entry{e}, false)
}

// secretLeftOut says why it, a Secret, stays out of the manifest: Secrets
// are restored only when shown.
func secretLeftOut(it item, opts Options) string {
	if !opts.ShowSecrets && it.u().GroupVersionKind().GroupKind().String() == "Secret" {
		return "a Secret: give --show-secrets to restore it"
	}
	return ""
}

// leftOut names the object it (read from the key k), left out for why.
func leftOut(k decode.Key, it item, why string) LeftOut {
	l := LeftOut{Key: k.Raw, Kind: k.Resource, Namespace: k.Namespace, Name: k.Name, Why: why}
	if it.content != nil {
		u := it.u()
		l.Kind, l.Namespace, l.Name = u.GetKind(), u.GetNamespace(), u.GetName()
	}
	return l
}

// finish makes it, an object to restore, what the manifest holds: what
// the server set stripped, references to owners that are gone dropped,
// and a claim's volume when it is gone.
func (r *reader) finish(ctx context.Context, it item, o *owners) (entry, error) {
	u := it.u()
	dropped := strip(u)
	refs, err := o.prune(ctx, u)
	if err != nil {
		return entry{}, err
	}
	vol, err := r.pruneVolume(ctx, u)
	if err != nil {
		return entry{}, err
	}
	return entry{
		Restored: Restored{
			Key: it.key, Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName(),
			Revision: it.rev, Dropped: append(append(dropped, refs...), vol...),
		},
		u:      u,
		custom: r.crdOf(it.key) != "",
	}, nil
}

// crdOf is the name of the CRD that defines the object at key, "" for a
// built-in one.
func (r *reader) crdOf(key string) string {
	name := table.KubectlName(r.dec.Keys.Parse(key))
	if r.custom[name] == nil {
		return ""
	}
	return name
}

// pruneVolume drops a claim's spec.volumeName when that PersistentVolume
// is gone at the newest revision: the claim would wait for it forever,
// where without it a volume is provisioned for it again.
func (r *reader) pruneVolume(ctx context.Context, u *unstructured.Unstructured) ([]string, error) {
	if u.GroupVersionKind().GroupKind().String() != "PersistentVolumeClaim" {
		return nil, nil
	}
	name, _, _ := unstructured.NestedString(u.Object, "spec", "volumeName")
	if name == "" {
		return nil, nil
	}
	pv, _ := decode.LookupResource("persistentvolumes")
	if ok, err := r.exists(ctx, pv.KeyPrefix(r.prefix, "")+name, ""); ok || err != nil {
		return nil, err
	}
	unstructured.RemoveNestedField(u.Object, "spec", "volumeName")
	return []string{"spec.volumeName " + name + " (gone: a volume is provisioned again)"}, nil
}

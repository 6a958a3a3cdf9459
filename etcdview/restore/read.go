package restore

import (
	"context"
	"errors"
	"fmt"

	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/decode/table"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/etcdview/resource"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
)

// reader reads objects as the API server serves them, as of one revision.
type reader struct {
	src    etcdview.Source
	dec    decode.Decoder
	opts   Options
	sel    labels.Selector
	prefix string // the etcd prefix objects are under, "" for the default
	// custom are the custom resources by the name kubectl resolves them
	// by ("widgets.example.com"), as the CRDs were at the restore's
	// revision; nil until read.
	custom map[string]*table.Resource
}

func newReader(src etcdview.Source, opts Options) (*reader, error) {
	sel, err := labels.Parse(opts.Selector)
	if err != nil {
		return nil, fmt.Errorf("selector %q: %w", opts.Selector, err)
	}
	dec := opts.Decoder
	// Secrets reach the manifest only when shown (see leftOutByKind), and
	// then whole; managedFields are dropped by strip, not folded.
	dec.ShowSecrets, dec.ShowManagedFields, dec.JSONOnly = opts.ShowSecrets, true, true
	r := &reader{src: src, dec: dec, opts: opts, sel: sel}
	if len(dec.Keys.Prefixes) > 0 {
		r.prefix = dec.Keys.Prefixes[0]
	}
	return r, nil
}

// readCustom reads the CRDs at rev, and returns the revision they were
// read at (the newest when rev is 0).
func (r *reader) readCustom(ctx context.Context, rev int64) (int64, error) {
	crds, rev, err := resource.CRDs(ctx, r.src, r.dec, rev)
	if err != nil {
		return rev, err
	}
	r.custom = make(map[string]*table.Resource, len(crds))
	for _, c := range crds {
		r.custom[c.Resource.Resource+"."+c.Group] = c
	}
	return rev, nil
}

// resourceOf is the resource whose objects key k holds.
func (r *reader) resourceOf(ctx context.Context, k decode.Key) (*table.Resource, error) {
	name := table.KubectlName(k)
	if res, err := table.BuiltinResolver(ctx, name, 0); res != nil || err != nil {
		return res, err
	}
	if res := r.custom[name]; res != nil {
		return res, nil
	}
	return nil, fmt.Errorf("no resource is stored at %s", decode.EscapeKey(k.Raw))
}

// item is one object read: its key, its revision, its uid and its
// content as the API server serves it.
type item struct {
	key     string
	rev     int64
	uid     string
	content map[string]any
}

func (it item) u() *unstructured.Unstructured { return &unstructured.Unstructured{Object: it.content} }

// read decodes kv into the object the API server would serve; why says
// why there is none. A Secret comes back whole: the caller leaves it out
// unless Secrets are shown.
func (r *reader) read(ctx context.Context, kv etcdview.KV) (it item, why string) {
	defer func() {
		// The conversions and a CRD's schema code (defaulting, pruning)
		// make no promise about values someone less trusted wrote: one
		// that trips them is left out, said why, not a crash.
		if p := recover(); p != nil {
			it, why = item{}, fmt.Sprintf("cannot be served: the conversion failed on this value: %v", p)
		}
	}()
	o := r.dec.DecodeAt(kv.Key, kv.Value, kv.ModRevision)
	if o.Object == nil {
		if o.Problem == "" {
			return it, "not a Kubernetes object"
		}
		return it, "does not decode: " + o.Problem
	}
	res, err := r.resourceOf(ctx, o.Key)
	if err != nil {
		return it, err.Error()
	}
	stored := o.Object.DeepCopyObject()
	content, err := res.ServedContentOf(r.dec, o, kv.ModRevision)
	if err != nil {
		// A kind its group's preferred version lacks (an alpha one) is
		// served in the version it is stored in.
		if content, err = runtime.DefaultUnstructuredConverter.ToUnstructured(stored); err != nil {
			return it, "cannot be served: " + err.Error()
		}
		content["apiVersion"], content["kind"] = o.GVK.GroupVersion().String(), o.GVK.Kind
	}
	it = item{key: kv.Key, rev: kv.ModRevision, content: content}
	it.uid = string(it.u().GetUID())
	return it, ""
}

// version is the version of key to restore and the revision it was read
// at: the one at rev (0, the newest), or, when key is absent there, the
// last one before its newest deletion at or before rev, read at the
// revision before the deletion.
func (r *reader) version(ctx context.Context, key string, rev int64) (etcdview.KV, int64, error) {
	kv, err := r.src.Get(ctx, key, rev)
	if err == nil {
		return *kv, rev, nil
	}
	if !errors.Is(err, etcdview.ErrNotFound) {
		return etcdview.KV{}, 0, err
	}
	h, err := r.src.History(ctx, key, etcdview.HistoryOptions{})
	if err != nil {
		return etcdview.KV{}, 0, err
	}
	for _, e := range h.Entries {
		if e.Deleted && (rev == 0 || e.KV.ModRevision <= rev) {
			at := e.KV.ModRevision - 1
			kv, err := r.src.Get(ctx, key, at)
			if err != nil {
				return etcdview.KV{}, 0, err
			}
			return *kv, at, nil
		}
	}
	if rev == 0 {
		return etcdview.KV{}, 0, fmt.Errorf("%s: not found, and etcd holds no deletion of it", decode.EscapeKey(key))
	}
	return etcdview.KV{}, 0, fmt.Errorf("%s: not found at revision %d, and etcd holds no deletion of it before", decode.EscapeKey(key), rev)
}

// exists says whether key holds, at the newest revision, an object whose
// uid is uid ("" matches any).
func (r *reader) exists(ctx context.Context, key, uid string) (bool, error) {
	kv, err := r.src.Get(ctx, key, 0)
	switch {
	case errors.Is(err, etcdview.ErrNotFound):
		return false, nil
	case err != nil:
		return false, err
	case uid == "":
		return true, nil
	}
	o := r.dec.Decode(kv.Key, kv.Value)
	m, err := meta.Accessor(o.Object)
	return err == nil && string(m.GetUID()) == uid, nil
}

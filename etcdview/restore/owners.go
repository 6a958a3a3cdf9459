package restore

import (
	"context"
	"fmt"

	"github.com/etcdscope/etcdscope/decode"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// owners judges ownerReferences against the newest revision, once per
// owner.
type owners struct {
	r      *reader
	exists map[string]bool // by uid
}

// prune drops u's ownerReferences to owners that no longer exist, by uid,
// at the newest revision: the garbage collector deletes an object whose
// owners are all gone (and a restored owner has a new uid), so a kept
// reference would delete what was restored. It returns a phrase per
// reference dropped.
func (o *owners) prune(ctx context.Context, u *unstructured.Unstructured) ([]string, error) {
	refs := u.GetOwnerReferences()
	if len(refs) == 0 {
		return nil, nil
	}
	var kept []metav1.OwnerReference
	var dropped []string
	for _, ref := range refs {
		ok, err := o.exist(ctx, ref, u.GetNamespace())
		if err != nil {
			return nil, err
		}
		if ok {
			kept = append(kept, ref)
		} else {
			dropped = append(dropped, fmt.Sprintf("ownerReference to %s %s (gone)", ref.Kind, ref.Name))
		}
	}
	if len(kept) == 0 {
		unstructured.RemoveNestedField(u.Object, "metadata", "ownerReferences")
	} else {
		u.SetOwnerReferences(kept)
	}
	return dropped, nil
}

func (o *owners) exist(ctx context.Context, ref metav1.OwnerReference, ns string) (bool, error) {
	uid := string(ref.UID)
	if known, ok := o.exists[uid]; ok {
		return known, nil
	}
	res, ok := o.r.resourceOfKind(schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind))
	found := false
	if ok && uid != "" {
		if !res.Namespaced {
			ns = ""
		}
		var err error
		if found, err = o.r.exists(ctx, res.KeyPrefix(o.r.prefix, ns)+ref.Name, uid); err != nil {
			return false, err
		}
	}
	o.exists[uid] = found
	return found, nil
}

// resourceOfKind is where objects of kind gvk are stored: a built-in
// resource, or a custom one of the CRDs read.
func (r *reader) resourceOfKind(gvk schema.GroupVersionKind) (decode.Resource, bool) {
	for _, res := range decode.Resources() {
		if res.Group == gvk.Group && res.Kind == gvk.Kind && !res.Singleton {
			return res, true
		}
	}
	for _, res := range r.custom {
		if res.Group == gvk.Group && res.Kind == gvk.Kind {
			return res.Resource, true
		}
	}
	return decode.Resource{}, false
}

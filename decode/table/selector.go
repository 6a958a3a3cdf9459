package table

import (
	"fmt"

	"github.com/etcdscope/etcdscope/decode"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/kubernetes/pkg/registry/apps/replicaset"
	"k8s.io/kubernetes/pkg/registry/batch/job"
	"k8s.io/kubernetes/pkg/registry/certificates/certificates"
	"k8s.io/kubernetes/pkg/registry/coordination/leasecandidate"
	"k8s.io/kubernetes/pkg/registry/core/configmap"
	"k8s.io/kubernetes/pkg/registry/core/event"
	"k8s.io/kubernetes/pkg/registry/core/namespace"
	"k8s.io/kubernetes/pkg/registry/core/node"
	"k8s.io/kubernetes/pkg/registry/core/persistentvolume"
	"k8s.io/kubernetes/pkg/registry/core/persistentvolumeclaim"
	"k8s.io/kubernetes/pkg/registry/core/pod"
	"k8s.io/kubernetes/pkg/registry/core/replicationcontroller"
	"k8s.io/kubernetes/pkg/registry/core/secret"
	"k8s.io/kubernetes/pkg/registry/core/service"
	"k8s.io/kubernetes/pkg/registry/resource/resourceclaim"
	"k8s.io/kubernetes/pkg/registry/resource/resourceclaimtemplate"
	"k8s.io/kubernetes/pkg/registry/resource/resourceslice"
)

// registryAttrs are the AttrFuncs kube-apiserver's registries set
// (generic.StoreOptions.AttrFunc in pkg/registry/*/storage): the labels
// and fields a selector is matched against. Events served by
// events.k8s.io are the core registry's. Every other store uses the
// generic defaults: metadata.name, and metadata.namespace when namespaced.
var registryAttrs = map[schema.GroupResource]storage.AttrFunc{
	{Resource: "configmaps"}:                     configmap.GetAttrs,
	{Resource: "events"}:                         event.GetAttrs,
	{Group: "events.k8s.io", Resource: "events"}: event.GetAttrs,
	{Resource: "namespaces"}:                     namespace.GetAttrs,
	{Resource: "nodes"}:                          node.GetAttrs,
	{Resource: "persistentvolumeclaims"}:         persistentvolumeclaim.GetAttrs,
	{Resource: "persistentvolumes"}:              persistentvolume.GetAttrs,
	{Resource: "pods"}:                           pod.GetAttrs,
	{Resource: "replicationcontrollers"}:         replicationcontroller.GetAttrs,
	{Resource: "secrets"}:                        secret.GetAttrs,
	{Resource: "services"}:                       service.GetAttrs,
	{Group: "apps", Resource: "replicasets"}:     replicaset.GetAttrs,
	{Group: "batch", Resource: "jobs"}:           job.GetAttrs,
	{Group: "certificates.k8s.io", Resource: "certificatesigningrequests"}: certificates.GetAttrs,
	{Group: "coordination.k8s.io", Resource: "leasecandidates"}:            leasecandidate.GetAttrs,
	{Group: "resource.k8s.io", Resource: "resourceclaims"}:                 resourceclaim.GetAttrs,
	{Group: "resource.k8s.io", Resource: "resourceclaimtemplates"}:         resourceclaimtemplate.GetAttrs,
	{Group: "resource.k8s.io", Resource: "resourceslices"}:                 resourceslice.GetAttrs,
}

func attrsFor(res decode.Resource) storage.AttrFunc {
	if f, ok := registryAttrs[schema.GroupResource{Group: res.Group, Resource: res.Resource}]; ok {
		return f
	}
	if res.Namespaced {
		return storage.DefaultNamespaceScopedAttr
	}
	return storage.DefaultClusterScopedAttr
}

// Selector is kubectl's --selector (-l) and --field-selector on one
// resource, matched as kube-apiserver's registry matches them.
type Selector struct {
	r         *Resource
	predicate storage.SelectionPredicate
}

// Selector parses a label and a field selector, either may be "", as
// kube-apiserver does: labels.Parse, fields.ParseSelector with each field
// label converted from the served version (the scheme's field label
// conversion: a label the API does not support is an error).
func (r *Resource) Selector(labelSelector, fieldSelector string) (Selector, error) {
	ls, err := labels.Parse(labelSelector)
	if err != nil {
		return Selector{}, fmt.Errorf("label selector %q: %w", labelSelector, err)
	}
	fs, err := fields.ParseSelector(fieldSelector)
	if err != nil {
		return Selector{}, fmt.Errorf("field selector %q: %w", fieldSelector, err)
	}
	if fs, err = fs.Transform(r.fieldLabel); err != nil {
		return Selector{}, fmt.Errorf("field selector %q on %s: %w", fieldSelector, r.Served.GroupVersion().WithResource(r.Resource.Resource), err)
	}
	return Selector{r: r, predicate: storage.SelectionPredicate{Label: ls, Field: fs, GetAttrs: r.attrs}}, nil
}

// Empty is true when the selector selects every object.
func (s Selector) Empty() bool { return s.predicate.Label == nil || s.predicate.Empty() }

// Matches says whether s selects o. A field the API accepts but that
// etcdscope cannot read from the object (a registry whose AttrFunc is not
// exported) is an error, rather than a field that is always "".
func (s Selector) Matches(o Object) (bool, error) {
	if s.Empty() {
		return true, nil
	}
	if s.predicate.Field.Empty() {
		// Every registry's AttrFunc returns the object's own labels.
		m, err := meta.Accessor(o.obj)
		if err != nil {
			return false, err
		}
		return s.predicate.Label.Matches(labels.Set(m.GetLabels())), nil
	}
	in, err := o.internal()
	if err != nil {
		return false, err
	}
	_, set, err := s.predicate.GetAttrs(in)
	if err != nil {
		return false, err
	}
	for _, req := range s.predicate.Field.Requirements() {
		if !set.Has(req.Field) {
			return false, fmt.Errorf("field selector: etcdscope cannot read %s of %s", req.Field, s.r.Resource.Resource)
		}
	}
	return s.predicate.Matches(in)
}

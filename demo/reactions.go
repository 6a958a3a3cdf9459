package demo

import (
	"strconv"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// Reaction is one watch event a component's informer received: the write
// at Revision reached Component. Since kube-apiserver takes an object's
// resourceVersion from etcd's mod revision (and a deletion's from the
// revision of the delete), Revision matches the write's trace.
type Reaction struct {
	Revision  int64
	Component string
	// Event is ADDED, MODIFIED or DELETED.
	Event string
	// Resource is the informer's resource ("pods", "endpointslices").
	Resource string
	// Detail says what the component made of it, when it says more than
	// that it saw it (kube-proxy's rules, CoreDNS's records).
	Detail string
}

// observe reports every event inf delivers as a reaction of component to
// Options.OnReaction; detail, if not nil, describes what the component made
// of the object.
func (d *Demo) observe(component, resource string, inf cache.SharedInformer, detail func(obj any) string) {
	if d.onReaction == nil {
		return
	}
	report := func(event string, obj any) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		m, err := meta.Accessor(obj)
		if err != nil {
			return
		}
		rev, err := strconv.ParseInt(m.GetResourceVersion(), 10, 64)
		if err != nil {
			return
		}
		r := Reaction{Revision: rev, Component: component, Event: event, Resource: resource}
		if detail != nil {
			r.Detail = detail(obj)
		}
		d.onReaction(r)
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			if !initial {
				report("ADDED", obj)
			}
		},
		UpdateFunc: func(old, obj any) {
			if o, n := old.(metav1.Object), obj.(metav1.Object); o.GetResourceVersion() != n.GetResourceVersion() { // not a resync
				report("MODIFIED", obj)
			}
		},
		DeleteFunc: func(obj any) { report("DELETED", obj) },
	})
}

package restore

import (
	"fmt"
	"regexp"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// madeByKind says why an object of u's kind or name is one the cluster
// makes itself and a namespace restore leaves out; "" when it is not.
func madeByKind(u *unstructured.Unstructured) string {
	gvk := u.GroupVersionKind()
	switch gk := gvk.GroupKind().String(); {
	case gk == "Event" || gk == "Event.events.k8s.io":
		return "an Event: the cluster's report, not a user's object"
	case gk == "EndpointSlice.discovery.k8s.io":
		return "an EndpointSlice: the endpointslice controller makes it from the Service"
	case gk == "Lease.coordination.k8s.io":
		return "a Lease: its holder takes it again"
	case gk == "ControllerRevision.apps":
		return "a ControllerRevision: its StatefulSet or DaemonSet makes it again"
	case gk == "ConfigMap" && u.GetName() == "kube-root-ca.crt":
		return "the namespace's root CA ConfigMap: the root-ca-cert-publisher makes it again"
	case gk == "ServiceAccount" && u.GetName() == "default":
		return "the namespace's default ServiceAccount: the serviceaccount controller makes it again"
	case gk == "Secret":
		if t, _, _ := unstructured.NestedString(u.Object, "type"); t == "kubernetes.io/service-account-token" {
			return "a service-account token: the token controller makes it again"
		}
	}
	return ""
}

// madeByController says why an object whose controller is ref, one of
// the objects restored, is made again by it.
func madeByController(kind string, ref *metav1.OwnerReference) string {
	return fmt.Sprintf("a %s of %s %s: it makes it again", kind, ref.Kind, ref.Name)
}

// claimTemplates are, by StatefulSet name, the names of its
// volumeClaimTemplates.
type claimTemplates map[string][]string

func (c claimTemplates) add(u *unstructured.Unstructured) {
	if u.GroupVersionKind().GroupKind().String() != "StatefulSet.apps" {
		return
	}
	templates, _, _ := unstructured.NestedSlice(u.Object, "spec", "volumeClaimTemplates")
	for _, t := range templates {
		if m, ok := t.(map[string]any); ok {
			if name, _, _ := unstructured.NestedString(m, "metadata", "name"); name != "" {
				c[u.GetName()] = append(c[u.GetName()], name)
			}
		}
	}
}

var ordinal = regexp.MustCompile(`^-[0-9]+$`)

// madeByStatefulSet says why u, a claim named as a StatefulSet names the
// claims of its volumeClaimTemplates (<template>-<set>-<ordinal>,
// StatefulSet controller getPersistentVolumeClaimName), is left out: the
// StatefulSet makes it again for each replica.
func (c claimTemplates) madeByStatefulSet(u *unstructured.Unstructured) string {
	if u.GroupVersionKind().GroupKind().String() != "PersistentVolumeClaim" {
		return ""
	}
	for set, templates := range c {
		for _, t := range templates {
			rest, ok := strings.CutPrefix(u.GetName(), t+"-"+set)
			if ok && ordinal.MatchString(rest) {
				return fmt.Sprintf("a PersistentVolumeClaim of StatefulSet %s (volumeClaimTemplate %s): it makes it again", set, t)
			}
		}
	}
	return ""
}

// selected are the names of the Services with a selector: the endpoints
// controller writes their Endpoints. A Service without one has the
// Endpoints its user wrote.
type selected map[string]bool

func (s selected) add(u *unstructured.Unstructured) {
	if u.GroupVersionKind().GroupKind().String() != "Service" {
		return
	}
	if sel, _, _ := unstructured.NestedMap(u.Object, "spec", "selector"); len(sel) > 0 {
		s[u.GetName()] = true
	}
}

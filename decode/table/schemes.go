package table

import (
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kubernetes/pkg/api/legacyscheme"

	apiextensionsinstall "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/install"
	apiregistrationinstall "k8s.io/kube-aggregator/pkg/apis/apiregistration/install"

	// The API groups kube-apiserver installs into legacyscheme
	// (pkg/controlplane/import_known_versions.go): their internal types,
	// conversions, defaults and field label conversions.
	_ "k8s.io/kubernetes/pkg/apis/admissionregistration/install"
	_ "k8s.io/kubernetes/pkg/apis/apiserverinternal/install"
	_ "k8s.io/kubernetes/pkg/apis/apps/install"
	_ "k8s.io/kubernetes/pkg/apis/autoscaling/install"
	_ "k8s.io/kubernetes/pkg/apis/batch/install"
	_ "k8s.io/kubernetes/pkg/apis/certificates/install"
	_ "k8s.io/kubernetes/pkg/apis/coordination/install"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	_ "k8s.io/kubernetes/pkg/apis/discovery/install"
	_ "k8s.io/kubernetes/pkg/apis/events/install"
	_ "k8s.io/kubernetes/pkg/apis/flowcontrol/install"
	_ "k8s.io/kubernetes/pkg/apis/lifecycle/install"
	_ "k8s.io/kubernetes/pkg/apis/networking/install"
	_ "k8s.io/kubernetes/pkg/apis/node/install"
	_ "k8s.io/kubernetes/pkg/apis/policy/install"
	_ "k8s.io/kubernetes/pkg/apis/rbac/install"
	_ "k8s.io/kubernetes/pkg/apis/resource/install"
	_ "k8s.io/kubernetes/pkg/apis/scheduling/install"
	_ "k8s.io/kubernetes/pkg/apis/storage/install"
	_ "k8s.io/kubernetes/pkg/apis/storagemigration/install"
)

// The two servers kube-apiserver chains with its own keep their types in
// schemes of their own (apiextensions-apiserver's and kube-aggregator's
// apiserver.Scheme); these hold the same installs, without linking the
// servers.
var (
	apiextensionsScheme = sync.OnceValue(func() *runtime.Scheme {
		s := runtime.NewScheme()
		apiextensionsinstall.Install(s)
		return s
	})
	apiregistrationScheme = sync.OnceValue(func() *runtime.Scheme {
		s := runtime.NewScheme()
		apiregistrationinstall.Install(s)
		return s
	})
)

// schemeFor is the scheme that holds group's internal types.
func schemeFor(group string) *runtime.Scheme {
	switch group {
	case "apiextensions.k8s.io":
		return apiextensionsScheme()
	case "apiregistration.k8s.io":
		return apiregistrationScheme()
	}
	return legacyscheme.Scheme
}

// servedVersion is the version of group kube-apiserver names preferred in
// discovery, which kubectl asks for: the first of the scheme's priorities.
func servedVersion(s *runtime.Scheme, group string) (schema.GroupVersion, bool) {
	versions := s.PrioritizedVersionsForGroup(group)
	if len(versions) == 0 {
		return schema.GroupVersion{}, false
	}
	return versions[0], true
}

// toTyped is obj as the scheme's Go type: a value stored as JSON (a CRD,
// an APIService) decodes to unstructured content.
func toTyped(s *runtime.Scheme, obj runtime.Object) (runtime.Object, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	gvk := u.GroupVersionKind()
	typed, err := s.New(gvk)
	if err != nil {
		return nil, err
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, typed); err != nil {
		return nil, fmt.Errorf("%s: %w", gvk.Kind, err)
	}
	typed.GetObjectKind().SetGroupVersionKind(gvk)
	return typed, nil
}

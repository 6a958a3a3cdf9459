package decode

import (
	"reflect"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
)

// Resource is one kind of object kube-apiserver keeps in etcd.
type Resource struct {
	Group    string // API group, "" for core
	Resource string // plural as the API serves it: "services"
	Kind     string // "Service"
	// StoragePrefix is the key segment(s) under the etcd prefix: "services/specs".
	StoragePrefix string
	Namespaced    bool
	ShortNames    []string // as kubectl accepts them: "svc"
	// Singleton resources are one object stored at the storage prefix itself
	// (the service IP and node port allocation bitmaps).
	Singleton bool
	Note      string // what is special about it, in plain words
}

func (r Resource) known() bool { return r.Kind != "" }

// KeyPrefix is the etcd key prefix listing this resource, in one namespace
// when namespace is not "", always ending in "/" so "pods" does not also
// match "podtemplates". prefix "" means DefaultPrefix.
func (r Resource) KeyPrefix(prefix, namespace string) string {
	if prefix == "" {
		prefix = DefaultPrefix
	}
	p := strings.TrimSuffix(prefix, "/") + "/" + r.StoragePrefix
	if r.Singleton {
		return p
	}
	if r.Namespaced && namespace != "" {
		p += "/" + namespace
	}
	return p + "/"
}

// specialStoragePrefixes is kube-apiserver's SpecialDefaultResourcePrefixes
// (k8s.io/kubernetes/pkg/kubeapiserver/default_storage_factory_builder.go):
// every other built-in resource is stored under its lower-cased plural.
// podsecuritypolicy is the entry older releases had, kept so their data reads.
var specialStoragePrefixes = map[string]string{
	"/replicationcontrollers":        "controllers",
	"/endpoints":                     "services/endpoints",
	"/nodes":                         "minions",
	"/services":                      "services/specs",
	"networking.k8s.io/ingresses":    "ingress",
	"extensions/ingresses":           "ingress",
	"policy/podsecuritypolicies":     "podsecuritypolicy",
	"extensions/podsecuritypolicies": "podsecuritypolicy",
	"apiextensions.k8s.io/customresourcedefinitions": "apiextensions.k8s.io/customresourcedefinitions",
	"apiregistration.k8s.io/apiservices":             "apiregistration.k8s.io/apiservices",
}

// storageGroups names, for a plural served by several groups, the group whose
// storage they share: kube-apiserver's AddCohabitatingResources calls list the
// storage group first, and the others read and write the same keys.
var storageGroups = map[string]string{
	"networkpolicies":        "networking.k8s.io",
	"deployments":            "apps",
	"daemonsets":             "apps",
	"replicasets":            "apps",
	"events":                 "",
	"replicationcontrollers": "",
	"podsecuritypolicies":    "policy",
	"ingresses":              "networking.k8s.io",
}

// shortNames are the ShortNames() of kube-apiserver's REST storages
// (pkg/registry/*/storage): discovery serves them, client-go cannot know them.
var shortNames = map[string][]string{
	"/componentstatuses":      {"cs"},
	"/configmaps":             {"cm"},
	"/endpoints":              {"ep"},
	"/events":                 {"ev"},
	"/limitranges":            {"limits"},
	"/namespaces":             {"ns"},
	"/nodes":                  {"no"},
	"/persistentvolumeclaims": {"pvc"},
	"/persistentvolumes":      {"pv"},
	"/pods":                   {"po"},
	"/replicationcontrollers": {"rc"},
	"/resourcequotas":         {"quota"},
	"/serviceaccounts":        {"sa"},
	"/services":               {"svc"},
	"apiextensions.k8s.io/customresourcedefinitions": {"crd", "crds"},
	"apps/daemonsets":                                {"ds"},
	"apps/deployments":                               {"deploy"},
	"apps/replicasets":                               {"rs"},
	"apps/statefulsets":                              {"sts"},
	"autoscaling/horizontalpodautoscalers":           {"hpa"},
	"batch/cronjobs":                                 {"cj"},
	"certificates.k8s.io/certificatesigningrequests": {"csr"},
	"networking.k8s.io/ingresses":                    {"ing"},
	"networking.k8s.io/networkpolicies":              {"netpol"},
	"policy/poddisruptionbudgets":                    {"pdb"},
	"policy/podsecuritypolicies":                     {"psp"},
	"scheduling.k8s.io/priorityclasses":              {"pc"},
	"storage.k8s.io/storageclasses":                  {"sc"},
}

// storageOnly are objects kube-apiserver keeps in etcd that no API resource
// serves, or that are served by servers client-go has no typed client for.
var storageOnly = []Resource{
	{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions", Kind: "CustomResourceDefinition"},
	{Group: "apiregistration.k8s.io", Resource: "apiservices", Kind: "APIService"},
	// pkg/controlplane/reconcilers: each API server's IP, an Endpoints with a TTL lease.
	{Resource: "masterleases", Kind: "Endpoints", StoragePrefix: "masterleases",
		Note: "API server IP lease (Endpoints with an etcd lease), key is the server's IP"},
	{Resource: "peerserverleases", Kind: "Endpoints", StoragePrefix: "peerserverleases",
		Note: "API server peer-proxy address lease, key is the server's ID"},
	// pkg/registry/core/service/allocator/storage.NewEtcd: the allocation bitmaps,
	// one RangeAllocation each, encrypted under these resource names.
	{Resource: "serviceipallocations", Kind: "RangeAllocation", StoragePrefix: "ranges/serviceips", Singleton: true,
		Note: "service ClusterIP allocation bitmap"},
	{Resource: "serviceipallocations", Kind: "RangeAllocation", StoragePrefix: "ranges/secondaryserviceips", Singleton: true,
		Note: "secondary-family service ClusterIP allocation bitmap"},
	{Resource: "servicenodeportallocations", Kind: "RangeAllocation", StoragePrefix: "ranges/servicenodeports", Singleton: true,
		Note: "service NodePort allocation bitmap"},
}

type resourceTable struct {
	all      []Resource
	byPrefix map[string]Resource // storage prefix → resource
	byName   map[string]Resource // lower-cased plural, singular, short name, "plural.group" → resource
}

var resources = sync.OnceValue(buildResources)

// Resources lists every resource kube-apiserver stores that this build knows,
// derived from client-go's typed clients (plural, kind, scope) plus the
// storage facts above.
func Resources() []Resource { return slices.Clone(resources().all) }

// LookupResource finds a resource the way kubectl resolves a name on its
// command line: plural, singular, kind, short name, optionally ".group".
func LookupResource(name string) (Resource, bool) {
	r, ok := resources().byName[strings.ToLower(name)]
	return r, ok
}

// storageResourceFor matches the leading key segments after the prefix to a
// resource and says how many segments it used.
func storageResourceFor(segs []string) (Resource, int) {
	t := resources()
	if len(segs) >= 2 {
		if r, ok := t.byPrefix[segs[0]+"/"+segs[1]]; ok {
			return r, 2
		}
		// Custom resources and servers built on SimpleStorageFactory store
		// under <group>/<plural>; API groups of those always contain a dot,
		// built-in storage prefixes never do.
		if strings.Contains(segs[0], ".") {
			return Resource{Group: segs[0], Resource: segs[1], StoragePrefix: segs[0] + "/" + segs[1]}, 2
		}
	}
	if r, ok := t.byPrefix[segs[0]]; ok {
		return r, 1
	}
	return Resource{}, 1
}

func buildResources() resourceTable {
	t := resourceTable{byPrefix: map[string]Resource{}, byName: map[string]Resource{}}
	seen := map[string]bool{}
	add := func(r Resource) {
		gr := r.Group + "/" + r.Resource
		if r.StoragePrefix == "" {
			r.StoragePrefix = r.Resource
			if p, ok := specialStoragePrefixes[gr]; ok {
				r.StoragePrefix = p
			}
		}
		if r.ShortNames == nil {
			r.ShortNames = shortNames[gr]
		}
		if seen[r.StoragePrefix+" "+gr] {
			return
		}
		seen[r.StoragePrefix+" "+gr] = true
		t.all = append(t.all, r)
		if g, shared := storageGroups[r.Resource]; !shared || g == r.Group {
			t.byPrefix[r.StoragePrefix] = r
		}
	}
	for _, r := range typedClientResources() {
		add(r)
	}
	for _, r := range storageOnly {
		add(r)
	}
	// Names resolve to the storage group first, then core, then the rest in
	// table order, as kubectl prefers the core group on a bare plural.
	slices.SortStableFunc(t.all, func(a, b Resource) int {
		return rank(a) - rank(b)
	})
	for _, r := range t.all {
		names := append([]string{r.Resource, strings.ToLower(r.Kind), r.Resource + "." + r.Group, strings.ToLower(r.Kind) + "." + r.Group}, r.ShortNames...)
		for _, n := range names {
			if _, taken := t.byName[n]; !taken && n != "" && !strings.HasSuffix(n, ".") {
				t.byName[n] = r
			}
		}
	}
	return t
}

func rank(r Resource) int {
	if g, shared := storageGroups[r.Resource]; shared && g == r.Group {
		return 0
	}
	if r.Group == "" {
		return 1
	}
	return 2
}

// typedClientResources reads client-go's typed clientset: every
// <Group><Version>() accessor returns an interface of <Plural>(namespace?)
// getters, and each getter's Get returns the object type. That gives the
// plural, the kind, and the scope (a namespace argument) of every built-in
// resource without a discovery call.
func typedClientResources() []Resource {
	var out []Resource
	ctx := reflect.TypeFor[kubernetes.Interface]()
	for i := range ctx.NumMethod() {
		gv := ctx.Method(i).Type
		if gv.NumIn() != 0 || gv.NumOut() != 1 || gv.Out(0).Kind() != reflect.Interface {
			continue
		}
		groupClient := gv.Out(0)
		for j := range groupClient.NumMethod() {
			getter := groupClient.Method(j)
			if r, ok := resourceFromGetter(getter); ok {
				out = append(out, r)
			}
		}
	}
	return out
}

func resourceFromGetter(getter reflect.Method) (Resource, bool) {
	ft := getter.Type
	if ft.NumOut() != 1 || ft.Out(0).Kind() != reflect.Interface || ft.NumIn() > 1 {
		return Resource{}, false
	}
	client := ft.Out(0)
	get, hasGet := client.MethodByName("Get")
	_, hasList := client.MethodByName("List")
	if !hasGet || !hasList || get.Type.NumOut() != 2 || get.Type.Out(0).Kind() != reflect.Pointer {
		return Resource{}, false
	}
	obj, ok := reflect.New(get.Type.Out(0).Elem()).Interface().(runtime.Object)
	if !ok {
		return Resource{}, false
	}
	gvks, _, err := scheme.Scheme.ObjectKinds(obj)
	if err != nil || len(gvks) == 0 {
		return Resource{}, false
	}
	return Resource{
		Group:      gvks[0].Group,
		Resource:   strings.ToLower(getter.Name),
		Kind:       gvks[0].Kind,
		Namespaced: ft.NumIn() == 1,
	}, true
}

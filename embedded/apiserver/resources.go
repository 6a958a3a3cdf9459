package apiserver

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"
	serverstorage "k8s.io/apiserver/pkg/server/storage"
	utilproxy "k8s.io/apiserver/pkg/util/proxy"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	restclient "k8s.io/client-go/rest"
	api "k8s.io/kubernetes/pkg/apis/core"
	kubeletclient "k8s.io/kubernetes/pkg/kubelet/client"
	appsrest "k8s.io/kubernetes/pkg/registry/apps/rest"
	batchrest "k8s.io/kubernetes/pkg/registry/batch/rest"
	coordinationrest "k8s.io/kubernetes/pkg/registry/coordination/rest"
	endpointsstore "k8s.io/kubernetes/pkg/registry/core/endpoint/storage"
	limitrangestore "k8s.io/kubernetes/pkg/registry/core/limitrange/storage"
	nodestore "k8s.io/kubernetes/pkg/registry/core/node/storage"
	pvstore "k8s.io/kubernetes/pkg/registry/core/persistentvolume/storage"
	pvcstore "k8s.io/kubernetes/pkg/registry/core/persistentvolumeclaim/storage"
	podstore "k8s.io/kubernetes/pkg/registry/core/pod/storage"
	podtemplatestore "k8s.io/kubernetes/pkg/registry/core/podtemplate/storage"
	controllerstore "k8s.io/kubernetes/pkg/registry/core/replicationcontroller/storage"
	corerest "k8s.io/kubernetes/pkg/registry/core/rest"
	"k8s.io/kubernetes/pkg/registry/core/service/ipallocator"
	"k8s.io/kubernetes/pkg/registry/core/service/portallocator"
	servicestore "k8s.io/kubernetes/pkg/registry/core/service/storage"
	discoveryrest "k8s.io/kubernetes/pkg/registry/discovery/rest"
	rbacrest "k8s.io/kubernetes/pkg/registry/rbac/rest"
	storagerest "k8s.io/kubernetes/pkg/registry/storage/rest"
)

// Service ranges: kube-apiserver's defaults for --service-cluster-ip-range
// (as kubeadm sets it) and --service-node-port-range.
var (
	serviceClusterIPRange = mustCIDR("10.96.0.0/12")
	nodePortRange         = utilnet.PortRange{Base: 30000, Size: 2768}
)

func mustCIDR(s string) net.IPNet {
	_, n, err := net.ParseCIDR(s)
	if err != nil {
		panic(err)
	}
	return *n
}

// servedGroupVersions are the API versions this server serves: the GA
// versions of the groups the issue lists.
var servedGroupVersions = []schema.GroupVersion{
	{Version: "v1"},
	{Group: "apps", Version: "v1"},
	{Group: "batch", Version: "v1"},
	{Group: "coordination.k8s.io", Version: "v1"},
	{Group: "discovery.k8s.io", Version: "v1"},
	{Group: "storage.k8s.io", Version: "v1"},
	{Group: "rbac.authorization.k8s.io", Version: "v1"},
}

func resourceConfig() *serverstorage.ResourceConfig {
	rc := serverstorage.NewResourceConfig()
	rc.EnableVersions(servedGroupVersions...)
	return rc
}

// groupProvider is kubernetes' RESTStorageProvider shape.
type groupProvider interface {
	NewRESTStorage(serverstorage.APIResourceConfigSource, generic.RESTOptionsGetter) (genericapiserver.APIGroupInfo, error)
}

// serviceAllocators hand out service cluster IPs and node ports.
type serviceAllocators struct {
	ips   *ipallocator.Range
	ports *portallocator.PortAllocator
}

// installAPIs builds every resource with kubernetes' own registries
// (k8s.io/kubernetes/pkg/registry/...: strategies, validation, defaults,
// table printers, field selectors) and installs them.
func installAPIs(s *genericapiserver.GenericAPIServer, factory *serverstorage.DefaultStorageFactory, opts generic.RESTOptionsGetter,
	loopback *restclient.Config, inf informers.SharedInformerFactory, authz authorizer.Authorizer,
) (serviceAllocators, error) {
	rc := resourceConfig()
	core, alloc, err := coreGroup(factory, opts, loopback, inf, authz, rc)
	if err != nil {
		return alloc, fmt.Errorf("core/v1: %w", err)
	}
	if err := s.InstallLegacyAPIGroup(genericapiserver.DefaultLegacyAPIPrefix, &core); err != nil {
		return alloc, fmt.Errorf("install core/v1: %w", err)
	}
	providers := []groupProvider{
		appsrest.StorageProvider{},
		batchrest.RESTStorageProvider{},
		coordinationrest.RESTStorageProvider{},
		discoveryrest.StorageProvider{},
		storagerest.RESTStorageProvider{},
		rbacrest.RESTStorageProvider{Authorizer: authz},
	}
	var groups []*genericapiserver.APIGroupInfo
	for _, p := range providers {
		g, err := p.NewRESTStorage(rc, opts)
		if err != nil {
			return alloc, fmt.Errorf("%T: %w", p, err)
		}
		groups = append(groups, &g)
	}
	return alloc, s.InstallAPIGroups(groups...)
}

// restore marks the cluster IPs and node ports of the services already
// stored as taken: the allocators live in memory, and a server started on
// a cluster that has services must not hand theirs out again. This stands
// in for kube-apiserver's allocator repair loops.
func (a serviceAllocators) restore(ctx context.Context, client kubernetes.Interface) error {
	services, err := client.CoreV1().Services("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list services: %w", err)
	}
	for _, svc := range services.Items {
		for _, ip := range svc.Spec.ClusterIPs {
			if parsed := net.ParseIP(ip); parsed != nil && serviceClusterIPRange.Contains(parsed) {
				_ = a.ips.Allocate(parsed) // ErrAllocated: shared by two services already
			}
		}
		for _, p := range svc.Spec.Ports {
			if p.NodePort != 0 {
				_ = a.ports.Allocate(int(p.NodePort))
			}
		}
	}
	return nil
}

// coreGroup assembles core/v1 as kubernetes' legacy provider
// (pkg/registry/core/rest) does, with in-memory service IP and node port
// allocators in place of its etcd-backed ones and their repair loops.
func coreGroup(factory *serverstorage.DefaultStorageFactory, opts generic.RESTOptionsGetter, loopback *restclient.Config,
	inf informers.SharedInformerFactory, authz authorizer.Authorizer, rc *serverstorage.ResourceConfig,
) (info genericapiserver.APIGroupInfo, alloc serviceAllocators, err error) {
	generic := corerest.GenericConfig{
		StorageFactory:       factory,
		EventTTL:             time.Hour, // kube-apiserver's --event-ttl default
		LoopbackClientConfig: loopback,
		Informers:            inf,
	}
	info, err = generic.NewRESTStorage(rc, opts)
	if err != nil {
		return info, alloc, err
	}
	storage := info.VersionedResourcesStorageMap["v1"]

	add := func(resource string, s rest.Storage, err error) error {
		if err != nil {
			return fmt.Errorf("%s: %w", resource, err)
		}
		storage[resource] = s
		return nil
	}
	podTemplates, err := podtemplatestore.NewREST(opts)
	if err := add("podtemplates", podTemplates, err); err != nil {
		return info, alloc, err
	}
	limitRanges, err := limitrangestore.NewREST(opts)
	if err := add("limitranges", limitRanges, err); err != nil {
		return info, alloc, err
	}
	pv, pvStatus, err := pvstore.NewREST(opts)
	if err := add("persistentvolumes", pv, err); err != nil {
		return info, alloc, err
	}
	storage["persistentvolumes/status"] = pvStatus
	pvc, pvcStatus, err := pvcstore.NewREST(opts)
	if err := add("persistentvolumeclaims", pvc, err); err != nil {
		return info, alloc, err
	}
	storage["persistentvolumeclaims/status"] = pvcStatus
	endpoints, err := endpointsstore.NewREST(opts)
	if err := add("endpoints", endpoints, err); err != nil {
		return info, alloc, err
	}

	// No kubelets listen: logs, exec and proxy fail with a connection error.
	kubelet := kubeletclient.KubeletClientConfig{Port: 10250, HTTPTimeout: 5 * time.Second}
	transport := http.DefaultTransport
	nodes, err := nodestore.NewStorage(opts, kubelet, transport)
	if err != nil {
		return info, alloc, fmt.Errorf("nodes: %w", err)
	}
	storage["nodes"] = nodes.Node
	storage["nodes/status"] = nodes.Status
	storage["nodes/proxy"] = nodes.Proxy

	client, err := kubernetes.NewForConfig(loopback)
	if err != nil {
		return info, alloc, err
	}
	pods, err := podstore.NewStorage(opts, nodes.KubeletConnectionInfo, transport, client.PolicyV1(), authz)
	if err != nil {
		return info, alloc, fmt.Errorf("pods: %w", err)
	}
	for sub, s := range map[string]rest.Storage{
		"": pods.Pod, "/attach": pods.Attach, "/status": pods.Status, "/log": pods.Log, "/exec": pods.Exec,
		"/portforward": pods.PortForward, "/proxy": pods.Proxy, "/binding": pods.Binding, "/eviction": pods.Eviction,
		"/ephemeralcontainers": pods.EphemeralContainers, "/resize": pods.Resize,
	} {
		if s != nil {
			storage["pods"+sub] = s
		}
	}
	storage["bindings"] = pods.LegacyBinding

	if alloc.ips, err = ipallocator.NewInMemory(&serviceClusterIPRange); err != nil {
		return info, alloc, err
	}
	if alloc.ports, err = portallocator.NewInMemory(nodePortRange); err != nil {
		return info, alloc, err
	}
	slices, err := utilproxy.NewEndpointSliceListerGetter(inf.Discovery().V1().EndpointSlices().Lister())
	if err != nil {
		return info, alloc, err
	}
	services, servicesStatus, servicesProxy, err := servicestore.NewREST(opts, api.IPv4Protocol,
		map[api.IPFamily]ipallocator.Interface{api.IPv4Protocol: alloc.ips}, alloc.ports, slices, pods.Pod, transport)
	if err := add("services", services, err); err != nil {
		return info, alloc, err
	}
	storage["services/status"] = servicesStatus
	storage["services/proxy"] = servicesProxy

	rcs, err := controllerstore.NewStorage(opts)
	if err != nil {
		return info, alloc, fmt.Errorf("replicationcontrollers: %w", err)
	}
	storage["replicationcontrollers"] = rcs.Controller
	storage["replicationcontrollers/status"] = rcs.Status
	storage["replicationcontrollers/scale"] = rcs.Scale

	return info, alloc, nil
}

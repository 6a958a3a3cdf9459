package kube

import (
	"net/http"
	"strings"

	"k8s.io/apiserver/pkg/endpoints/request"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/rest"
)

// componentAgents gives the in-process components' requests the
// User-Agent their own binaries send. client-go names a client after the
// program it runs in (rest.DefaultKubernetesUserAgent reads os.Args[0]), so
// kube-apiserver's loopback client, kube-controller-manager's controllers
// and kube-scheduler would all call themselves etcdscope here; and
// kube-apiserver records an agent's first word as the manager of each write
// in managedFields, where a real cluster's objects say kube-apiserver,
// kube-controller-manager or kube-scheduler. The request is recognised by
// its authenticated user and this process's own agent; nothing else is
// changed (the demo's simulated components set agents of their own).
func componentAgents(build func(http.Handler, *genericapiserver.Config) http.Handler) func(http.Handler, *genericapiserver.Config) http.Handler {
	self, _, _ := strings.Cut(rest.DefaultKubernetesUserAgent(), "/")
	return func(api http.Handler, c *genericapiserver.Config) http.Handler {
		inner := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			if agent, version, ok := strings.Cut(req.UserAgent(), "/"); ok && agent == self {
				if u, ok := request.UserFrom(req.Context()); ok {
					if binary := componentOf(u.GetName()); binary != "" {
						req = req.Clone(req.Context())
						req.Header.Set("User-Agent", binary+"/"+version)
					}
				}
			}
			api.ServeHTTP(w, req)
		})
		return build(inner, c)
	}
}

// componentOf is the binary that runs as user name in a kubeadm cluster:
// kube-controller-manager's controllers each have a service account of
// their own in kube-system (--use-service-account-credentials).
func componentOf(name string) string {
	switch {
	case name == "system:apiserver":
		return "kube-apiserver"
	case name == "system:kube-controller-manager",
		strings.HasPrefix(name, "system:serviceaccount:kube-system:"):
		return "kube-controller-manager"
	case name == "system:kube-scheduler":
		return "kube-scheduler"
	}
	return ""
}

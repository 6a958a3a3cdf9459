package apiserver

import (
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Kubeconfig names: the cluster and, for each built-in identity, a user and
// a context.
const (
	KubeconfigCluster       = "etcdscope"
	KubeconfigAdminContext  = "etcdscope"
	KubeconfigViewerContext = "etcdscope-viewer"
)

// WriteKubeconfig writes a kubeconfig (mode 0600) for the server with an
// "admin" and a "viewer" user, one context each; the admin context is the
// current one. A user whose token the server lacks is left out.
func (s *Server) WriteKubeconfig(path string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[KubeconfigCluster] = &clientcmdapi.Cluster{Server: s.url, CertificateAuthorityData: s.caPEM}
	for _, u := range []struct{ user, context, token string }{
		{"admin", KubeconfigAdminContext, s.AdminToken()},
		{"viewer", KubeconfigViewerContext, s.ViewerToken()},
	} {
		if u.token == "" {
			continue
		}
		cfg.AuthInfos[u.user] = &clientcmdapi.AuthInfo{Token: u.token}
		cfg.Contexts[u.context] = &clientcmdapi.Context{Cluster: KubeconfigCluster, AuthInfo: u.user, Namespace: "default"}
		if cfg.CurrentContext == "" {
			cfg.CurrentContext = u.context
		}
	}
	return clientcmd.WriteToFile(*cfg, path)
}

package kube

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/etcdscope/etcdscope/embedded/datadir"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Kubeconfig names: the cluster, and a context for the admin and the
// viewer.
const (
	KubeconfigAdminContext  = "etcdscope"
	KubeconfigViewerContext = "etcdscope-viewer"
	viewerGroup             = "etcdscope:viewers"
)

// identity is a user's client certificate.
type identity struct {
	User
	certPEM, keyPEM []byte
}

// issueIdentities gives the admin, the viewer, the controller manager,
// the scheduler and users a client certificate each, and writes the
// kubeconfigs the two components read.
func (c *ControlPlane) issueIdentities(users []User) error {
	all := append([]User{
		{Name: AdminUser, Groups: []string{"system:masters"}},
		{Name: ViewerUser, Groups: []string{viewerGroup}},
		{Name: controllerManagerUser},
		{Name: schedulerUser},
	}, users...)
	c.configs = map[string]*rest.Config{}
	c.identities = map[string]identity{}
	for _, u := range all {
		certPEM, keyPEM, err := c.pki.clientPair(u.Name, u.Groups)
		if err != nil {
			return err
		}
		c.identities[u.Name] = identity{u, certPEM, keyPEM}
		c.configs[u.Name] = &rest.Config{
			Host:            c.url,
			TLSClientConfig: rest.TLSClientConfig{CAData: c.pki.caPEM, CertData: certPEM, KeyData: keyPEM},
		}
	}
	for _, u := range []string{controllerManagerUser, schedulerUser} {
		if err := c.writeKubeconfig(c.kubeconfigPath(u), u); err != nil {
			return err
		}
	}
	return nil
}

// kubeconfigPath is where user's kubeconfig is: controller-manager.conf
// and scheduler.conf, as kubeadm names them.
func (c *ControlPlane) kubeconfigPath(user string) string {
	name := strings.TrimPrefix(user, "system:kube-")
	return filepath.Join(c.dir, name+".conf")
}

// WriteKubeconfig writes a kubeconfig (mode 0600) with the admin's and
// the viewer's client certificates, one context each, the admin's current.
func (c *ControlPlane) WriteKubeconfig(path string) error {
	return c.writeKubeconfig(path, AdminUser, ViewerUser)
}

func (c *ControlPlane) writeKubeconfig(path string, users ...string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[clusterName] = &clientcmdapi.Cluster{Server: c.url, CertificateAuthorityData: c.pki.caPEM}
	for _, name := range users {
		id, ok := c.identities[name]
		if !ok {
			return fmt.Errorf("no identity %q", name)
		}
		context := name
		switch name {
		case AdminUser:
			context = KubeconfigAdminContext
		case ViewerUser:
			context = KubeconfigViewerContext
		}
		cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{ClientCertificateData: id.certPEM, ClientKeyData: id.keyPEM}
		cfg.Contexts[context] = &clientcmdapi.Context{Cluster: clusterName, AuthInfo: name, Namespace: "default"}
		if cfg.CurrentContext == "" {
			cfg.CurrentContext = context
		}
	}
	return writeKubeconfigFile(cfg, path)
}

// writeKubeconfigFile writes cfg to path (mode 0600) without following a
// link there, as clientcmd.WriteToFile would.
func writeKubeconfigFile(cfg *clientcmdapi.Config, path string) error {
	b, err := clientcmd.Write(*cfg)
	if err != nil {
		return err
	}
	return datadir.WriteFile(path, b)
}

// bindViewer gives the viewer group read access to every resource, through
// a ClusterRole and a ClusterRoleBinding, as an administrator would. They
// are kept when they exist.
func bindViewer(ctx context.Context, admin kubernetes.Interface) error {
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: ViewerRole},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"get", "list", "watch"}},
			{NonResourceURLs: []string{"*"}, Verbs: []string{"get"}},
		},
	}
	if _, err := admin.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create the viewer's ClusterRole: %w", err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: ViewerRole},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: ViewerRole},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: viewerGroup}},
	}
	if _, err := admin.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create the viewer's ClusterRoleBinding: %w", err)
	}
	return nil
}

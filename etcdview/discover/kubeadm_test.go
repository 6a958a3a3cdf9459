package discover_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/etcdscope/etcdscope/embedded/etcdtest"
	"github.com/etcdscope/etcdscope/etcdview/discover"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	kubeadmapi "k8s.io/kubernetes/cmd/kubeadm/app/apis/kubeadm"
	kubeadmconstants "k8s.io/kubernetes/cmd/kubeadm/app/constants"
	"k8s.io/kubernetes/cmd/kubeadm/app/phases/controlplane"
	etcdphase "k8s.io/kubernetes/cmd/kubeadm/app/phases/etcd"
	configutil "k8s.io/kubernetes/cmd/kubeadm/app/util/config"
	staticpodutil "k8s.io/kubernetes/cmd/kubeadm/app/util/staticpod"
)

const kubeadmManifest = "/etc/kubernetes/manifests/kube-apiserver.yaml"

// kubeadmNode writes under root what `kubeadm init` writes that matters
// here, with kubeadm's own code: kube-apiserver's and etcd's static pods
// (both, as on a stacked control-plane node), pointed at e, and e's TLS
// files where the manifests name them. edit changes the configuration
// before the pods are made (extraArgs, extraVolumes); nil leaves kubeadm's
// defaults.
func kubeadmNode(t *testing.T, root string, e *etcdtest.External, edit func(*kubeadmapi.InitConfiguration)) {
	t.Helper()
	cfg, err := configutil.DefaultedStaticInitConfiguration()
	if err != nil {
		t.Fatal(err)
	}
	cfg.LocalAPIEndpoint.AdvertiseAddress = "127.0.0.1"
	if edit != nil {
		edit(cfg)
	}
	dir := filepath.Join(root, kubeadmconstants.KubernetesDir, kubeadmconstants.ManifestsSubDirName)
	pods := controlplane.GetStaticPodSpecs(&cfg.ClusterConfiguration, &cfg.LocalAPIEndpoint, nil)
	apiServer := pods[kubeadmconstants.KubeAPIServer]
	// kubeadm points kube-apiserver at https://127.0.0.1:2379; the test's
	// etcd is on a port picked now.
	setFlag(t, &apiServer.Spec.Containers[0], "etcd-servers", e.Endpoint)
	if err := staticpodutil.WriteStaticPodToDisk(kubeadmconstants.KubeAPIServer, dir, apiServer); err != nil {
		t.Fatal(err)
	}
	etcdPod := etcdphase.GetEtcdPodSpec(&cfg.ClusterConfiguration, &cfg.LocalAPIEndpoint, "node-1", nil)
	setFlag(t, &etcdPod.Spec.Containers[0], "listen-client-urls", e.Endpoint)
	if err := staticpodutil.WriteStaticPodToDisk(kubeadmconstants.Etcd, dir, etcdPod); err != nil {
		t.Fatal(err)
	}
	pki := cfg.CertificatesDir
	place(t, root, map[string]string{
		e.TLS.CA:   filepath.Join(pki, kubeadmconstants.EtcdCACertName),
		e.TLS.Cert: filepath.Join(pki, kubeadmconstants.APIServerEtcdClientCertName),
		e.TLS.Key:  filepath.Join(pki, kubeadmconstants.APIServerEtcdClientKeyName),
	})
	place(t, root, map[string]string{
		e.TLS.Cert: filepath.Join(pki, kubeadmconstants.EtcdHealthcheckClientCertName),
		e.TLS.Key:  filepath.Join(pki, kubeadmconstants.EtcdHealthcheckClientKeyName),
	})
}

// setFlag sets --name=value in a container kubeadm made, where kubeadm
// puts its flags: in the Command, after the binary.
func setFlag(t *testing.T, c *corev1.Container, name, value string) {
	t.Helper()
	for i, a := range c.Command {
		if strings.HasPrefix(a, "--"+name+"=") {
			c.Command[i] = "--" + name + "=" + value
			return
		}
	}
	t.Fatalf("kubeadm's %s container has no --%s: %q", c.Name, name, c.Command)
}

func TestFindKubeadmNodeConnects(t *testing.T) {
	e := tlsEtcd(t)
	root := t.TempDir()
	kubeadmNode(t, root, e, nil)
	f := find(t, root)
	want := discover.Found{
		Layout: discover.Kubeadm, What: "etcd of this kubeadm node", From: kubeadmManifest,
		Endpoints: []string{e.Endpoint},
		CACert:    filepath.Join(root, "/etc/kubernetes/pki/etcd/ca.crt"),
		Cert:      filepath.Join(root, "/etc/kubernetes/pki/apiserver-etcd-client.crt"),
		Key:       filepath.Join(root, "/etc/kubernetes/pki/apiserver-etcd-client.key"),
		Prefix:    "/registry",
	}
	if d := cmp.Diff(want, f); d != "" {
		t.Errorf("Find (-want +got):\n%s", d)
	}
	if got, line := f.String(), "etcd of this kubeadm node, from /etc/kubernetes/manifests/kube-apiserver.yaml"; got != line {
		t.Errorf("String() = %q, want %q", got, line)
	}
	readsThrough(t, e, f)
}

// TestFindKubeadmEncryptionConfigOnItsHostPath: kubeadm's documented way to
// encrypt Secrets mounts a node directory into kube-apiserver with
// extraVolumes, often at another path in the container than on the node;
// the flag names the container's path and the file is at the node's.
func TestFindKubeadmEncryptionConfigOnItsHostPath(t *testing.T) {
	e := tlsEtcd(t)
	root := t.TempDir()
	kubeadmNode(t, root, e, func(cfg *kubeadmapi.InitConfiguration) {
		cfg.APIServer.ExtraArgs = append(cfg.APIServer.ExtraArgs,
			kubeadmapi.Arg{Name: "encryption-provider-config", Value: "/etc/kubernetes/enc/enc.yaml"},
			kubeadmapi.Arg{Name: "etcd-prefix", Value: "/tenant-a"})
		cfg.APIServer.ExtraVolumes = append(cfg.APIServer.ExtraVolumes, kubeadmapi.HostPathMount{
			Name: "enc", HostPath: "/etc/kubernetes/encryption", MountPath: "/etc/kubernetes/enc",
			ReadOnly: true, PathType: corev1.HostPathDirectoryOrCreate,
		})
	})
	write(t, root, "/etc/kubernetes/encryption/enc.yaml", []byte("kind: EncryptionConfiguration\napiVersion: apiserver.config.k8s.io/v1\n"))
	f := find(t, root)
	if want := filepath.Join(root, "/etc/kubernetes/encryption/enc.yaml"); f.EncryptionConfig != want {
		t.Errorf("EncryptionConfig = %q, want the node's file %q", f.EncryptionConfig, want)
	}
	if f.Prefix != "/tenant-a" {
		t.Errorf("Prefix = %q, want kube-apiserver's --etcd-prefix /tenant-a", f.Prefix)
	}
	readsThrough(t, e, f)
}

func TestFindOnAnEmptyRootIsErrNotFound(t *testing.T) {
	_, err := discover.Find(t.TempDir())
	if !errors.Is(err, discover.ErrNotFound) {
		t.Fatalf("Find on an empty root = %v, want ErrNotFound", err)
	}
}

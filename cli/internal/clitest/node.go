package clitest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/etcdscope/etcdscope/embedded"
)

// kubeadmManifest is kube-apiserver's static pod manifest as kubeadm
// writes it, cut to what names etcd: the flags in the Command, the
// certificates on a hostPath volume, and the encryption config (when
// given) on a volume whose host path differs from the container's, as
// kubeadm's extraVolumes put it.
const kubeadmManifest = `apiVersion: v1
kind: Pod
metadata:
  name: kube-apiserver
  namespace: kube-system
spec:
  containers:
  - name: kube-apiserver
    image: registry.k8s.io/kube-apiserver:v1.37.2
    command:
    - kube-apiserver
    - --advertise-address=10.0.0.5
    - --etcd-cafile=/etc/kubernetes/pki/etcd/ca.crt
    - --etcd-certfile=/etc/kubernetes/pki/apiserver-etcd-client.crt
    - --etcd-keyfile=/etc/kubernetes/pki/apiserver-etcd-client.key
    - --etcd-servers=%s
%s    volumeMounts:
    - name: k8s-certs
      mountPath: /etc/kubernetes/pki
      readOnly: true
    - name: encryption
      mountPath: /etc/kubernetes/enc
      readOnly: true
  volumes:
  - name: k8s-certs
    hostPath:
      path: /etc/kubernetes/pki
      type: DirectoryOrCreate
  - name: encryption
    hostPath:
      path: /etc/kubernetes/encryption
      type: DirectoryOrCreate
`

// KubeadmNode is a kubeadm control-plane node's files in a temporary root:
// the manifest pointing at endpoint, the client files of tls where kubeadm keeps
// kube-apiserver's, and, with encryption set, a copy of that
// EncryptionConfiguration file, which kube-apiserver encrypts with.
func KubeadmNode(t *testing.T, endpoint string, tls *embedded.TLSFiles, encryption string) string {
	t.Helper()
	root := t.TempDir()
	pki := filepath.Join(root, "etc/kubernetes/pki")
	extra := ""
	files := map[string]string{
		filepath.Join(pki, "etcd/ca.crt"):               tls.CA,
		filepath.Join(pki, "apiserver-etcd-client.crt"): tls.Cert,
		filepath.Join(pki, "apiserver-etcd-client.key"): tls.Key,
	}
	if encryption != "" {
		files[filepath.Join(root, "etc/kubernetes/encryption/config.yaml")] = encryption
		extra = "    - --encryption-provider-config=/etc/kubernetes/enc/config.yaml\n"
	}
	for dst, src := range files {
		if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	WriteAPIServerManifest(t, root, fmt.Sprintf(kubeadmManifest, endpoint, extra))
	return root
}

// WriteAPIServerManifest writes body as kube-apiserver's static pod
// manifest of the kubeadm node whose files are under root.
func WriteAPIServerManifest(t *testing.T, root, body string) {
	t.Helper()
	path := filepath.Join(root, "etc/kubernetes/manifests/kube-apiserver.yaml")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

// UserConfig writes body as the user's etcdscope config file, in an
// XDG_CONFIG_HOME of the test's own, and returns its path.
func UserConfig(t *testing.T, body string) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", home)
	path := filepath.Join(home, "etcdscope", "config.yaml")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

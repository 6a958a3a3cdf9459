package discover_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/etcdscope/etcdscope/etcdview/discover"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

const (
	rke2Manifest   = "/var/lib/rancher/rke2/agent/pod-manifests/kube-apiserver.yaml"
	rke2EtcdTLS    = "/var/lib/rancher/rke2/server/tls/etcd"
	rke2Encryption = "/var/lib/rancher/rke2/server/cred/encryption-config.json"
)

// rke2Pod is a static pod as RKE2 writes it: the binary alone in Command,
// the flags in Args, every file and directory it names mounted at its own
// path by a hostPath volume of its own.
func rke2Pod(name string, args []string, files ...string) *corev1.Pod {
	pod := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kube-system", Labels: map[string]string{"component": name, "tier": "control-plane"}},
		Spec: corev1.PodSpec{
			HostNetwork:       true,
			PriorityClassName: "system-cluster-critical",
			Containers: []corev1.Container{{
				Name: name, Image: "index.docker.io/rancher/hardened-kubernetes:v1.37.2-rke2r1-build20260101",
				Command: []string{name}, Args: args,
			}},
		},
	}
	file := corev1.HostPathFile
	for i, f := range files {
		vol := fmt.Sprintf("file%d", i)
		pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: vol, VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: f, Type: &file}}})
		pod.Spec.Containers[0].VolumeMounts = append(pod.Spec.Containers[0].VolumeMounts, corev1.VolumeMount{Name: vol, MountPath: f, ReadOnly: true})
	}
	return pod
}

// writePod writes a Pod as YAML at path under root, 0600 (RKE2's mode
// under its CIS profile; 0644 otherwise).
func writePod(t *testing.T, root, path string, pod *corev1.Pod) {
	t.Helper()
	data, err := yaml.Marshal(pod)
	if err != nil {
		t.Fatal(err)
	}
	write(t, root, path, data)
}

func rke2APIServer(etcdServers string, extra ...string) *corev1.Pod {
	args := append([]string{
		"--allow-privileged=true",
		"--etcd-cafile=" + rke2EtcdTLS + "/server-ca.crt",
		"--etcd-certfile=" + rke2EtcdTLS + "/client.crt",
		"--etcd-keyfile=" + rke2EtcdTLS + "/client.key",
		"--etcd-servers=" + etcdServers,
		"--secure-port=6443",
	}, extra...)
	return rke2Pod("kube-apiserver", args, rke2EtcdTLS+"/server-ca.crt", rke2EtcdTLS+"/client.crt", rke2EtcdTLS+"/client.key", rke2Encryption)
}

func TestFindRKE2NodeConnects(t *testing.T) {
	e := tlsEtcd(t)
	root := t.TempDir()
	writePod(t, root, rke2Manifest, rke2APIServer(e.Endpoint, "--encryption-provider-config="+rke2Encryption))
	place(t, root, map[string]string{
		e.TLS.CA: rke2EtcdTLS + "/server-ca.crt", e.TLS.Cert: rke2EtcdTLS + "/client.crt", e.TLS.Key: rke2EtcdTLS + "/client.key",
	})
	write(t, root, rke2Encryption, []byte(`{"kind":"EncryptionConfiguration","apiVersion":"apiserver.config.k8s.io/v1"}`))
	f := find(t, root)
	want := discover.Found{
		Layout: discover.RKE2, What: "etcd of this RKE2 node", From: rke2Manifest,
		Endpoints: []string{e.Endpoint},
		CACert:    filepath.Join(root, rke2EtcdTLS, "server-ca.crt"),
		Cert:      filepath.Join(root, rke2EtcdTLS, "client.crt"),
		Key:       filepath.Join(root, rke2EtcdTLS, "client.key"),
		Prefix:    "/registry", EncryptionConfig: filepath.Join(root, rke2Encryption),
	}
	if d := cmp.Diff(want, f); d != "" {
		t.Errorf("Find (-want +got):\n%s", d)
	}
	readsThrough(t, e, f)
}

// TestFindRKE2OnKineMapsItsSocket: RKE2 on an external datastore points
// kube-apiserver at kine's Unix socket; the endpoint is that socket on
// this machine, under the host root.
func TestFindRKE2OnKineMapsItsSocket(t *testing.T) {
	root := t.TempDir()
	const sock = "/var/lib/rancher/rke2/server/kine.sock"
	writePod(t, root, rke2Manifest, rke2APIServer("unixs://"+sock))
	for _, f := range []string{"server-ca.crt", "client.crt", "client.key"} {
		write(t, root, rke2EtcdTLS+"/"+f, []byte("PEM"))
	}
	write(t, root, rke2Encryption, []byte("{}"))
	f := find(t, root)
	if want := []string{"unixs://" + filepath.Join(root, sock)}; !cmp.Equal(f.Endpoints, want) {
		t.Errorf("Endpoints = %q, want %q", f.Endpoints, want)
	}
	// RKE2 encrypts Secrets from the start, with this file: it is the
	// encryption config even when the manifest does not say so.
	if want := filepath.Join(root, rke2Encryption); f.EncryptionConfig != want {
		t.Errorf("EncryptionConfig = %q, want %q", f.EncryptionConfig, want)
	}
}

package discover_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestFindReadsFlagsAsPflagDoes: flags in Command or Args, as --name=value
// or --name value, the last one winning, several endpoints in one flag; and
// etcd's own listen URLs, loopback first and a wildcard read as loopback.
func TestFindReadsFlagsAsPflagDoes(t *testing.T) {
	for _, c := range []struct {
		name, path, manifest string
		endpoints            []string
		prefix               string
	}{
		{"separate values in Args", kubeadmManifest, `apiVersion: v1
kind: Pod
spec:
  containers:
  - name: kube-apiserver
    command: [kube-apiserver]
    args: [--etcd-prefix, /tenant, --etcd-servers, "https://10.0.0.1:2379,https://10.0.0.2:2379", --v=2]
`, []string{"https://10.0.0.1:2379", "https://10.0.0.2:2379"}, "/tenant"},
		{"the last one wins", kubeadmManifest, `apiVersion: v1
kind: Pod
spec:
  containers:
  - name: apiserver
    command: [/usr/local/bin/kube-apiserver, --etcd-servers=http://127.0.0.1:1]
    args: [--etcd-servers=http://127.0.0.1:2]
`, []string{"http://127.0.0.1:2"}, "/registry"},
		{"etcd on a wildcard address", "/etc/kubernetes/manifests/etcd.yaml", `apiVersion: v1
kind: Pod
spec:
  containers:
  - name: etcd
    command: [etcd, --listen-client-urls=http://0.0.0.0:12379]
`, []string{"http://127.0.0.1:12379"}, "/registry"},
		{"etcd's loopback URL before its others", "/etc/kubernetes/manifests/etcd.yaml", `apiVersion: v1
kind: Pod
spec:
  containers:
  - name: etcd
    command: [etcd, --advertise-client-urls=http://10.0.0.5:2379, "--listen-client-urls=http://10.0.0.5:2379,http://[::1]:2379"]
`, []string{"http://[::1]:2379"}, "/registry"},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			write(t, root, c.path, []byte(c.manifest))
			f := find(t, root)
			if d := cmp.Diff(c.endpoints, f.Endpoints); d != "" {
				t.Errorf("Endpoints (-want +got):\n%s", d)
			}
			if f.Prefix != c.prefix {
				t.Errorf("Prefix = %q, want %q", f.Prefix, c.prefix)
			}
			if f.From != c.path || f.Layout == "" {
				t.Errorf("Find = %s (%s), want it from %s", f, f.Layout, c.path)
			}
		})
	}
}

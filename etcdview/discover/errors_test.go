package discover_test

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/etcdscope/etcdscope/embedded/etcdtest"
	"github.com/etcdscope/etcdscope/etcdview/discover"
)

// findAs makes the test binary a one-shot Find of the root it names, which
// TestFindAsAnotherUserSaysSudo runs as a user who is not root: root reads
// through any mode, so only another user meets the modes kubeadm sets.
var findAs = flag.String("find-as-user", "", "run discover.Find on this root, print the error, exit")

func TestMain(m *testing.M) {
	flag.Parse()
	if *findAs != "" {
		_, err := discover.Find(*findAs)
		fmt.Printf("error: %v\npermission: %v\n", err, errors.Is(err, fs.ErrPermission))
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestFindAsAnotherUserSaysSudo lays out a kubeadm node as kubeadm writes
// it (manifests in a 0700 directory, owned by root) and runs Find as
// another local user: the manifest is there but unreadable, which must say
// so and ask for sudo, never count as absent (absent would start the
// bundled cluster instead of showing the node's).
func TestFindAsAnotherUserSaysSudo(t *testing.T) {
	u := etcdtest.OtherUser(t)
	dir := t.TempDir()
	root := filepath.Join(dir, "host")
	kubeadmNode(t, root, tlsEtcd(t), nil)
	// The other user may walk to the manifests directory, as on a node,
	// where /etc and /etc/kubernetes are 0755; kubeadm made that one 0700.
	for _, d := range []string{filepath.Dir(dir), dir, root, root + "/etc", root + "/etc/kubernetes"} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "discover.test")
	copyExecutable(t, bin)
	out, err := u.Run(bin, "-find-as-user", root)
	if err != nil {
		t.Fatalf("%s as %s: %v\n%s", bin, u.Name, err, out)
	}
	want := fmt.Sprintf("error: cannot read %s/etc/kubernetes/manifests/kube-apiserver.yaml (permission denied): run it with sudo, or give --endpoints\npermission: true\n", root)
	if out != want {
		t.Errorf("Find as %s:\n%s\nwant\n%s", u.Name, out, want)
	}
}

// copyExecutable copies the running test binary to path, where another user
// may run it (go test keeps it in a directory only its owner can enter).
func copyExecutable(t *testing.T, path string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestFindSaysWhichFileIsWrong: a manifest that is there but cannot be
// used is an error naming it and what is wrong, in one line, never
// ErrNotFound.
func TestFindSaysWhichFileIsWrong(t *testing.T) {
	for _, c := range []struct {
		name, manifest, want string
	}{
		{"not YAML", "\x00\x01:", "is not a Pod manifest"},
		{"not a Pod", "apiVersion: apps/v1\nkind: Deployment\n", `is not a Pod manifest (apiVersion "apps/v1", kind "Deployment")`},
		{"no kube-apiserver", "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: nginx\n    command: [nginx]\n", "has no kube-apiserver container"},
		{"no --etcd-servers", "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: kube-apiserver\n    command: [kube-apiserver, --secure-port=6443]\n", "names no --etcd-servers for kube-apiserver"},
		{"a CA that is not there", "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: kube-apiserver\n    command: [kube-apiserver, --etcd-servers=https://127.0.0.1:1, --etcd-cafile=/etc/kubernetes/pki/etcd/ca.crt]\n",
			"ROOT/etc/kubernetes/manifests/kube-apiserver.yaml's --etcd-cafile: ROOT/etc/kubernetes/pki/etcd/ca.crt is not there"},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			write(t, root, kubeadmManifest, []byte(c.manifest))
			_, err := discover.Find(root)
			if err == nil || errors.Is(err, discover.ErrNotFound) {
				t.Fatalf("Find = %v, want an error", err)
			}
			msg := err.Error()
			if want := strings.ReplaceAll(c.want, "ROOT", root); !strings.Contains(msg, want) || strings.Contains(msg, "\n") {
				t.Errorf("Find = %q, want one line with %q", msg, want)
			}
			if !strings.Contains(msg, filepath.Join(root, kubeadmManifest)) {
				t.Errorf("Find = %q, which does not name the manifest", msg)
			}
		})
	}
}

// TestFindFollowsLinksInsideTheHostRoot: a node's /etc/kubernetes/pki that
// is a link to /srv/pki is the node's /srv/pki, which is under the host
// root here, not this machine's /srv/pki.
func TestFindFollowsLinksInsideTheHostRoot(t *testing.T) {
	e := tlsEtcd(t)
	root := t.TempDir()
	kubeadmNode(t, root, e, nil)
	pki := filepath.Join(root, "/etc/kubernetes/pki")
	if err := os.MkdirAll(filepath.Join(root, "/srv"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(pki, filepath.Join(root, "/srv/pki")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/srv/pki", pki); err != nil {
		t.Fatal(err)
	}
	f := find(t, root)
	if want := filepath.Join(root, "/srv/pki/etcd/ca.crt"); f.CACert != want {
		t.Errorf("CACert = %q, want %q", f.CACert, want)
	}
	readsThrough(t, e, f)
}

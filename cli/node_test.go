package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/etcdscope/etcdscope/cli/internal/clitest"
	"github.com/etcdscope/etcdscope/embedded/etcdtest"
	"github.com/etcdscope/etcdscope/etcdview/etcdviewtest"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// tlsEtcd is an etcd 3.6 serving TLS with client-certificate auth, as
// kubeadm's does, holding the ConfigMap "on-the-node".
func tlsEtcd(t *testing.T) (*etcdtest.External, *clientv3.Client) {
	t.Helper()
	e := etcdtest.StartVersion(t, "3.6", etcdtest.Options{TLS: true})
	cli := e.Client(t)
	etcdviewtest.Put(t, cli, etcdviewtest.ConfigMap("on-the-node"))
	return e, cli
}

func TestCommandWithNoFlagsReadsTheEtcdTheNodesManifestNames(t *testing.T) {
	stateDir(t)
	e, _ := tlsEtcd(t)
	root := clitest.KubeadmNode(t, e.Endpoint, e.TLS, "")
	if got := run(t, "get", "configmaps", "--host-root", root, "-o", "name"); strings.TrimSpace(got) != "configmap/on-the-node" {
		t.Errorf("get with --host-root printed %q, want the node's ConfigMap", got)
	}
	want := "etcdscope: reading etcd of this kubeadm node, from /etc/kubernetes/manifests/kube-apiserver.yaml"
	if got := runOnTTY(t, "ls", "--host-root", root, "/registry/configmaps/"); got != want {
		t.Errorf("stderr on a terminal:\n%q\nwant\n%q", got, want)
	}
	// --endpoints, ETCDCTL_ENDPOINTS and --db win over what the node says.
	closed := fmt.Sprintf("127.0.0.1:%d", clitest.ClosedPort(t))
	if msg := runFails(t, "ls", "--host-root", root, "--endpoints", closed); !strings.Contains(msg, closed) {
		t.Errorf("--endpoints %s beside the node's manifest: %q, want the refusal of %[1]s", closed, msg)
	}
	if got := run(t, "ls", "--host-root", root, "--db", etcdviewtest.SaveSnapshot(t, e.Client(t)), "/registry/configmaps/default/"); !strings.Contains(got, "on-the-node") {
		t.Errorf("--db beside the node's manifest printed %q, want the snapshot's keys", got)
	}
	t.Setenv("ETCDCTL_ENDPOINTS", closed)
	if msg := runFails(t, "ls", "--host-root", root); !strings.Contains(msg, closed) {
		t.Errorf("ETCDCTL_ENDPOINTS=%s beside the node's manifest: %q, want the refusal of %[1]s", closed, msg)
	}
}

func TestANodesManifestThatCannotBeUsedIsTheCommandsError(t *testing.T) {
	stateDir(t)
	root := t.TempDir()
	clitest.WriteAPIServerManifest(t, root, "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: kube-apiserver\n")
	want := "Error: " + filepath.Join(root, "etc/kubernetes/manifests/kube-apiserver.yaml") + ` is not a Pod manifest (apiVersion "apps/v1", kind "Deployment")`
	dataDir := t.TempDir()
	for _, args := range [][]string{{"ls"}, {"get", "pods", "-A"}, {}} {
		if msg := runFails(t, append(args, "--host-root", root)...); msg != want {
			t.Errorf("etcdscope %s: %q, want %q", strings.Join(args, " "), msg, want)
		}
	}
	if entries, _ := os.ReadDir(dataDir); len(entries) != 0 {
		t.Errorf("a bundled cluster started in %s", dataDir)
	}
	if msg := runFails(t, "ls", "--host-root", t.TempDir()); !strings.Contains(msg, "no etcd found on this node") {
		t.Errorf("--host-root of an empty root: %q", msg)
	}
}

func TestEncryptionConfigTheNodeNamesDecryptsSecrets(t *testing.T) {
	stateDir(t)
	e, cli := tlsEtcd(t)
	config, key, stored := clitest.EncryptedSecret(t)
	if _, err := cli.Put(t.Context(), key, string(stored)); err != nil {
		t.Fatal(err)
	}
	root := clitest.KubeadmNode(t, e.Endpoint, e.TLS, config)
	get := []string{"get", "secret", "db", "--host-root", root, "-o", "jsonpath={.data.password}"}
	if got := run(t, append(get, "--show-secrets")...); got != "aHVudGVyMg==" { // base64 of hunter2, the Secret's password
		t.Errorf("the Secret with --show-secrets: %q, want it decrypted with the node's encryption config", got)
	}
	if got := run(t, get...); !strings.Contains(got, "bytes") || strings.Contains(got, "aHVudGVyMg") {
		t.Errorf("the Secret without --show-secrets: %q, want it masked", got)
	}
	// Without the node's config, the value stays what it is on disk.
	bare := clitest.KubeadmNode(t, e.Endpoint, e.TLS, "")
	if _, out, errOut := runCommand(t, "get", "secret", "db", "--host-root", bare, "-o", "yaml"); strings.Contains(out, "password") || !strings.Contains(errOut, `encrypted with aescbc key "key1"`) {
		t.Errorf("the Secret with no encryption config: %q, stderr %q, want it said encrypted with aescbc", out, errOut)
	}
}

func TestBundledWithASourceNamedIsRefused(t *testing.T) {
	root := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--bundled", "--endpoints", "127.0.0.1:1"}, "--bundled starts the bundled cluster: drop --endpoints"},
		{[]string{"--bundled", "--db", "x.db"}, "--bundled starts the bundled cluster: drop --db"},
		{[]string{"--bundled", "--host-root", root}, "--bundled starts the bundled cluster: drop --host-root"},
		{[]string{"serve", "--host-root", root}, "serve runs the bundled cluster: drop --host-root"},
		{[]string{"serve", "--db", "x.db"}, "serve runs the bundled cluster: drop --db"},
	} {
		if msg := runFails(t, c.args...); msg != "Error: "+c.want {
			t.Errorf("etcdscope %s: %q, want %q", strings.Join(c.args, " "), msg, c.want)
		}
	}
}

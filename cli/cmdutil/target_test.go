package cmdutil

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/cli/internal/clitest"
	"github.com/etcdscope/etcdscope/embedded"
	"github.com/etcdscope/etcdscope/embedded/controlplane"
	"github.com/etcdscope/etcdscope/embedded/etcdtest"
)

// TestNoFlagReadsTheBundledClusterThenTheNodeThenNothing follows the order
// a command with no connection flag takes: the bundled cluster that runs,
// the etcd the node's files name (at the default host root, which this
// test points at a root of its own), and none; --host-root given reads the
// node's whatever runs.
func TestNoFlagReadsTheBundledClusterThenTheNodeThenNothing(t *testing.T) {
	t.Setenv(controlplane.StateDirEnv, t.TempDir())
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	e := etcdtest.StartVersion(t, "3.6", etcdtest.Options{TLS: true})
	node := clitest.KubeadmNode(t, e.Endpoint, e.TLS, "")
	target := func(root string, args ...string) *Target {
		t.Helper()
		conn := parseConn(t, args, nil)
		if root != "" {
			conn.HostRoot = root
		}
		tg, err := conn.Target(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return tg
	}
	if tg := target(node); tg.Found == nil || tg.Kind != LiveSource || strings.Join(tg.Config.Endpoints, ",") != e.Endpoint ||
		tg.Config.CACert == "" || !strings.HasPrefix(tg.Config.CACert, node) {
		t.Fatalf("nothing runs, the node's files: %+v, want the node's etcd with its CA under the root", tg)
	}
	src, closeSrc, err := target(node).Open(ctx)
	if err != nil {
		t.Fatalf("the node's etcd: %v", err)
	}
	if _, err := src.Children(ctx, "/", 0); err != nil {
		t.Errorf("a read through the node's connection: %v", err)
	}
	closeSrc()

	cp, err := controlplane.Start(ctx, controlplane.Options{Cluster: embedded.Options{Members: 1, DataDir: t.TempDir()}, Announce: "etcdscope serve"})
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Close()
	if tg := target(node); tg.Bundled == nil || tg.Bundled.DataDir != cp.Cluster().DataDir() {
		t.Errorf("a bundled cluster runs: %+v, want it before the node's", tg)
	}
	if tg := target("", "--host-root", node); tg.Found == nil {
		t.Errorf("--host-root given while a bundled cluster runs: %+v, want the node's", tg)
	}
	bundled := parseConn(t, nil, nil)
	bundled.HostRoot, bundled.StartBundled = node, true
	if tg, err := bundled.Target(ctx); err != nil || tg.Kind != BundledSource {
		t.Errorf("the explorer's --bundled: %+v, %v; want the bundled cluster started whatever runs or is found", tg, err)
	}
	both := parseConn(t, []string{"--host-root", node, "--data-dir", cp.Cluster().DataDir()}, nil)
	if _, err := both.Target(ctx); err == nil || err.Error() != "--host-root reads the node's etcd and --data-dir the bundled cluster: give one" {
		t.Errorf("--host-root and --data-dir: %v", err)
	}
	cp.Close()
	if tg := target(t.TempDir()); tg.Kind != BundledSource || !errors.Is(tg.NoSource, ErrNoSource) {
		t.Errorf("nothing runs nor is on the node: %+v, want none, ErrNoSource", tg)
	}
}

// TestANodesOwnPrefixIsSaid: a kube-apiserver that stores under another
// --etcd-prefix is read (the keys are there), and the line that says what
// was found says that the screens read /registry.
func TestANodesOwnPrefixIsSaid(t *testing.T) {
	t.Setenv(controlplane.StateDirEnv, t.TempDir())
	tls, err := embedded.EnsureTLS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	node := clitest.KubeadmNode(t, "https://127.0.0.1:2379", tls, "")
	manifest := filepath.Join(node, "etc/kubernetes/manifests/kube-apiserver.yaml")
	b, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.Replace(b, []byte("    - --etcd-servers="), []byte("    - --etcd-prefix=/k8s\n    - --etcd-servers="), 1)
	if err := os.WriteFile(manifest, b, 0o600); err != nil {
		t.Fatal(err)
	}
	conn := parseConn(t, []string{"--host-root", node}, nil)
	tg, err := conn.Target(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := "etcd of this kubeadm node, from /etc/kubernetes/manifests/kube-apiserver.yaml (its kube-apiserver stores under --etcd-prefix=/k8s, which etcdscope's screens do not follow: give /k8s/ as the path)"
	if tg.Description != want || tg.said == nil || !strings.HasSuffix(tg.said.what, "give /k8s/ as the path)") {
		t.Errorf("what was found:\n%s\nsaid %q\nwant %s", tg.Description, tg.said.what, want)
	}
}

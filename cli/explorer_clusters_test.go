package cli

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/etcdscope/etcdscope/cli/cmdutil"
	"github.com/etcdscope/etcdscope/cli/internal/clitest"
	"github.com/etcdscope/etcdscope/etcdview/etcdviewtest"
	"github.com/etcdscope/etcdscope/ui"
	"github.com/spf13/cobra"
)

// explorerOn is the explorer's cluster list as runExplorer builds it for
// args, before the UI starts.
func explorerOn(t *testing.T, args ...string) *clusterList {
	t.Helper()
	root := &cobra.Command{Use: "etcdscope"}
	conn := cmdutil.PersistentConn(root)
	if err := root.ParseFlags(args); err != nil {
		t.Fatal(err)
	}
	if err := root.PersistentPreRunE(root, nil); err != nil {
		t.Fatal(err)
	}
	tg, err := conn.Target(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return &clusterList{ex: &explorer{conn: conn}, initial: tg, current: initialName(conn, tg)}
}

func TestClustersListTheConfigsTheNodesAndTheBundledAndOpenThePickedOne(t *testing.T) {
	stateDir(t)
	e, cli := tlsEtcd(t)
	snapshot := etcdviewtest.SaveSnapshot(t, cli)
	etcdviewtest.Put(t, cli, etcdviewtest.ConfigMap("after-the-snapshot"))
	clitest.UserConfig(t, fmt.Sprintf("clusters:\n- name: last-night\n  db: %s\n- name: guarded\n  endpoints: [%s]\n  user: root\n", snapshot, e.Endpoint))
	node := clitest.KubeadmNode(t, e.Endpoint, e.TLS, "")
	c := explorerOn(t, "--host-root", node)
	ctx := t.Context()
	list := func() string {
		t.Helper()
		l, err := c.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var rows []string
		for _, cl := range l {
			mark := " "
			if cl.Current {
				mark = "*"
			}
			rows = append(rows, mark+cl.Name+": "+cl.What)
		}
		return strings.Join(rows, "\n")
	}
	nodeLine := "etcd of this kubeadm node, from /etc/kubernetes/manifests/kube-apiserver.yaml"
	want := " last-night: data file " + snapshot + "\n guarded: etcd at " + e.Endpoint + "\n*node: " + nodeLine + "\n bundled: start the bundled cluster"
	if got := list(); got != want {
		t.Errorf("the list:\n%s\nwant\n%s", got, want)
	}
	opts, closeFn, err := c.Open(ctx, "last-night")
	if err != nil {
		t.Fatal(err)
	}
	if opts.Description != "cluster last-night: data file "+snapshot || opts.Clusters != ui.Clusters(c) || keysBelow(t, ctx, opts, "/registry/configmaps/default/") != "on-the-node" {
		t.Errorf("last-night opened as %q, with %q", opts.Description, keysBelow(t, ctx, opts, "/registry/configmaps/default/"))
	}
	closeFn()
	if got := list(); !strings.Contains(got, "*last-night") || strings.Contains(got, "*node") {
		t.Errorf("after the switch, the list marks\n%s", got)
	}
	opts, closeFn, err = c.Open(ctx, "node")
	if err != nil {
		t.Fatal(err)
	}
	if opts.Description != nodeLine || keysBelow(t, ctx, opts, "/registry/configmaps/default/") != "after-the-snapshot on-the-node" {
		t.Errorf("node opened as %q", opts.Description)
	}
	closeFn()
	// The UI holds the terminal: a password is not asked for there.
	if _, _, err := c.Open(ctx, "guarded"); err == nil || !strings.Contains(err.Error(), `no password for user "root"`) {
		t.Errorf("a cluster whose user needs a password: %v", err)
	}
	if _, _, err := c.Open(ctx, "staging"); err == nil || !strings.Contains(err.Error(), "it names last-night, guarded") {
		t.Errorf("an unknown name: %v", err)
	}
	// A bundled cluster that runs is the one offered, and attached to.
	cp := announced(t, "/registry/configmaps/default/served", "v")
	served := fmt.Sprintf("the bundled cluster in %s (pid %d, started by etcdscope serve)", cp.Cluster().DataDir(), os.Getpid())
	if got := list(); !strings.Contains(got, " bundled: "+served) {
		t.Errorf("a bundled cluster runs, the list:\n%s", got)
	}
	opts, closeFn, err = c.Open(ctx, "bundled")
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	if opts.Description != served || opts.Members != nil || keysBelow(t, ctx, opts, "/registry/configmaps/default/") != "served" {
		t.Errorf("bundled opened as %q, members %v", opts.Description, opts.Members)
	}
}

// keysBelow are the names of the keys below prefix in the source of opts.
func keysBelow(t *testing.T, ctx context.Context, opts ui.Options, prefix string) string {
	t.Helper()
	level, err := opts.Source.Children(ctx, prefix, 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range level.Children {
		names = append(names, c.Name)
	}
	return strings.Join(names, " ")
}

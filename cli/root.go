package cli

import (
	"os"

	"github.com/etcdscope/etcdscope/cli/cmdutil"
	"github.com/etcdscope/etcdscope/cli/get"
	"github.com/etcdscope/etcdscope/demo"
	"github.com/etcdscope/etcdscope/ui"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Kubernetes' component packages linked in for the bundled control plane
// register flags of their own on pflag's global set at init (verflag's
// --version, of a type of its own, among them), and cobra merges that set
// into every command. The commands here take only their own flags; the
// in-process components parse theirs from flag sets of their own
// (embedded/kube). Packages init before this one, so the set is replaced
// after they have written to it.
func init() {
	pflag.CommandLine = pflag.NewFlagSet("etcdscope", pflag.ContinueOnError)
}

// newRoot is the command tree: the root command runs the TUI, and every
// subcommand shares the connection flags.
func newRoot() *cobra.Command {
	var flags explorerFlags
	root := &cobra.Command{
		Use:   "etcdscope",
		Short: "Explore the Kubernetes cluster state stored in etcd",
		Long: `etcdscope shows what Kubernetes really stores in etcd: the /registry key tree,
each value decoded into metadata, spec and status, live watch events, and the
revision history of an object.

With --endpoints (or ETCDCTL_ENDPOINTS) it reads a live etcd or kine and
never writes to it; with --db it reads an offline data file (etcd's, or
kine's SQLite state.db); with --cluster NAME a cluster named in
${XDG_CONFIG_HOME:-~/.config}/etcdscope/config.yaml.
With no connection flags it reads, in this order: the bundled cluster that
runs (etcdscope serve); the etcd this node's kube-apiserver uses, as its
static pod manifest says (kubeadm, RKE2), etcd's own manifest, or k3s'
files (under --host-root); and else it starts its own bundled etcd cluster
with Kubernetes' own control plane in front of it (kube-apiserver,
kube-controller-manager and kube-scheduler; kubeconfig in the data dir), and
simulated kubelets and add-ons whose scripted load keeps writes flowing
(--demo). It says which in the header.`,
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		// execute prints the error, one line, unless it is the Ctrl-C the
		// user just pressed.
		SilenceErrors: true,
		Version:       versionText(),
	}
	root.SetVersionTemplate("{{.Version}}")
	conn := cmdutil.PersistentConn(root)
	root.Flags().Int64Var(&flags.rev, "rev", 0, "open the explorer as of this revision, as :rev does (:rev head returns to the newest)")
	root.Flags().BoolVar(&flags.bundled, "bundled", false, "start the bundled cluster even when one runs already or the node's etcd is found")
	root.Flags().IntVar(&flags.tailBuffer, "tail-buffer", ui.DefaultTailBuffer, "events the tail keeps; older ones are dropped, and counted in the header")
	root.Flags().StringVar(&flags.record, "record", "", "record what the explorer watches into FILE while it runs, as etcdscope record does (a live source only: the cluster it opened first, whichever :ctx shows)")
	flags.bundledFlags.register(root.Flags(), bundledUsage{
		demo:       demo.Calm,
		members:    "members of the bundled etcd cluster (default 3, or as many as --data-dir holds)",
		load:       "bundled mode: the simulated kubelets' and add-ons' scripted load, calm, busy, or off (the control plane only, nothing simulated)",
		demoNodes:  "bundled mode: simulated nodes, a kubelet each",
		compaction: "bundled mode: how often kube-apiserver compacts etcd's history (its --etcd-compaction-interval); 0 turns it off",
	})
	conn.Decoding.Register(root.Flags())
	root.RunE = func(cmd *cobra.Command, _ []string) error {
		return runExplorer(cmd.Context(), conn, flags)
	}
	root.AddCommand(newServeCmd(conn), newDecodeCmd(), newLsCmd(conn), get.NewCmd(conn), newHistoryCmd(conn), newWatchCmd(conn), newStatusCmd(conn), newDuCmd(conn))
	root.AddCommand(newOwnersCmd(conn))
	root.AddCommand(newChangesCmd(conn))
	root.AddCommand(newCheckCmd(conn))
	root.AddCommand(newRestoreCmd(conn))
	root.AddCommand(newRecordCmd(conn))
	nameAfter(root, os.Args[0])
	return root
}

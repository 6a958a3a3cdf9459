// Command etcdscope explores the Kubernetes cluster state stored in etcd: a
// terminal UI and a scriptable CLI over a live etcd, an offline data file, or
// its own bundled cluster.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := newCLI().root.ExecuteContext(ctx)
	stop()
	if err != nil {
		os.Exit(1)
	}
}

// cli is the command tree and the connection flags every command shares.
type cli struct {
	root *cobra.Command
	conn *connFlags
}

func newCLI() *cli {
	var members int
	root := &cobra.Command{
		Use:   "etcdscope",
		Short: "Explore the Kubernetes cluster state stored in etcd",
		Long: `etcdscope shows what Kubernetes really stores in etcd: the /registry key tree,
each value decoded into metadata, spec and status, live watch events, and the
revision history of an object.

With no connection flags it starts its own bundled etcd cluster. With
--endpoints (or ETCDCTL_ENDPOINTS) it reads a live etcd and never writes to it;
with --db it reads an offline etcd data file.`,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: false,
	}
	conn := persistentConn(root)
	root.Flags().IntVar(&members, "members", 3, "members of the bundled etcd cluster")
	root.RunE = func(cmd *cobra.Command, _ []string) error {
		return runExplorer(cmd.Context(), conn, members)
	}
	root.AddCommand(newServeCmd(conn), newDecodeCmd(), newLsCmd(conn), newGetCmd(conn), newHistoryCmd(conn), newWatchCmd(conn), newStatusCmd(conn))
	return &cli{root: root, conn: conn}
}

// Command etcdscope explores the Kubernetes cluster state stored in etcd: a
// terminal UI and a scriptable CLI over a live etcd, an offline data file, or
// its own bundled cluster.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	"github.com/etcdscope/etcdscope/demo"
	"github.com/etcdscope/etcdscope/ui"
	"github.com/spf13/cobra"
	"google.golang.org/grpc/grpclog"
	"k8s.io/klog/v2"
)

func main() {
	quietLibraryLogs()
	ctx, cancel := context.WithCancel(context.Background())
	sig := onSignals(cancel)
	cmd, err := newCLI().root.ExecuteContextC(ctx)
	cancel()
	interrupted := sig.Load() != nil && errors.Is(err, context.Canceled)
	if err != nil && !interrupted {
		fmt.Fprintln(os.Stderr, "Error:", err)
	}
	os.Exit(exitCode(cmd, err, sig.Load()))
}

// onSignals cancels the commands' context on the first SIGINT or SIGTERM, so
// that a command ends at its next read or write, and exits at once on the
// second: a user who presses Ctrl-C again is done waiting. The signal is
// returned for the exit status.
func onSignals(cancel context.CancelFunc) *atomic.Pointer[syscall.Signal] {
	var got atomic.Pointer[syscall.Signal]
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := (<-ch).(syscall.Signal)
		got.Store(&s)
		cancel()
		s = (<-ch).(syscall.Signal)
		os.Exit(128 + int(s))
	}()
	return &got
}

// stopsOnSignal marks a command, such as serve, for which a signal is the
// way to end it: it exits 0 when it stopped cleanly.
const stopsOnSignal = "etcdscope/stops-on-signal"

// exitCode is the shell's convention: 128 + the signal that ended the
// command (130 for Ctrl-C), 1 for an error, 0 otherwise.
func exitCode(cmd *cobra.Command, err error, sig *syscall.Signal) int {
	switch {
	case sig != nil && (err != nil || cmd == nil || cmd.Annotations[stopsOnSignal] == ""):
		return 128 + int(*sig)
	case err != nil:
		return 1
	}
	return 0
}

// quietLibraryLogs keeps the logs of gRPC and of the Kubernetes libraries
// (klog; k8s.io/apiserver's etcd3 package routes gRPC's logs there) off the
// terminal: the TUI draws on it, and a CLI's stderr is for its own errors.
// The failures they report reach the user as the errors of the calls.
func quietLibraryLogs() {
	grpclog.SetLoggerV2(grpclog.NewLoggerV2(io.Discard, io.Discard, io.Discard))
	klog.LogToStderr(false)
	klog.SetOutput(io.Discard)
}

// cli is the command tree and the connection flags every command shares.
type cli struct {
	root *cobra.Command
	conn *connFlags
}

func newCLI() *cli {
	var flags explorerFlags
	root := &cobra.Command{
		Use:   "etcdscope",
		Short: "Explore the Kubernetes cluster state stored in etcd",
		Long: `etcdscope shows what Kubernetes really stores in etcd: the /registry key tree,
each value decoded into metadata, spec and status, live watch events, and the
revision history of an object.

With no connection flags it starts its own bundled etcd cluster, the
built-in Kubernetes API server in front of it (kubeconfig in the data dir),
and a simulated control plane that keeps writes flowing (--demo). With
--endpoints (or ETCDCTL_ENDPOINTS) it reads a live etcd and never writes to it;
with --db it reads an offline etcd data file.`,
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		// main prints the error, one line, unless it is the Ctrl-C the
		// user just pressed.
		SilenceErrors: true,
		Version:       versionText(),
	}
	root.SetVersionTemplate("{{.Version}}")
	conn := persistentConn(root)
	root.Flags().IntVar(&flags.members, "members", 0, "members of the bundled etcd cluster (default 3, or as many as --data-dir holds)")
	root.Flags().IntVar(&flags.tailBuffer, "tail-buffer", ui.DefaultTailBuffer, "events the tail keeps; older ones are dropped, and counted in the header")
	root.Flags().StringVar(&flags.demo, "demo", string(demo.Calm), "bundled mode: the simulated control plane's load, calm, busy, or off (API server only)")
	root.Flags().IntVar(&flags.demoNodes, "demo-nodes", 3, "bundled mode: nodes (kubelets) of the simulated control plane")
	conn.decoding.register(root.Flags())
	root.RunE = func(cmd *cobra.Command, _ []string) error {
		return runExplorer(cmd.Context(), conn, flags)
	}
	root.AddCommand(newServeCmd(conn), newDecodeCmd(), newLsCmd(conn), newGetCmd(conn), newHistoryCmd(conn), newWatchCmd(conn), newStatusCmd(conn))
	return &cli{root: root, conn: conn}
}

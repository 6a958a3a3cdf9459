// Package cli is etcdscope's command line: the root command (the TUI), one
// file per subcommand, the connection flags they share, the one printer
// behind every -o, and the exit status.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	"github.com/spf13/cobra"
	"google.golang.org/grpc/grpclog"
	"k8s.io/klog/v2"
)

// Main runs the command line of this process and returns its exit status.
func Main() int {
	quietLibraryLogs()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	return execute(ctx, newRoot(), onSignals(cancel))
}

// execute runs root and returns the exit status. It prints the error, one
// line, to root's stderr, unless it is the Ctrl-C the user just pressed.
func execute(ctx context.Context, root *cobra.Command, sig *atomic.Pointer[syscall.Signal]) int {
	cmd, err := root.ExecuteContextC(ctx)
	interrupted := sig.Load() != nil && errors.Is(err, context.Canceled)
	if err != nil && !interrupted {
		fmt.Fprintln(root.ErrOrStderr(), "Error:", err)
	}
	return exitCode(cmd, err, sig.Load())
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

// Package cli is etcdscope's command line: the root command (the TUI), one
// file or package (get) per subcommand, and the exit status; what the
// commands share (the connection flags, the one printer behind every -o) is
// cli/cmdutil.
package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/etcdscope/etcdscope/cli/cmdutil"
	"github.com/etcdscope/etcdscope/cli/internal/initheap"
	"github.com/etcdscope/etcdscope/decode"
	"github.com/spf13/cobra"
	"google.golang.org/grpc/grpclog"
	"k8s.io/klog/v2"
)

// The collector is off while the packages below initialize (see initheap):
// cli's init runs after theirs, in the binary and in its tests alike.
func init() { initheap.Restore() }

// Main runs the command line of this process and returns its exit status.
func Main() int {
	quietLibraryLogs()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	root := newRoot()
	return execute(ctx, root, onSignals(cancel, graceFor(root, os.Args[1:])))
}

// execute runs root and returns the exit status. It prints the error, one
// line, to root's stderr, unless a signal ended the command: whatever it
// failed with then (a dial's "context canceled", gRPC's Canceled status) is
// the signal's doing, and the README promises no message. On a terminal the
// line is inert: errors quote keys and kinds read from etcd.
func execute(ctx context.Context, root *cobra.Command, sig *atomic.Pointer[syscall.Signal]) int {
	cmd, err := root.ExecuteContextC(ctx)
	if err != nil && sig.Load() == nil {
		line := "Error: " + err.Error()
		if cmdutil.IsTerminal(root.ErrOrStderr()) {
			line = decode.Inert(line)
		}
		fmt.Fprintln(root.ErrOrStderr(), line)
	}
	return exitCode(cmd, err, sig.Load())
}

// The time a command has to end after the first signal cancelled its
// context, before the process exits without it: a write to a pipe nobody
// reads never returns, nor does a read of a device. Commands that stop a
// cluster of their own (serve, the explorer's bundled one) have longer, to
// stop it cleanly.
const (
	signalGrace        = time.Second
	clusterSignalGrace = 30 * time.Second
)

// graceFor is the grace of the command args name.
func graceFor(root *cobra.Command, args []string) time.Duration {
	cmd, _, err := root.Find(args)
	if err == nil && (cmd == root || cmd.Annotations[stopsOnSignal] != "") {
		return clusterSignalGrace
	}
	return signalGrace
}

// onSignals cancels the commands' context on the first SIGINT or SIGTERM, so
// that a command ends at its next read or write, and exits with the
// signal's status when the command has not returned within grace, or at
// once on a second signal: a user who presses Ctrl-C again is done waiting.
// The signal is returned for the exit status.
func onSignals(cancel context.CancelFunc, grace time.Duration) *atomic.Pointer[syscall.Signal] {
	var got atomic.Pointer[syscall.Signal]
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := (<-ch).(syscall.Signal)
		got.Store(&s)
		cancel()
		select {
		case second := <-ch:
			s = second.(syscall.Signal)
		case <-time.After(grace):
		}
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

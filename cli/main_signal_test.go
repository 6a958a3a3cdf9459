package cli

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/embedded/etcdtest"
	"github.com/etcdscope/etcdscope/etcdview/etcdviewtest"
	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// waitFor polls cond until it holds, failing the test after d.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(d); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, d)
		}
	}
}

// exitWithin waits for cmd to end within d and returns its exit status.
func exitWithin(t *testing.T, cmd *exec.Cmd, d time.Duration) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatal(err)
		}
		return cmd.ProcessState.ExitCode()
	case <-time.After(d):
		cmd.Process.Kill()
		t.Fatalf("etcdscope %s still runs %v after one signal", strings.Join(cmd.Args[1:], " "), d)
		return 0
	}
}

// TestOneSignalEndsAWriteNobodyReads: get -o yaml blocked on a pipe whose
// reader never reads ends on one SIGTERM, with status 143 and no message.
func TestOneSignalEndsAWriteNobodyReads(t *testing.T) {
	c, cli := etcdtest.StartBundled(t, 1)
	for i := range 40 {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("big-%02d", i), Namespace: "default"},
			Data: map[string]string{"v": strings.Repeat("x", 8<<10)}}
		etcdviewtest.Put(t, cli, cm)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd := etcdscope(append(tlsFlags(c.TLS()), "--endpoints", strings.Join(cli.Endpoints(), ","), "get", "cm", "-n", "default", "-o", "yaml"))
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = w, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	// The pipe holds 64 KiB; the YAML is over 320: once it is full, the
	// write blocks for good. TIOCINQ is FIONREAD: what the pipe holds.
	waitFor(t, 30*time.Second, "the pipe filled", func() bool {
		n, err := unix.IoctlGetInt(int(r.Fd()), unix.TIOCINQ)
		return err == nil && n >= 64<<10
	})
	cmd.Process.Signal(syscall.SIGTERM)
	if code := exitWithin(t, cmd, 10*time.Second); code != 128+int(syscall.SIGTERM) || stderr.Len() != 0 {
		t.Errorf("exit status %d, stderr %q: want 143 and nothing", code, stderr.String())
	}
}

// TestCtrlCDuringADialSaysNothing: SIGINT while the dial waits on an etcd
// that accepts and never answers ends with status 130 and no message.
func TestCtrlCDuringADialSaysNothing(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var accepted atomic.Int32
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			defer c.Close()
		}
	}()
	cmd := etcdscope([]string{"--endpoints", l.Addr().String(), "--dial-timeout", "60s", "ls", "/registry/"})
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the dial reached the listener", func() bool { return accepted.Load() > 0 })
	cmd.Process.Signal(syscall.SIGINT)
	if code := exitWithin(t, cmd, 10*time.Second); code != 130 || stderr.Len() != 0 {
		t.Errorf("exit status %d, stderr %q: want 130 and nothing", code, stderr.String())
	}
}

// TestTheErrorLineIsInertOnATerminal: an error quoting what etcd holds
// reaches a terminal with its escape sequences as visible text, and a pipe
// as it is.
func TestTheErrorLineIsInertOnATerminal(t *testing.T) {
	const key = "/registry/configmaps/default/\x1b]0;x\x07"
	fail := func() *cobra.Command {
		return &cobra.Command{Use: "fail", SilenceErrors: true, SilenceUsage: true,
			RunE: func(*cobra.Command, []string) error { return fmt.Errorf("get %s: not found", key) }}
	}
	master, tty := openPTY(t)
	root := fail()
	root.SetArgs([]string{})
	root.SetErr(tty)
	if code := execute(t.Context(), root, new(atomic.Pointer[syscall.Signal])); code != 1 {
		t.Errorf("exit status %d, want 1", code)
	}
	buf := make([]byte, 4096)
	n, err := master.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.TrimSpace(string(buf[:n])), `Error: get /registry/configmaps/default/\x1b]0;x\x07: not found`; got != want {
		t.Errorf("the terminal got %q, want %q", got, want)
	}
	var pipe bytes.Buffer
	root = fail()
	root.SetArgs([]string{})
	root.SetErr(&pipe)
	execute(t.Context(), root, new(atomic.Pointer[syscall.Signal]))
	if want := "Error: get " + key + ": not found\n"; pipe.String() != want {
		t.Errorf("a pipe got %q, want %q", pipe.String(), want)
	}
}

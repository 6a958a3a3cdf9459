package cli

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"github.com/etcdscope/etcdscope/cli/internal/clitest"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/embedded/controlplane"
	"github.com/etcdscope/etcdscope/embedded/etcdtest"
	"github.com/etcdscope/etcdscope/etcdview/etcdviewtest"
	"github.com/spf13/cobra"
)

// runMainEnv makes the test binary behave as the etcdscope binary, so that
// the tests that need a process of its own (signals, exit statuses, what
// reaches the real stderr, the TUI in tmux) run Main without a separate
// build.
const runMainEnv = "ETCDSCOPE_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		os.Exit(Main())
	}
	quietLibraryLogs()
	// Commands run in-process read the environment: the caller's ETCDCTL_*
	// variables would point them at the caller's etcd.
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, "ETCDCTL_") {
			os.Unsetenv(name)
		}
	}
	// The clusters the tests start announce themselves here, where the
	// user's commands do not look, and the commands the tests run find
	// none of the user's.
	dir, err := os.MkdirTemp("", "etcdscope-state-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv(controlplane.StateDirEnv, dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// runCommand runs etcdscope args in-process, as Main does but on buffers
// and the test's context, and returns the exit status and both streams.
func runCommand(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	root := newRoot()
	var out, errOut bytes.Buffer
	root.SetArgs(append([]string{}, args...)) // nil would make cobra read os.Args
	root.SetIn(strings.NewReader(""))
	root.SetOut(&out)
	root.SetErr(&errOut)
	code = executeInProcess(t, root)
	return code, out.String(), errOut.String()
}

// inProcess is held by the command that runs in the test process: one at a
// time. get, check members and record set the process's GC percent and
// memory limit (debug.SetMemoryLimit) for their run and put back what they
// found; two at once, in tests running in parallel, could put back each
// other's values and leave the whole test process under a command's limit.
var inProcess sync.Mutex

// executeInProcess runs root as Main does, on the test's context.
func executeInProcess(t *testing.T, root *cobra.Command) int {
	inProcess.Lock()
	defer inProcess.Unlock()
	return execute(t.Context(), root, new(atomic.Pointer[syscall.Signal]))
}

// run runs etcdscope in-process and returns its stdout, failing on a
// non-zero exit status.
func run(t *testing.T, args ...string) string {
	t.Helper()
	code, out, errOut := runCommand(t, args...)
	if code != 0 {
		t.Fatalf("etcdscope %s: exit status %d\n%s", strings.Join(args, " "), code, errOut)
	}
	return out
}

// runFails runs etcdscope in-process expecting exit status 1 with one line
// of error, and returns that line.
func runFails(t *testing.T, args ...string) string {
	t.Helper()
	code, _, errOut := runCommand(t, args...)
	if code != 1 {
		t.Fatalf("etcdscope %s: exit status %d, want 1; stderr:\n%s", strings.Join(args, " "), code, errOut)
	}
	msg := strings.TrimSpace(errOut)
	if !strings.HasPrefix(msg, "Error: ") || strings.Contains(msg, "\n") || strings.Contains(msg, "goroutine ") {
		t.Errorf("stderr is not one line of error:\n%s", msg)
	}
	return msg
}

// etcdscope starts Main in a process of its own with args, in an
// environment without the caller's ETCDCTL_* variables plus env.
func etcdscope(args []string, env ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ETCDCTL_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, runMainEnv+"=1")
	cmd.Env = append(cmd.Env, env...)
	return cmd
}

// startLines starts Main in a process of its own with args and hands over
// its stdout a line at a time, as the lines come; stderr collects what it
// writes there. The process is killed when the test ends.
func startLines(t *testing.T, args ...string) (cmd *exec.Cmd, lines <-chan string, stderr *bytes.Buffer) {
	t.Helper()
	cmd = etcdscope(args)
	stderr = new(bytes.Buffer)
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ended := make(chan struct{})
	t.Cleanup(func() { close(ended); cmd.Process.Kill(); cmd.Wait() })
	ch := make(chan string)
	go func() {
		defer close(ch)
		for sc := bufio.NewScanner(stdout); sc.Scan(); {
			select {
			case ch <- sc.Text():
			case <-ended:
				return
			}
		}
	}()
	return cmd, ch, stderr
}

// silentListener accepts TCP connections (the kernel completes the handshake)
// and never answers: an etcd that hangs.
func silentListener(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l.Addr().String()
}

func TestUnreachableEndpointFailsWithinDialTimeout(t *testing.T) {
	refused := fmt.Sprintf("127.0.0.1:%d", clitest.ClosedPort(t))
	silent := silentListener(t)
	tests := []struct {
		name      string
		args      []string
		env       []string
		wantParts []string
	}{
		{"refused flag", []string{"--endpoints", refused}, nil, []string{refused, "connection refused"}},
		{"refused from ETCDCTL_ENDPOINTS", nil, []string{"ETCDCTL_ENDPOINTS=" + refused}, []string{refused, "connection refused"}},
		{"silent server", []string{"--endpoints", silent, "--dial-timeout", "1s"}, nil, []string{silent, "no answer within the dial timeout"}},
		{"silent server, timeout from ETCDCTL_DIAL_TIMEOUT", []string{"--endpoints", silent}, []string{"ETCDCTL_DIAL_TIMEOUT=1s"}, []string{silent, "no answer within the dial timeout"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cmd := etcdscope(tc.args, tc.env...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			start := time.Now()
			err := cmd.Run()
			elapsed := time.Since(start)
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 1 {
				t.Fatalf("exit: %v, want status 1; stderr:\n%s", err, stderr.String())
			}
			// The dial timeout here is at most 1s (refused fails at once);
			// the rest is process start-up on a busy machine.
			if elapsed > 6*time.Second {
				t.Errorf("took %v to give up", elapsed)
			}
			msg := stderr.String()
			for _, want := range tc.wantParts {
				if !strings.Contains(msg, want) {
					t.Errorf("stderr %q does not name %q", msg, want)
				}
			}
			if strings.Contains(msg, "goroutine ") || strings.Count(strings.TrimSpace(msg), "\n") > 0 {
				t.Errorf("stderr is not one line of error:\n%s", msg)
			}
		})
	}
}

func TestSourceFlagsConflict(t *testing.T) {
	for _, args := range [][]string{
		{"--endpoints", "127.0.0.1:2379", "--db", "x.db"},
		{"serve", "--endpoints", "127.0.0.1:2379", "--db", "x.db"},
	} {
		if msg := runFails(t, args...); !strings.Contains(msg, "give one") {
			t.Errorf("%s: %q; want the conflict refused", strings.Join(args, " "), msg)
		}
	}
}

func TestVersionNamesWhatItIsBuiltWith(t *testing.T) {
	out := run(t, "--version")
	for _, want := range []string{"etcdscope ", "go: go1.", "etcd client: 3.", "kubernetes: v1."} {
		if !strings.Contains(string(out), want) {
			t.Errorf("--version printed\n%s\nwant a line with %q", out, want)
		}
	}
}

func TestLibraryLogsStayOffStderr(t *testing.T) {
	t.Parallel()
	c, cli := etcdtest.StartBundled(t, 3)
	etcdviewtest.PutKeys(t, cli, []string{"/registry/configmaps/default/a"}, "v")
	if err := c.StopMember(0); err != nil {
		t.Fatal(err)
	}
	// gRPC reports the stopped member's refused connections through its
	// global logger; they must not reach the terminal.
	endpoints := strings.Join(c.Endpoints(), ",")
	for _, args := range [][]string{
		{"ls", "/registry/configmaps/default/"},
		{"get", "/registry/configmaps/default/a"},
		{"status"},
	} {
		cmd := etcdscope(append(append(args, "--endpoints", endpoints), tlsFlags(c.TLS())...))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("etcdscope %s: %v\n%s", args[0], err, stderr.String())
		}
		if strings.Contains(stderr.String(), "grpc") || strings.Contains(stderr.String(), "addrConn") {
			t.Errorf("etcdscope %s wrote library logs to stderr:\n%s", args[0], stderr.String())
		}
	}
}

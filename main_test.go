package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/etcdview/etcdviewtest"
)

// runMainEnv makes the test binary behave as the etcdscope binary, so that
// process tests run the real main without a separate build.
const runMainEnv = "ETCDSCOPE_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		main()
		os.Exit(0)
	}
	quietLibraryLogs()
	os.Exit(m.Run())
}

// etcdscope starts the real main with args, in an environment without the
// caller's ETCDCTL_* variables plus env.
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

// closedPort is a loopback port nothing listens on.
func closedPort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port
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
	refused := fmt.Sprintf("127.0.0.1:%d", closedPort(t))
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
		cmd := etcdscope(args)
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "give one") {
			t.Errorf("%s: err %v, output %q; want the conflict refused", strings.Join(args, " "), err, out)
		}
	}
}

func TestVersionNamesWhatItIsBuiltWith(t *testing.T) {
	out, err := etcdscope([]string{"--version"}).Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"etcdscope ", "go: go1.", "etcd client: 3.", "kubernetes: v1."} {
		if !strings.Contains(string(out), want) {
			t.Errorf("--version printed\n%s\nwant a line with %q", out, want)
		}
	}
}

// serveProcess is a running `etcdscope serve`.
type serveProcess struct {
	cmd     *exec.Cmd
	export  string // the line it printed for a shell
	dataDir string
}

var dataDirLine = regexp.MustCompile(`data in (.+), etcd logs`)

func startServe(t *testing.T, args ...string) *serveProcess {
	t.Helper()
	cmd := etcdscope(append([]string{"serve"}, args...))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })

	type lines struct{ out, err string }
	got := make(chan lines, 1)
	go func() {
		out, _ := bufio.NewReader(stdout).ReadString('\n')
		errLine, _ := bufio.NewReader(stderr).ReadString('\n')
		got <- lines{out, errLine}
		io.Copy(io.Discard, stderr)
	}()
	var l lines
	select {
	case l = <-got:
	case <-time.After(60 * time.Second):
		t.Fatal("serve printed no export line within 60s")
	}
	export := strings.TrimSpace(l.out)
	if !strings.HasPrefix(export, "export ETCDCTL_ENDPOINTS=") {
		t.Fatalf("serve's first line %q is not an export line", l.out)
	}
	m := dataDirLine.FindStringSubmatch(l.err)
	if m == nil {
		t.Fatalf("serve's status line %q names no data dir", l.err)
	}
	return &serveProcess{cmd: cmd, export: export, dataDir: m[1]}
}

// stop sends SIGTERM and returns the exit status.
func (p *serveProcess) stop(t *testing.T) int {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case <-done:
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(30 * time.Second):
		t.Fatal("serve still running 30s after SIGTERM")
		return -1
	}
}

// etcdctl runs bin with args in a shell that first evaluates exportLine, as
// a user pastes serve's line and then runs etcdctl.
func etcdctl(t *testing.T, bin, exportLine string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	script := exportLine + `; exec "$0" "$@"`
	cmd := exec.CommandContext(ctx, "bash", append([]string{"-c", script, bin}, args...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "ETCDCTL_API=3"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("etcdctl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func TestLibraryLogsStayOffStderr(t *testing.T) {
	c, cli := etcdviewtest.StartCluster(t, 3)
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
		cmd := etcdscope(append(args, "--endpoints", endpoints))
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

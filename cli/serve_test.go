package cli

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/embedded/etcdtest"
)

func TestServeWithDebianEtcdctl(t *testing.T) {
	bin := etcdtest.Etcdctl(t)
	kept := filepath.Join(t.TempDir(), "data dir")
	tests := []struct {
		name     string
		args     []string
		keepData bool
	}{
		{"temporary data", nil, false},
		{"tls and data dir", []string{"--tls", "--data-dir", kept, "--members", "1"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := startServe(t, tc.args...)
			if tc.keepData && !strings.Contains(p.export, "ETCDCTL_CACERT=") {
				t.Fatalf("TLS export line lacks the certificate variables: %s", p.export)
			}
			etcdctl(t, bin, p.export, "put", "/registry/serve-test", "hello")
			if got := etcdctl(t, bin, p.export, "get", "/registry/serve-test", "--print-value-only"); got != "hello" {
				t.Errorf("etcdctl read %q back, want hello", got)
			}
			if code := p.stop(t); code != 0 {
				t.Errorf("serve exited %d after SIGTERM, want 0", code)
			}
			_, err := os.Stat(p.dataDir)
			if tc.keepData && err != nil {
				t.Errorf("--data-dir removed on exit: %v", err)
			}
			if !tc.keepData && !errors.Is(err, os.ErrNotExist) {
				t.Errorf("temporary data dir %s left on exit (stat: %v)", p.dataDir, err)
			}
		})
	}
}

func TestServeWithAPIServerAndKubectl(t *testing.T) {
	const kubectl = "/usr/bin/kubectl"
	if _, err := os.Stat(kubectl); err != nil {
		if os.Getenv("ETCDSCOPE_REQUIRE_KUBECTL") == "1" {
			t.Fatalf("kubectl required (ETCDSCOPE_REQUIRE_KUBECTL=1): %v", err)
		}
		t.Skip("no kubectl")
	}
	p := startServe(t, "--apiserver", "--members", "1")
	i := strings.Index(p.export, " KUBECONFIG=")
	if i < 0 {
		t.Fatalf("export line names no KUBECONFIG: %s", p.export)
	}
	kubeconfig := p.export[i+len(" KUBECONFIG="):]
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, kubectl, "--kubeconfig", kubeconfig, "--cache-dir", t.TempDir(), "get", "namespaces", "-o", "name")
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "namespace/default") {
		t.Errorf("kubectl get namespaces: %v\n%s", err, out)
	}
	if code := p.stop(t); code != 0 {
		t.Errorf("serve exited %d after SIGTERM, want 0", code)
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

package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/embedded"
	"github.com/etcdscope/etcdscope/embedded/etcdtest"
)

func TestServeWithDebianEtcdctl(t *testing.T) {
	t.Parallel()
	bin := etcdtest.Etcdctl(t)
	kept := filepath.Join(t.TempDir(), "data dir")
	tests := []struct {
		name     string
		args     []string
		keepData bool
	}{
		{"temporary data", nil, false},
		{"data dir, --tls as scripts pass it", []string{"--tls", "--data-dir", kept, "--members", "1"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := startServe(t, tc.args...)
			if tc.keepData && !strings.Contains(p.notices, "--tls has been deprecated, TLS is always on") {
				t.Errorf("serve --tls did not say TLS is always on; it said %q", p.notices)
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
	t.Parallel()
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
	cmd       *exec.Cmd
	export    string // the line it printed for a shell
	endpoints string // the line's ETCDCTL_ENDPOINTS
	dataDir   string
	notices   string             // what it wrote to stderr before its status line
	tls       *embedded.TLSFiles // the client certificate the line names
	exited    chan struct{}      // closed when the process has been waited for
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
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	// SIGTERM first, so that serve removes the data dir it made (about
	// 120 MB); SIGKILL only if it does not end.
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	})

	type lines struct{ out, err, before string }
	got := make(chan lines, 1)
	go func() {
		out, _ := bufio.NewReader(stdout).ReadString('\n')
		// A deprecated flag's notice comes before the status line.
		var before strings.Builder
		r := bufio.NewReader(stderr)
		errLine, err := r.ReadString('\n')
		for ; err == nil && strings.HasPrefix(errLine, "Flag --"); errLine, err = r.ReadString('\n') {
			before.WriteString(errLine)
		}
		got <- lines{out, errLine, before.String()}
		io.Copy(io.Discard, r)
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
	return &serveProcess{cmd: cmd, export: export, endpoints: exportVar(t, export, "ETCDCTL_ENDPOINTS"), dataDir: m[1],
		notices: l.before, tls: exportedTLS(t, export), exited: exited}
}

// conn is what the export line's variables say, as flags: for etcdscope
// run in-process, whose environment the tests running beside it share.
func (p *serveProcess) conn() []string {
	return append([]string{"--endpoints", p.endpoints}, tlsFlags(p.tls)...)
}

// exportedTLS reads the client certificate's files from the line serve
// printed, as the shell it is pasted into does.
func exportedTLS(t *testing.T, export string) *embedded.TLSFiles {
	t.Helper()
	out, err := exec.Command("bash", "-c", export+`; printf '%s\n' "$ETCDCTL_CACERT" "$ETCDCTL_CERT" "$ETCDCTL_KEY"`).Output()
	files := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if err != nil || len(files) != 3 || files[0] == "" || files[1] == "" || files[2] == "" {
		t.Fatalf("the export line does not name the CA, client certificate and key (%v): %s", err, export)
	}
	return &embedded.TLSFiles{CA: files[0], Cert: files[1], Key: files[2]}
}

// stop sends SIGTERM and returns the exit status.
func (p *serveProcess) stop(t *testing.T) int {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
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

// TestServeRefusesADataDirAnotherUserCouldPrepare: a data dir others may
// write into, or another user's (made for the test, as root only), is
// refused before anything is written, in one line that says what to do.
func TestServeRefusesADataDirAnotherUserCouldPrepare(t *testing.T) {
	tests := []struct {
		name    string
		prepare func(t *testing.T, dir string) (want string)
	}{
		{"writable by others", func(t *testing.T, dir string) string {
			os.Chmod(dir, 0o777)
			return "Error: data dir " + dir + " is writable by others (mode 0777): chmod go-w " + dir
		}},
		{"another user's", func(t *testing.T, dir string) string {
			other := etcdtest.OtherUser(t)
			other.Chown(t, dir)
			return fmt.Sprintf("Error: data dir %s belongs to uid %d, not you (uid 0): use a directory of your own", dir, other.UID)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "scope")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			want := tc.prepare(t, dir)
			if msg := runFails(t, "serve", "--apiserver", "--data-dir", dir); msg != want {
				t.Errorf("serve said %q, want %q", msg, want)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("serve wrote into the refused data dir: %v", entries)
			}
		})
	}
}

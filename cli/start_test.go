package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/etcdscope/etcdscope/cli/internal/clitest"
)

// TestLightCommandsTouchOnlyTheirSourceAtStart traces the system calls of
// light commands from the end of the package inits to the first read of
// what the command was given: none may touch a file, a socket or a process
// on its way there. The binary links Kubernetes' control plane, whose
// packages' inits are accepted; anything of its own at start (flag parsing
// of the components, a config file, a state dir looked at) is not, unless
// the command needs it: serve and the explorer's bundled mode.
//
// The trace is strace's (the Go runtime gives no file-level trace), with
// GODEBUG=inittrace=1: each package's init writes a line to stderr as it
// ends, so the last of those writes marks the end of the inits.
func TestLightCommandsTouchOnlyTheirSourceAtStart(t *testing.T) {
	t.Parallel()
	strace := lookStrace(t)
	file := filepath.Join(t.TempDir(), "not-a-data-file")
	if err := os.WriteFile(file, []byte("not a data file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	endpoint := fmt.Sprintf("127.0.0.1:%d", clitest.ClosedPort(t))
	for _, tc := range []struct {
		name string
		args []string
		// first is what the first call after the inits names: the file
		// given, the endpoint's port in a connect, or "" when the command
		// makes no call of those kinds at all.
		first string
	}{
		{"version", []string{"--version"}, ""},
		{"help", []string{"--help"}, ""},
		{"ls on a file", []string{"ls", "--db", file}, file},
		{"get on a file", []string{"get", "pods", "-A", "--db", file}, file},
		{"du on a file", []string{"du", "--db", file}, file},
		{"history on a file", []string{"history", "/registry/pods/default/web", "--db", file}, file},
		{"ls on an endpoint", []string{"ls", "--endpoints", endpoint, "--dial-timeout", "1s"}, straceAddr(endpoint)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := callsAfterInits(t, strace, tc.args)
			switch {
			case tc.first == "" && len(calls) > 0:
				t.Errorf("etcdscope %s made calls after its inits, where it needs none:\n%s", strings.Join(tc.args, " "), strings.Join(calls, "\n"))
			case tc.first != "" && len(calls) == 0:
				t.Errorf("etcdscope %s made no call that names %s", strings.Join(tc.args, " "), tc.first)
			case tc.first != "" && !strings.Contains(calls[0], tc.first):
				t.Errorf("etcdscope %s touched other things before %s:\n%s", strings.Join(tc.args, " "), tc.first, strings.Join(calls, "\n"))
			}
		})
	}
}

// lookStrace finds strace and checks that it may trace here (a container
// may forbid ptrace): the test skips where it cannot, and fails instead
// under ETCDSCOPE_REQUIRE_ETCD=1 (.ci/run installs strace) when strace is
// missing.
func lookStrace(t *testing.T) string {
	t.Helper()
	strace, err := exec.LookPath("strace")
	if err != nil {
		if os.Getenv("ETCDSCOPE_REQUIRE_ETCD") == "1" {
			t.Fatal("strace is not installed and ETCDSCOPE_REQUIRE_ETCD=1")
		}
		t.Skip("strace is not installed")
	}
	if out, err := exec.Command(strace, "-qq", "-e", "trace=none", "true").CombinedOutput(); err != nil {
		t.Skipf("strace cannot trace here: %v: %s", err, out)
	}
	return strace
}

// callsAfterInits runs etcdscope args under strace and returns the file,
// network and process calls it made after its last package init, in the
// order made.
func callsAfterInits(t *testing.T, strace string, args []string) []string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "trace")
	cmd := etcdscope(append([]string{"-f", "-qq", "-o", out, "-e", "trace=%file,%network,execve,fork,vfork,kill,write", "--", os.Args[0]}, args...), "GODEBUG=inittrace=1")
	cmd.Path, cmd.Args[0] = strace, strace
	cmd.Run() // the commands fail on purpose: the file is no data file, the port refuses
	body, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(body), "\n")
	last := -1
	for i, l := range lines {
		if strings.Contains(l, `write(2, "init `) {
			last = i
		}
	}
	if last < 0 {
		t.Fatalf("no init line in the trace of etcdscope %s:\n%s", strings.Join(args, " "), body)
	}
	var calls []string
	for _, l := range lines[last+1:] {
		call := straceCall.FindStringSubmatch(l)
		if call == nil || call[1] == "write" || quietCalls[call[1]] {
			continue
		}
		calls = append(calls, strings.TrimSpace(l))
	}
	return calls
}

// straceCall is a line of strace -f: the pid, then the call's name.
var straceCall = regexp.MustCompile(`^\d+\s+([a-z0-9_]+)\(`)

// quietCalls are network calls that name nothing outside the process: a
// socket made, or asked about, before or after its connect.
var quietCalls = map[string]bool{"socket": true, "getsockopt": true, "setsockopt": true, "getsockname": true, "getpeername": true}

// straceAddr is how strace prints endpoint's port in a connect.
func straceAddr(endpoint string) string {
	_, port, _ := strings.Cut(endpoint, ":")
	return "sin_port=htons(" + port + ")"
}

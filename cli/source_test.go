package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/cli/cmdutil"
	"github.com/etcdscope/etcdscope/embedded"
	"github.com/etcdscope/etcdscope/embedded/controlplane"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// stateDir points the state files of this test, the clusters it starts and
// the commands it runs, at a directory of its own.
func stateDir(t *testing.T) string {
	dir := t.TempDir()
	t.Setenv(controlplane.StateDirEnv, dir)
	return dir
}

// announced starts a one-member bundled cluster announced in the state
// dir, as serve does, and writes key=value into it.
func announced(t *testing.T, key, value string) *controlplane.ControlPlane {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cp, err := controlplane.Start(ctx, controlplane.Options{
		Cluster:  embedded.Options{Members: 1, DataDir: t.TempDir()},
		Announce: "etcdscope serve",
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cp.Close() })
	cfg, err := cp.Cluster().ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	cli, err := clientv3.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	if _, err := cli.Put(ctx, key, value); err != nil {
		t.Fatal(err)
	}
	return cp
}

func TestCommandWithNoFlagsReadsTheRunningBundledCluster(t *testing.T) {
	stateDir(t)
	cp := announced(t, "/registry/configmaps/default/seen", "from the running cluster")
	if got := run(t, "ls", "/registry/configmaps/default/"); strings.TrimSpace(got) != "/registry/configmaps/default/seen" {
		t.Errorf("ls printed %q, want the key written to the running cluster", got)
	}
	if got := run(t, "get", "/registry/configmaps/default/seen", "-o", "raw"); got != "from the running cluster" {
		t.Errorf("get printed %q", got)
	}
	dir := cp.Cluster().DataDir()
	if got := run(t, "--data-dir", dir+"/.", "ls", "/registry/configmaps/default/"); !strings.Contains(got, "seen") {
		t.Errorf("ls --data-dir %s/. printed %q, want the cluster on that dir", dir, got)
	}
	other := t.TempDir()
	if msg := runFails(t, "ls", "--data-dir", other); !strings.Contains(msg, "no bundled cluster runs in "+other) {
		t.Errorf("--data-dir where none runs: %q", msg)
	}
	if entries, _ := os.ReadDir(other); len(entries) != 0 {
		t.Errorf("--data-dir started a cluster: %s holds %d files", other, len(entries))
	}
	cp.Close()
	if msg := runFails(t, "ls"); msg != "Error: "+cmdutil.ErrNoSource.Error() {
		t.Errorf("after the cluster stopped: %q, want %q", msg, cmdutil.ErrNoSource)
	}
}

func TestCommandWithNothingRunningFailsNamingTheSources(t *testing.T) {
	dir := stateDir(t)
	// What a cluster killed with -9 leaves: the file of a process gone.
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(dir, fmt.Sprintf("%d.json", gone.Process.Pid))
	if err := os.WriteFile(stale, fmt.Appendf(nil, `{"by":"etcdscope serve","dataDir":"/tmp/x","endpoints":["http://127.0.0.1:1"],"pid":%d}`, gone.Process.Pid), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"get", "pods", "-A"}, {"ls"}, {"status"}, {"watch"}, {"du"}, {"history", "/registry/x"}} {
		if msg := runFails(t, args...); msg != "Error: "+cmdutil.ErrNoSource.Error() {
			t.Errorf("%s: %q, want %q", strings.Join(args, " "), msg, cmdutil.ErrNoSource)
		}
	}
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the stale state file is still there: %v", err)
	}
}

func TestTwoRunningClustersNeedDataDir(t *testing.T) {
	stateDir(t)
	a := announced(t, "/registry/a", "a")
	b := announced(t, "/registry/b", "b")
	msg := runFails(t, "ls")
	for _, want := range []string{"2 bundled clusters run", a.Cluster().DataDir(), b.Cluster().DataDir(), fmt.Sprintf("(pid %d)", os.Getpid()), "add --data-dir"} {
		if !strings.Contains(msg, want) {
			t.Errorf("two running: %q, want it to say %q", msg, want)
		}
	}
	if got := run(t, "ls", "--data-dir", b.Cluster().DataDir(), "/registry/"); strings.TrimSpace(got) != "/registry/b" {
		t.Errorf("--data-dir of the second: %q, want its key only", got)
	}
}

func TestSourceNoFlagNamedIsSaidOnATerminalOnly(t *testing.T) {
	stateDir(t)
	cp := announced(t, "/registry/k", "v")
	want := fmt.Sprintf("etcdscope: reading the bundled cluster in %s (pid %d, started by etcdscope serve), from %s", cp.Cluster().DataDir(), os.Getpid(), cp.StatePath())
	if got := runOnTTY(t, "ls"); got != want {
		t.Errorf("stderr on a terminal:\n%q\nwant\n%q", got, want)
	}
	if _, _, errOut := runCommand(t, "ls"); errOut != "" {
		t.Errorf("stderr to a pipe: %q, want nothing", errOut)
	}
	t.Setenv("ETCDCTL_ENDPOINTS", strings.Join(cp.Cluster().Endpoints(), ","))
	t.Setenv("ETCDCTL_CACERT", cp.Cluster().TLS().CA)
	t.Setenv("ETCDCTL_CERT", cp.Cluster().TLS().Cert)
	t.Setenv("ETCDCTL_KEY", cp.Cluster().TLS().Key)
	want = "etcdscope: reading etcd at " + strings.Join(cp.Cluster().Endpoints(), ",") + ", from ETCDCTL_ENDPOINTS"
	if got := runOnTTY(t, "ls"); got != want {
		t.Errorf("stderr on a terminal with ETCDCTL_ENDPOINTS:\n%q\nwant\n%q", got, want)
	}
	if got := runOnTTY(t, "ls", "--endpoints", strings.Join(cp.Cluster().Endpoints(), ",")); got != "" {
		t.Errorf("stderr on a terminal with --endpoints: %q, want nothing", got)
	}
}

// runOnTTY runs etcdscope args in-process with stderr on a pseudo-terminal
// and returns what reached it, failing on a non-zero exit status.
func runOnTTY(t *testing.T, args ...string) string {
	t.Helper()
	ptmx, tty := openPTY(t)
	root := newRoot()
	root.SetArgs(args)
	root.SetIn(strings.NewReader(""))
	root.SetOut(io.Discard)
	root.SetErr(tty)
	code := executeInProcess(t, root)
	tty.Close()
	// After the last close of the terminal the master reads what is left,
	// then EIO.
	got, _ := io.ReadAll(ptmx)
	if code != 0 {
		t.Fatalf("etcdscope %s: exit status %d\n%s", strings.Join(args, " "), code, got)
	}
	return strings.TrimSpace(string(bytes.ReplaceAll(got, []byte("\r\n"), []byte("\n"))))
}

func TestEmptyConnectionValuesAreRefusedBeforeAnythingStarts(t *testing.T) {
	stateDir(t)
	for _, tc := range []struct {
		name string
		args []string
		env  string
		want string
	}{
		{"--endpoints ''", []string{"ls", "--endpoints", ""}, "", "--endpoints is empty: give host:port or a URL"},
		{"--endpoints ,", []string{"get", "pods", "--endpoints", ","}, "", "--endpoints is empty: give host:port or a URL"},
		{"--endpoints a,,b", []string{"status", "--endpoints", "127.0.0.1:1,,127.0.0.1:2"}, "", `--endpoints has an empty entry ("127.0.0.1:1,,127.0.0.1:2")`},
		{"ETCDCTL_ENDPOINTS=", []string{"ls"}, "ETCDCTL_ENDPOINTS", "ETCDCTL_ENDPOINTS is empty: give host:port or a URL"},
		{"the explorer, --endpoints ''", []string{"--endpoints", ""}, "", "--endpoints is empty"},
		{"the explorer, ETCDCTL_ENDPOINTS=", nil, "ETCDCTL_ENDPOINTS", "ETCDCTL_ENDPOINTS is empty"},
		{"serve, --endpoints ''", []string{"serve", "--endpoints="}, "", "--endpoints is empty"},
		{"--db ''", []string{"ls", "--db", ""}, "", "--db is empty: give the path of an etcd data file"},
		{"--cacert ''", []string{"ls", "--endpoints", "127.0.0.1:1", "--cacert", ""}, "", "--cacert is empty: give a CA file"},
		{"ETCDCTL_CERT=", []string{"ls", "--endpoints", "127.0.0.1:1"}, "ETCDCTL_CERT", "ETCDCTL_CERT is empty: give a certificate file"},
		{"--key ''", []string{"ls", "--key="}, "", "--key is empty"},
		{"ETCDCTL_USER=", []string{"ls", "--endpoints", "127.0.0.1:1"}, "ETCDCTL_USER", "ETCDCTL_USER is empty: give name or name:password"},
		{"--data-dir ''", []string{"--data-dir", ""}, "", "--data-dir is empty: give a directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.env != "" {
				t.Setenv(tc.env, "")
			}
			// The explorer and serve would start a cluster on this dir.
			dataDir := t.TempDir()
			if msg := runFails(t, append([]string{"--data-dir", dataDir}, tc.args...)...); !strings.HasPrefix(msg, "Error: "+tc.want) {
				t.Errorf("%q, want %q", msg, "Error: "+tc.want)
			}
			if entries, _ := os.ReadDir(dataDir); len(entries) != 0 {
				t.Errorf("a cluster started on %s before the refusal", dataDir)
			}
		})
	}
}

package controlplane

import (
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/etcdscope/etcdscope/embedded"
)

func TestAnnouncedClusterIsRunningUntilClose(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	t.Setenv(StateDirEnv, dir)
	cp := start(t, Options{Cluster: embedded.Options{Members: 1}, Announce: "etcdscope serve"})
	fi, err := os.Stat(dir)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("state dir: %v, %v; want one created 0700", fi, err)
	}
	running, err := Running(t.Context(), dir)
	if err != nil || len(running) != 1 {
		t.Fatalf("Running: %v, %v; want the cluster just started", running, err)
	}
	s := running[0]
	if s.DataDir != cp.Cluster().DataDir() || s.PID != os.Getpid() || s.By != "etcdscope serve" ||
		strings.Join(s.Endpoints, ",") != strings.Join(cp.Cluster().Endpoints(), ",") || s.CA != cp.Cluster().TLS().CA || s.Key == "" {
		t.Errorf("state %+v does not describe the cluster in %s", s, cp.Cluster().DataDir())
	}
	if fi, err := os.Stat(s.Path); err != nil || fi.Mode().Perm() != 0o600 || s.Path != cp.StatePath() {
		t.Errorf("state file %s: %v, %v; want it private", s.Path, fi, err)
	}
	cp.Close()
	if running, err := Running(t.Context(), dir); err != nil || len(running) != 0 {
		t.Errorf("after Close, Running: %v, %v; want none", running, err)
	}
	if _, err := os.Stat(s.Path); !os.IsNotExist(err) {
		t.Errorf("state file after Close: %v", err)
	}
}

func TestStaleStateFilesAreIgnoredAndRemoved(t *testing.T) {
	exited := exec.Command("true")
	if err := exited.Run(); err != nil {
		t.Fatal(err)
	}
	self, err := processStart(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	tlsFiles, err := embedded.EnsureTLS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// A listener of someone else on the port: it accepts, and speaks no TLS.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("HTTP/1.0 400 Bad Request\r\n\r\n"))
			c.Close()
		}
	}()
	taken := "https://" + l.Addr().String()
	for _, tc := range []struct {
		name string
		s    State
	}{
		{"process gone", State{PID: exited.Process.Pid, Endpoints: []string{taken}}},
		{"pid reused", State{PID: os.Getpid(), StartTime: self + 1, Endpoints: []string{taken}}},
		{"port taken", State{PID: os.Getpid(), StartTime: self, Endpoints: []string{taken}, CA: tlsFiles.CA, Cert: tlsFiles.Cert, Key: tlsFiles.Key}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := writeState(t, dir, tc.s)
			running, err := Running(t.Context(), dir)
			if err != nil || len(running) != 0 {
				t.Errorf("Running: %v, %v; want the stale file ignored", running, err)
			}
			if _, err := os.Stat(path); !os.IsNotExist(err) {
				t.Errorf("stale file kept: %v", err)
			}
		})
	}
	t.Run("live without TLS", func(t *testing.T) {
		dir := t.TempDir()
		writeState(t, dir, State{PID: os.Getpid(), StartTime: self, Endpoints: []string{taken}})
		if running, err := Running(t.Context(), dir); err != nil || len(running) != 1 {
			t.Errorf("Running: %v, %v; want the file of a live process without TLS trusted on its PID", running, err)
		}
	})
}

func writeState(t *testing.T, dir string, s State) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "1.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestStateDirOfSomeoneElseIsRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(dir string) error
		want string
	}{
		{"writable by others", func(dir string) error { return os.Chmod(dir, 0o777) }, "writable by others"},
		{"another user's", func(dir string) error { return os.Chown(dir, 65534, 65534) }, "belongs to uid 65534"},
		{"a link", func(dir string) error {
			os.Remove(dir)
			return os.Symlink(t.TempDir(), dir)
		}, "is a symbolic link"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "state")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := tc.make(dir); err != nil {
				t.Skipf("cannot make the dir %s: %v", tc.name, err)
			}
			if _, err := Running(t.Context(), dir); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Running: %v, want a refusal saying %q", err, tc.want)
			}
			cp := &ControlPlane{}
			if err := cp.announce(dir, "test"); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("announce: %v, want a refusal saying %q", err, tc.want)
			}
		})
	}
}

func TestStateFileThatIsALinkIsNotRead(t *testing.T) {
	dir := t.TempDir()
	self, err := processStart(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	target := writeState(t, t.TempDir(), State{PID: os.Getpid(), StartTime: self, Endpoints: []string{"http://127.0.0.1:1"}})
	if err := os.Symlink(target, filepath.Join(dir, "2.json")); err != nil {
		t.Fatal(err)
	}
	if running, err := Running(t.Context(), dir); err != nil || len(running) != 0 {
		t.Errorf("Running: %v, %v; want a linked state file ignored", running, err)
	}
}

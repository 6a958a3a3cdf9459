// Package pgtest runs Debian's PostgreSQL for a test: a server of its own,
// its data in a temporary directory, on a free loopback port, stopped when
// the test ends.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/embedded"
	"github.com/etcdscope/etcdscope/embedded/etcdtest"
	"github.com/jackc/pgx/v5"
)

// User is the server's one role, which connects without a password
// (trust), from loopback only.
const User = "etcdscope"

// Server is a running PostgreSQL.
type Server struct {
	Port    int
	dir     string
	cmd     *exec.Cmd
	exited  chan struct{}
	logPath string
}

// Start runs PostgreSQL until the test ends and waits until it accepts
// connections. It skips when Debian's postgresql is not installed, and
// fails then when ETCDSCOPE_REQUIRE_ETCD=1, as .ci/run sets.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := binDir(t)
	dir, cred, err := dataDir()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	data := filepath.Join(dir, "data")
	// --no-sync: nothing of a test's server outlives it.
	initdb := command(filepath.Join(bin, "initdb"), cred, "-D", data, "-U", User, "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync")
	if out, err := initdb.CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v: %s", err, out)
	}
	var lastErr error
	for range 3 {
		s, err := launch(filepath.Join(bin, "postgres"), cred, dir, data)
		if err == nil {
			t.Cleanup(s.Stop)
			return s
		}
		lastErr = err
	}
	t.Fatalf("start PostgreSQL: %v", lastErr)
	return nil
}

// binDir is the newest of Debian's PostgreSQL versions installed.
func binDir(t testing.TB) string {
	t.Helper()
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/postgres")
	slices.SortFunc(found, func(a, b string) int { return version(a) - version(b) })
	if len(found) > 0 {
		return filepath.Dir(found[len(found)-1])
	}
	msg := "no /usr/lib/postgresql/*/bin/postgres (install Debian's postgresql)"
	if os.Getenv(etcdtest.RequireEnv) == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

func version(bin string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(bin))))
	return n
}

// dataDir makes the server's directory. PostgreSQL refuses to run as
// root: under root it runs as nobody, who owns the directory, made
// outside of the test's own (0700, root's).
func dataDir() (string, *syscall.Credential, error) {
	dir, err := os.MkdirTemp("", "etcdscope-pgtest-")
	if err != nil {
		return "", nil, err
	}
	if os.Geteuid() != 0 {
		return dir, nil, nil
	}
	u, err := user.Lookup("nobody")
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("PostgreSQL does not run as root, and there is no user nobody to run it as: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(dir, uid, gid); err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	return dir, &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

func command(bin string, cred *syscall.Credential, args ...string) *exec.Cmd {
	cmd := exec.Command(bin, args...)
	// A process group of its own, so that a signal to the test's group
	// leaves it to Stop; the user's PG* variables do not reach it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: cred}
	cmd.Env = []string{"PATH=/usr/bin:/bin", "LC_ALL=C"}
	return cmd
}

// launch runs postgres on a free loopback port and no Unix socket, its
// log in dir/postgres.log, and waits until it accepts a connection.
func launch(bin string, cred *syscall.Credential, dir, data string) (*Server, error) {
	ports, err := embedded.FreePorts(1)
	if err != nil {
		return nil, err
	}
	s := &Server{Port: ports[0], dir: dir, exited: make(chan struct{}), logPath: filepath.Join(dir, "postgres.log")}
	log, err := os.OpenFile(s.logPath, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	defer log.Close()
	s.cmd = command(bin, cred, "-D", data, "-h", "127.0.0.1", "-p", strconv.Itoa(s.Port), "-k", "",
		"-c", "fsync=off", "-c", "max_connections=50")
	s.cmd.Stdout, s.cmd.Stderr = log, log
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { s.cmd.Wait(); close(s.exited) }()
	if err := s.waitReady(30 * time.Second); err != nil {
		s.Stop()
		return nil, fmt.Errorf("%w; its log: %s", err, s.logTail())
	}
	return s, nil
}

func (s *Server) waitReady(timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		c, err := pgx.Connect(ctx, s.URL("postgres", ""))
		if err == nil {
			return c.Close(ctx)
		}
		select {
		case <-s.exited:
			return errors.New("postgres exited")
		case <-ctx.Done():
			return fmt.Errorf("postgres does not accept connections within %v: %v", timeout, err)
		case <-tick.C:
		}
	}
}

// URL is the URL of database db on the server, with ?cluster=cluster
// when cluster is not empty.
func (s *Server) URL(db, cluster string) string {
	u := fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable", User, s.Port, db)
	if cluster != "" {
		u += "&cluster=" + cluster
	}
	return u
}

// CreateDatabase creates database name on the server.
func (s *Server) CreateDatabase(t testing.TB, name string) {
	t.Helper()
	c, err := pgx.Connect(t.Context(), s.URL("postgres", ""))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	if _, err := c.Exec(t.Context(), "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		t.Fatal(err)
	}
}

// Stop ends the server (SIGINT, PostgreSQL's fast shutdown; SIGKILL after
// 10s) and waits for it.
func (s *Server) Stop() {
	select {
	case <-s.exited:
		return
	default:
	}
	s.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		<-s.exited
	}
}

func (s *Server) logTail() string {
	b, _ := os.ReadFile(s.logPath)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(lines[max(0, len(lines)-10):], "\n")
}

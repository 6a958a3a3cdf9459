// Package etcdtest starts a real etcd as a separate process for tests: the
// Debian etcd-server package (etcd 3.4), an older and external etcd beside the
// bundled one, and etcd 3.5 and 3.6 built from the module proxy (see
// versions.go), so that every package can check it works with each etcd
// that Kubernetes runs.
package etcdtest

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/embedded"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// RequireEnv, set to 1 (as .ci/run does), turns a missing etcd binary into a
// test failure instead of a skip.
const RequireEnv = "ETCDSCOPE_REQUIRE_ETCD"

// BinaryEnv names an etcd binary to use instead of the one on PATH.
const BinaryEnv = "ETCDSCOPE_ETCD_BIN"

// Options configures an external etcd.
type Options struct {
	// TLS serves clients over HTTPS with client-certificate authentication,
	// certificates from embedded.EnsureTLS in the process's data dir.
	TLS bool
	// QuotaBackendBytes is etcd's --quota-backend-bytes; 0 leaves etcd's
	// default (2 GiB).
	QuotaBackendBytes int64
	// ReadyTimeout bounds the wait for etcd to serve; 0 means 20s. A large
	// data dir takes seconds to load its index.
	ReadyTimeout time.Duration
}

// External is a running etcd process on loopback ports.
type External struct {
	// Endpoint is the client URL.
	Endpoint string
	// TLS holds the client certificate files when Options.TLS was set.
	TLS *embedded.TLSFiles
	// DataDir is the process's --data-dir.
	DataDir string
	// Version is the version `etcd --version` prints, e.g. "3.4.23".
	Version string

	bin       string
	args      []string // etcd's flags, for Restart
	ready     time.Duration
	cmd       *exec.Cmd
	tlsConfig *tls.Config
	logPath   string
	// logFile sends the process's stdout and stderr to logPath (kine logs
	// there; etcd is told --log-outputs).
	logFile bool
	exited  chan struct{}
}

// Binary returns the etcd binary to run, or skips (fails under RequireEnv)
// when there is none.
func Binary(t testing.TB) string {
	t.Helper()
	return lookBinary(t, "etcd", BinaryEnv, "etcd-server")
}

// Etcdctl returns Debian's etcdctl (from etcd-client), or skips (fails under
// RequireEnv) when there is none. ETCDSCOPE_ETCDCTL_BIN names another.
func Etcdctl(t testing.TB) string {
	t.Helper()
	return lookBinary(t, "etcdctl", "ETCDSCOPE_ETCDCTL_BIN", "etcd-client")
}

func lookBinary(t testing.TB, name, env, debianPackage string) string {
	t.Helper()
	if bin := os.Getenv(env); bin != "" {
		return bin
	}
	bin, err := exec.LookPath(name)
	if err == nil {
		return bin
	}
	msg := fmt.Sprintf("no %s on PATH (install Debian's %s, or set %s)", name, debianPackage, env)
	if os.Getenv(RequireEnv) == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// Start runs Debian's etcd until the test ends, and waits until it serves.
func Start(t testing.TB, opts Options) *External {
	t.Helper()
	return startBinary(t, Binary(t), opts)
}

func startBinary(t testing.TB, bin string, opts Options) *External {
	t.Helper()
	dir := t.TempDir()
	var lastErr error
	for range 3 {
		e, err := Launch(bin, dir, opts)
		if err == nil {
			t.Cleanup(func() { e.Stop() })
			return e
		}
		lastErr = err
		os.RemoveAll(filepath.Join(dir, "data"))
	}
	t.Fatalf("start external etcd: %v", lastErr)
	return nil
}

// Launch runs etcd outside of a test: its data in dir/data (a member's data
// there is served again, at any ports), its log in dir/etcd.log, on free
// loopback ports picked now, in a process group of its own so that a signal
// to the caller's group leaves it to Stop. It returns once etcd serves.
func Launch(bin, dir string, opts Options) (*External, error) {
	ports, err := embedded.FreePorts(2)
	if err != nil {
		return nil, err
	}
	e := &External{
		DataDir: filepath.Join(dir, "data"),
		logPath: filepath.Join(dir, "etcd.log"),
	}
	if out, err := exec.Command(bin, "--version").Output(); err == nil {
		e.Version = strings.TrimPrefix(strings.SplitN(string(out), "\n", 2)[0], "etcd Version: ")
	}
	scheme := "http"
	if opts.TLS {
		if e.TLS, err = embedded.EnsureTLS(filepath.Join(dir, "tls")); err != nil {
			return nil, err
		}
		if e.tlsConfig, err = e.TLS.ClientConfig(); err != nil {
			return nil, err
		}
		scheme = "https"
	}
	peer := fmt.Sprintf("http://127.0.0.1:%d", ports[0])
	e.Endpoint = fmt.Sprintf("%s://127.0.0.1:%d", scheme, ports[1])
	args := []string{
		"--name", "external",
		"--data-dir", e.DataDir,
		"--listen-peer-urls", peer,
		"--initial-advertise-peer-urls", peer,
		"--initial-cluster", "external=" + peer,
		"--listen-client-urls", e.Endpoint,
		"--advertise-client-urls", e.Endpoint,
		"--logger", "zap",
		"--log-outputs", e.logPath,
	}
	if opts.QuotaBackendBytes > 0 {
		args = append(args, "--quota-backend-bytes", fmt.Sprint(opts.QuotaBackendBytes))
	}
	if e.TLS != nil {
		args = append(args,
			"--cert-file", e.TLS.ServerCert,
			"--key-file", e.TLS.ServerKey,
			"--trusted-ca-file", e.TLS.CA,
			"--client-cert-auth")
	}
	e.bin, e.args, e.ready = bin, args, opts.ReadyTimeout
	if e.ready == 0 {
		e.ready = 20 * time.Second
	}
	if err := e.run(); err != nil {
		return nil, err
	}
	return e, nil
}

// run starts the process and waits until it serves.
func (e *External) run() error {
	e.exited = make(chan struct{})
	e.cmd = exec.Command(e.bin, e.args...)
	e.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if e.logFile {
		log, err := os.OpenFile(e.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return err
		}
		defer log.Close()
		e.cmd.Stdout, e.cmd.Stderr = log, log
	}
	if err := e.cmd.Start(); err != nil {
		return fmt.Errorf("run %s: %w", e.bin, err)
	}
	go func() {
		e.cmd.Wait()
		close(e.exited)
	}()
	if err := e.waitReady(e.ready); err != nil {
		e.Stop()
		return fmt.Errorf("%w\n%s", err, e.logTail())
	}
	return nil
}

// Restart kills the process and runs it again on the same data, ports and
// flags, as a supervisor restarts a member that crashed: clients keep their
// endpoint and see their streams break. etcd syncs its WAL before it
// acknowledges a write, so no acknowledged write is lost. A kill, because
// etcd 3.5 and later wait up to seconds on SIGTERM for open watch streams.
func (e *External) Restart() error {
	e.cmd.Process.Kill()
	<-e.exited
	return e.run()
}

func (e *External) waitReady(timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cli, err := clientv3.New(e.ClientConfig())
	if err != nil {
		return err
	}
	defer cli.Close()
	for {
		attempt, cancelAttempt := context.WithTimeout(ctx, time.Second)
		_, err := cli.Status(attempt, e.Endpoint)
		cancelAttempt()
		if err == nil {
			return nil
		}
		select {
		case <-e.exited:
			return fmt.Errorf("etcd exited before serving: %v", e.cmd.ProcessState)
		case <-ctx.Done():
			return fmt.Errorf("etcd at %s not serving after %v: %w", e.Endpoint, timeout, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// ClientConfig is a clientv3 configuration for this etcd.
func (e *External) ClientConfig() clientv3.Config {
	return clientv3.Config{Endpoints: []string{e.Endpoint}, DialTimeout: 5 * time.Second, TLS: e.tlsConfig, Logger: zap.NewNop()}
}

// Client returns a client closed when the test ends.
func (e *External) Client(t testing.TB) *clientv3.Client {
	t.Helper()
	cli, err := clientv3.New(e.ClientConfig())
	if err != nil {
		t.Fatalf("client for %s: %v", e.Endpoint, err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

// Stop ends the process (SIGTERM, then SIGKILL after 5s) and waits for it.
func (e *External) Stop() {
	select {
	case <-e.exited:
		return
	default:
	}
	e.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-e.exited:
	case <-time.After(5 * time.Second):
		e.cmd.Process.Kill()
		<-e.exited
	}
}

// logTail is the end of etcd's log, for a failure message.
func (e *External) logTail() string {
	b, err := os.ReadFile(e.logPath)
	if errors.Is(err, os.ErrNotExist) {
		return "(etcd wrote no log)"
	}
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

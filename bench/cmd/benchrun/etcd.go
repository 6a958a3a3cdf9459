package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/etcdscope/etcdscope/embedded"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// etcdProc is Debian's etcd (3.4) run as its own process on a data dir that
// outlives the run, as a production etcd runs apart from its clients.
type etcdProc struct {
	Endpoint string
	Version  string
	cmd      *exec.Cmd
	exited   chan struct{}
}

// quotaBytes lifts etcd's default 2 GiB backend quota: 1M keys of a few
// KiB, with their history, need more.
const quotaBytes = 8 << 30

// startEtcd runs etcd on dataDir with free loopback ports picked now. A data
// dir from an earlier run is reused: a one-member cluster does not need its
// old peer URL to serve.
func startEtcd(bin, dataDir, logPath string) (*etcdProc, error) {
	ports, err := embedded.FreePorts(2)
	if err != nil {
		return nil, err
	}
	e := &etcdProc{Endpoint: fmt.Sprintf("http://127.0.0.1:%d", ports[1]), exited: make(chan struct{})}
	if out, err := exec.Command(bin, "--version").Output(); err == nil {
		e.Version = strings.TrimPrefix(strings.SplitN(string(out), "\n", 2)[0], "etcd Version: ")
	}
	peer := fmt.Sprintf("http://127.0.0.1:%d", ports[0])
	e.cmd = exec.Command(bin,
		"--name", "bench",
		"--data-dir", dataDir,
		"--listen-peer-urls", peer,
		"--initial-advertise-peer-urls", peer,
		"--initial-cluster", "bench="+peer,
		"--listen-client-urls", e.Endpoint,
		"--advertise-client-urls", e.Endpoint,
		"--quota-backend-bytes", fmt.Sprint(quotaBytes),
		"--logger", "zap",
		"--log-outputs", logPath,
	)
	// Its own process group, so that an interrupted run's signal reaches
	// this process and not etcd; Stop ends it.
	e.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := e.cmd.Start(); err != nil {
		return nil, fmt.Errorf("run %s: %w", bin, err)
	}
	go func() { e.cmd.Wait(); close(e.exited) }()
	if err := e.waitReady(2 * time.Minute); err != nil {
		e.Stop()
		return nil, fmt.Errorf("%w (log: %s)", err, logPath)
	}
	return e, nil
}

// waitReady waits for etcd to serve; a large data dir takes seconds to load
// its index.
func (e *etcdProc) waitReady(timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cli, err := e.Client()
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
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Client is a new client of this etcd; the caller closes it.
func (e *etcdProc) Client() (*clientv3.Client, error) {
	return clientv3.New(clientv3.Config{
		Endpoints: []string{e.Endpoint}, DialTimeout: 5 * time.Second, Logger: zap.NewNop(),
		MaxCallRecvMsgSize: 1 << 30,
	})
}

// Stop ends etcd (SIGTERM, SIGKILL after 10s) and waits for it.
func (e *etcdProc) Stop() {
	select {
	case <-e.exited:
		return
	default:
	}
	e.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-e.exited:
	case <-time.After(10 * time.Second):
		e.cmd.Process.Kill()
		<-e.exited
	}
}

// cacheDir is where fills are kept between runs, outside the repository.
func cacheDir() string {
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "etcdscope-bench")
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "etcdscope-bench")
}

// etcdctlVersion is what `etcdctl version` says first: "3.4.23".
func etcdctlVersion(bin string) string {
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		return "(unknown version)"
	}
	return strings.TrimPrefix(strings.SplitN(string(out), "\n", 2)[0], "etcdctl version: ")
}

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/etcdscope/etcdscope/embedded/etcdtest"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// quotaBytes lifts etcd's default 2 GiB backend quota: 1M keys of a few
// KiB, with their history, need more.
const quotaBytes = 8 << 30

// startEtcd runs etcd as its own process, as a production etcd runs
// apart from its clients, on the data kept in dir (reused when it holds a
// fill), with free loopback ports picked now.
func startEtcd(bin, dir string) (*etcdtest.External, error) {
	return etcdtest.Launch(bin, dir, etcdtest.Options{QuotaBackendBytes: quotaBytes, ReadyTimeout: 2 * time.Minute})
}

// etcdBinary is the etcd binary that --etcd names: a path, or a release line
// of the tests' version matrix, Debian's package for 3.4 and otherwise etcd
// built from its module in bench/ (etcdtest.Build, which caches it).
func etcdBinary(arg string) (string, error) {
	if !releaseLine.MatchString(arg) {
		return arg, nil
	}
	if arg == "3.4" {
		return "/usr/bin/etcd", nil
	}
	repo, err := etcdtest.RepoRoot(".")
	if err != nil {
		return "", err
	}
	return etcdtest.Build(repo, arg)
}

var releaseLine = regexp.MustCompile(`^3\.[0-9]+$`)

// client is a new client of e that takes whole 1M-key responses; the caller
// closes it.
func client(e *etcdtest.External) (*clientv3.Client, error) {
	cfg := e.ClientConfig()
	cfg.MaxCallRecvMsgSize = 1 << 30
	return clientv3.New(cfg)
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

// serverVersion is what `etcd --version` says first: "3.7.3".
func serverVersion(bin string) string {
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		return "-unknown"
	}
	return strings.TrimPrefix(strings.SplitN(string(out), "\n", 2)[0], "etcd Version: ")
}

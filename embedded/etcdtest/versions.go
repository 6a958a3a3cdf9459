package etcdtest

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Versions are the etcd release lines that tests run as separate processes,
// oldest first: Debian's etcd-server (3.4) and etcd's own etcdmain at the
// newest 3.5 and 3.6 patch releases, built from bench/etcd3.5 and
// bench/etcd3.6. The 3.7 line is the bundled etcd, which tests run
// in-process; Build makes a binary of it for bench/run.
var Versions = []string{"3.4", "3.5", "3.6"}

// builds says where each release line's etcd is built from: the module
// directory (relative to the repository) and the package in it.
var builds = map[string]buildSource{
	"3.5": {dir: "bench/etcd3.5", pkg: "."},
	"3.6": {dir: "bench/etcd3.6", pkg: "."},
	"3.7": {dir: ".", pkg: "./bench/cmd/etcd"},
	// etcdutl of the bundled etcd's version, which the space tests compare
	// `du --db` with (`etcdutl snapshot status`).
	"etcdutl": {dir: "bench/etcdutl", pkg: "go.etcd.io/etcd/etcdutl/v3"},
	// kine, k3s' default datastore (the etcd API over SQLite); its SQLite
	// driver is C, built with cgo.
	"kine": {dir: "bench/kine", pkg: kineModule, module: kineModule, name: "kine", cgo: true},
}

// buildSource is one binary Build makes.
type buildSource struct {
	dir, pkg string
	// module is the module whose required version names the binary
	// (serverModule when empty), name its file's prefix ("etcd" when empty).
	module, name string
	cgo          bool
}

// serverModule is the module whose version names an etcd build.
const serverModule = "go.etcd.io/etcd/server/v3"

// StartVersion runs etcd of release line v ("3.4", "3.5", "3.6") until the
// test ends, and waits until it serves.
func StartVersion(t testing.TB, v string, opts Options) *External {
	t.Helper()
	return startBinary(t, VersionBinary(t, v), opts)
}

// VersionBinary returns an etcd binary of release line v: Debian's for 3.4,
// otherwise one built by Build. It skips the test when there is none, and
// fails it instead under RequireEnv.
func VersionBinary(t testing.TB, v string) string {
	t.Helper()
	if v == "3.4" {
		return Binary(t)
	}
	bin, err := build(v)
	if err != nil {
		msg := fmt.Sprintf("no etcd %s: %v", v, err)
		if os.Getenv(RequireEnv) == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return bin
}

// build is Build from the repository holding the working directory, as
// `go test` runs a package's tests in its own directory.
func build(v string) (string, error) {
	repo, err := RepoRoot(".")
	if err != nil {
		return "", err
	}
	return Build(repo, v)
}

// RepoRoot is the directory at or above dir that holds etcdscope's go.mod.
func RepoRoot(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		b, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil && bytes.HasPrefix(b, []byte("module github.com/etcdscope/etcdscope\n")) {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no etcdscope go.mod at or above %s", dir)
		}
	}
}

// Build returns the etcd binary of release line v ("3.5", "3.6", "3.7")
// built from repo, building it the first time. Binaries are kept in
// CacheDir, named for the etcd version and a hash of the module files they
// are built from, so that a change of version or of a replace builds anew
// and every other run reuses the binary (a build takes a minute of CPU).
// Processes that build the same binary at once wait for the first.
func Build(repo, v string) (string, error) {
	src, ok := builds[v]
	if !ok {
		return "", fmt.Errorf("etcd %s is not built here: want one of 3.5, 3.6, 3.7, etcdutl, kine", v)
	}
	dir := filepath.Join(repo, src.dir)
	module, name := src.module, src.name
	if module == "" {
		module, name = serverModule, "etcd"
	}
	version, hash, err := buildKey(dir, src.pkg, module)
	if err != nil {
		return "", err
	}
	cache := CacheDir()
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", err
	}
	bin := filepath.Join(cache, fmt.Sprintf("%s-%s-%s", name, strings.TrimPrefix(version, "v"), hash))
	unlock, err := lock(bin + ".lock")
	if err != nil {
		return "", err
	}
	defer unlock()
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	// Built beside and renamed, so that an interrupted build leaves
	// nothing that looks complete.
	tmp := bin + ".tmp"
	cmd := exec.Command("go", "build", "-o", tmp, src.pkg)
	cmd.Dir = dir
	if src.cgo {
		cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build etcd %s in %s: %v\n%s", version, dir, err, out)
	}
	return bin, os.Rename(tmp, bin)
}

// CacheDir is where built etcd binaries are kept, outside the repository:
// ${XDG_CACHE_HOME:-~/.cache}/etcdscope-etcd.
func CacheDir() string {
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "etcdscope-etcd")
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "etcdscope-etcd")
}

// buildKey is the version of module that dir's go.mod requires, and a hash
// of go.mod, go.sum and the package's Go files.
func buildKey(dir, pkg, module string) (version, hash string, err error) {
	h := sha256.New()
	files := []string{filepath.Join(dir, "go.mod"), filepath.Join(dir, "go.sum")}
	sources, err := filepath.Glob(filepath.Join(dir, pkg, "*.go"))
	if err != nil {
		return "", "", err
	}
	for _, f := range append(files, sources...) {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", "", err
		}
		fmt.Fprintf(h, "%s %d\n", filepath.Base(f), len(b))
		h.Write(b)
		if version == "" && filepath.Base(f) == "go.mod" {
			version = requiredVersion(b, module)
		}
	}
	if version == "" {
		return "", "", fmt.Errorf("%s/go.mod does not require %s", dir, module)
	}
	return version, hex.EncodeToString(h.Sum(nil))[:12], nil
}

// requiredVersion finds module's version in a go.mod's require lines, in
// either of their forms ("require m v" and a line of a require block).
func requiredVersion(gomod []byte, module string) string {
	sc := bufio.NewScanner(bytes.NewReader(gomod))
	for sc.Scan() {
		f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(sc.Text()), "require "))
		if len(f) >= 2 && f[0] == module {
			return f[1]
		}
	}
	return ""
}

// lock takes an exclusive flock on path, held until unlock.
func lock(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() { f.Close() }, nil
}

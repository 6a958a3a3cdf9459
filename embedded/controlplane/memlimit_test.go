package controlplane

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/demo"
	"github.com/etcdscope/etcdscope/embedded"
	"github.com/google/pprof/profile"
)

// TestTheMemoryLimitHoldsWhileTheClusterRuns checks that the Go runtime's
// soft limit is the one asked for while the cluster runs, and the one
// before once it is closed. In a process of its own: the limit is the
// process's.
func TestTheMemoryLimitHoldsWhileTheClusterRuns(t *testing.T) {
	if !inChild(t) {
		runChild(t)
		return
	}
	before := debug.SetMemoryLimit(-1)
	const limit = 300 << 20
	cp := start(t, Options{Cluster: embedded.Options{Members: 1}, MemoryLimit: limit})
	if got := debug.SetMemoryLimit(-1); got != limit {
		t.Errorf("the memory limit while the cluster runs is %d, want %d", got, limit)
	}
	cp.Close()
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("the memory limit after Close is %d, want %d as before", got, before)
	}
}

// TestDefaultMemoryLimitFitsTheGoals checks the sizes DefaultMemoryLimit
// picks on this machine: below the goal of each profile, busy's above
// calm's, and never more than a quarter of the machine.
func TestDefaultMemoryLimitFitsTheGoals(t *testing.T) {
	calm, busy := DefaultMemoryLimit(demo.Calm), DefaultMemoryLimit(demo.Busy)
	if calm <= 0 || calm >= 450e6 || busy >= 900e6 || busy < calm {
		t.Errorf("default limits: calm %d, busy %d bytes; want 0 < calm < 450 MB, calm ≤ busy < 900 MB", calm, busy)
	}
	if m := machineMemory(); m > 0 && busy > m/4 {
		t.Errorf("busy's limit %d is more than a quarter of the machine's %d bytes", busy, m)
	}
}

// TestSIGUSR1WritesAHeapProfile sends the process SIGUSR1 and reads the
// profile that appears in the data dir: pprof's heap profile, the owner's
// alone. In a process of its own: the signal is the process's.
func TestSIGUSR1WritesAHeapProfile(t *testing.T) {
	if !inChild(t) {
		runChild(t)
		return
	}
	cp := start(t, Options{Cluster: embedded.Options{Members: 1}, HeapProfiles: true})
	path := filepath.Join(cp.Cluster().DataDir(), HeapProfileName)
	if err := syscall.Kill(os.Getpid(), syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	var fi os.FileInfo
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var err error
		if fi, err = os.Stat(path); err == nil || time.Now().After(deadline) {
			if err != nil {
				t.Fatalf("no heap profile 30 s after SIGUSR1: %v", err)
			}
			break
		}
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("%s has mode %v, want 0600", path, fi.Mode().Perm())
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		t.Fatalf("%s is no pprof profile: %v", path, err)
	}
	if len(p.SampleType) == 0 || p.SampleType[len(p.SampleType)-1].Type != "inuse_space" {
		t.Errorf("%s holds %v, want the heap's samples (inuse_space)", path, p.SampleType)
	}
	figures := filepath.Join(cp.Cluster().DataDir(), RuntimeMemoryName)
	if fi, err := os.Stat(figures); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("%s beside the profile: %v, %v; want it with mode 0600", figures, fi, err)
	}
	b, err := os.ReadFile(figures)
	if err != nil {
		t.Fatal(err)
	}
	var goroutines, stacks int64
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		name, value, _ := strings.Cut(l, " ")
		n, err := strconv.ParseInt(value, 10, 64)
		if err != nil {
			t.Fatalf("%s: line %q is no \"name value\"", figures, l)
		}
		switch name {
		case "/sched/goroutines:goroutines":
			goroutines = n
		case "/memory/classes/heap/stacks:bytes":
			stacks = n
		}
	}
	if goroutines == 0 || stacks == 0 {
		t.Errorf("%s says %d goroutines on %d bytes of stacks, want both counted:\n%s", figures, goroutines, stacks, b)
	}
}

package space

import (
	"context"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/etcdview"
)

// BenchmarkKineFileReport is du's report of /registry in the kine file
// ETCDSCOPE_BENCH_KINE_DB names (bench's fill, say), for profiles of du
// --db without the process around it. It skips when the variable is
// unset: the file is outside the repository, and only read.
func BenchmarkKineFileReport(b *testing.B) {
	path := os.Getenv("ETCDSCOPE_BENCH_KINE_DB")
	if path == "" {
		b.Skip("ETCDSCOPE_BENCH_KINE_DB names no kine file")
	}
	f, err := etcdview.OpenOffline(path, etcdview.FileOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	ctx := context.Background()
	before := cpuTime(b)
	for b.Loop() {
		r, err := Run(ctx, f.(Source), Options{Prefix: "/registry/", Depth: DefaultDepth, Top: DefaultTop}, nil)
		if err != nil {
			b.Fatal(err)
		}
		if r.Root.Keys == 0 {
			b.Fatal("no keys in /registry/")
		}
	}
	// The CPU of every goroutine, the file's readers with the walk: on a
	// shared machine a steadier figure than the time.
	b.ReportMetric(float64(cpuTime(b)-before)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}

// cpuTime is the process's user and system CPU so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

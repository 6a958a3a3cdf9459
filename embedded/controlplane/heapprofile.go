package controlplane

import (
	"bytes"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/metrics"
	"runtime/pprof"
	"sync"
	"syscall"

	"github.com/etcdscope/etcdscope/embedded/datadir"
)

// HeapProfileName is the file, in the data dir, that SIGUSR1 (re)writes
// with Options.HeapProfiles, and RuntimeMemoryName the one beside it that
// says what the runtime holds besides the live heap: one "name value" line
// a runtime/metrics sample (memoryMetrics).
const (
	HeapProfileName   = "heap.pprof"
	RuntimeMemoryName = "memory.txt"
)

// memoryMetrics are the runtime's figures that, with the heap profile,
// account for the process's anonymous memory: the heap's live and dead
// objects, the goroutines' stacks (thousands here: gRPC and HTTP/2
// connections and informers each run some), what the runtime maps in all,
// and the collector's goal and limit.
var memoryMetrics = []string{
	"/memory/classes/heap/objects:bytes",
	"/memory/classes/heap/stacks:bytes",
	"/memory/classes/total:bytes",
	"/memory/classes/heap/released:bytes",
	"/gc/heap/goal:bytes",
	"/gc/gomemlimit:bytes",
	"/sched/goroutines:goroutines",
}

// profileHeapOnSignal writes the Go heap's profile (pprof's "heap", the
// live objects as of the last GC) into dir each time the process gets
// SIGUSR1, until done closes. A file, not a listening pprof handler: nothing
// another user of the machine could reach, and only what the cluster's
// owner can read (mode 0600, written beside the cluster's other files).
// The signal is caught once this returns (its default would end the
// process); the profiles are written on wg.
func profileHeapOnSignal(wg *sync.WaitGroup, done <-chan struct{}, dir string, report func(error)) {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGUSR1)
	wg.Go(func() {
		defer signal.Stop(sig)
		for {
			select {
			case <-done:
				return
			case <-sig:
				if err := writeHeapProfile(dir); err != nil {
					report(fmt.Errorf("heap profile: %w", err))
				}
			}
		}
	})
}

// writeHeapProfile writes the memory figures first, so that a reader that
// waits for a new heap profile finds figures as new beside it.
func writeHeapProfile(dir string) error {
	samples := make([]metrics.Sample, len(memoryMetrics))
	for i, name := range memoryMetrics {
		samples[i].Name = name
	}
	metrics.Read(samples)
	var b bytes.Buffer
	for _, s := range samples {
		fmt.Fprintf(&b, "%s %d\n", s.Name, s.Value.Uint64())
	}
	if err := datadir.WriteFile(filepath.Join(dir, RuntimeMemoryName), b.Bytes()); err != nil {
		return err
	}
	b.Reset()
	if err := pprof.Lookup("heap").WriteTo(&b, 0); err != nil {
		return err
	}
	return datadir.WriteFile(filepath.Join(dir, HeapProfileName), b.Bytes())
}

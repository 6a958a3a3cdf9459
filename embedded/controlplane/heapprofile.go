package controlplane

import (
	"bytes"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"sync"
	"syscall"

	"github.com/etcdscope/etcdscope/embedded/datadir"
)

// HeapProfileName is the file, in the data dir, that SIGUSR1 (re)writes
// with Options.HeapProfiles.
const HeapProfileName = "heap.pprof"

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
				if err := writeHeapProfile(filepath.Join(dir, HeapProfileName)); err != nil {
					report(fmt.Errorf("heap profile: %w", err))
				}
			}
		}
	})
}

func writeHeapProfile(path string) error {
	var b bytes.Buffer
	if err := pprof.Lookup("heap").WriteTo(&b, 0); err != nil {
		return err
	}
	return datadir.WriteFile(path, b.Bytes())
}

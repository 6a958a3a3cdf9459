package cli

import (
	"fmt"
	"math"
	"os"
	"time"

	"github.com/etcdscope/etcdscope/demo"
	"github.com/etcdscope/etcdscope/embedded/controlplane"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/resource"
)

// bundledFlags are the flags of the bundled cluster that both the explorer
// and serve start.
type bundledFlags struct {
	members int
	// demo is the load of the simulated control plane (calm, busy, off);
	// demoNodes its number of kubelets.
	demo      string
	demoNodes int
	// compaction is kube-apiserver's compaction interval as given;
	// compactionSet says it was (compactionFor).
	compaction    time.Duration
	compactionSet func() bool
	// memoryLimit is --memory-limit as given, "" when not (limit).
	memoryLimit string
	// heapProfiles is controlplane.Options.HeapProfiles, a hidden flag of
	// bench/soak's.
	heapProfiles bool
}

// bundledUsage is what the commands say differently of those flags: the
// explorer always runs the control plane, serve only with --apiserver, and
// runs no simulated load unless asked.
type bundledUsage struct {
	demo                                 demo.Profile // --demo's default
	members, load, demoNodes, compaction string       // the help texts
}

// register declares the flags on fs.
func (f *bundledFlags) register(fs *pflag.FlagSet, u bundledUsage) {
	fs.IntVar(&f.members, "members", 0, u.members)
	fs.StringVar(&f.demo, "demo", string(u.demo), u.load)
	fs.IntVar(&f.demoNodes, "demo-nodes", 3, u.demoNodes)
	fs.DurationVar(&f.compaction, "compaction-interval", 0, u.compaction+" (default 5m, 1m with --demo busy)")
	f.compactionSet = func() bool { return fs.Changed("compaction-interval") }
	fs.StringVar(&f.memoryLimit, "memory-limit", "", "the Go runtime's soft memory limit while the bundled cluster runs (such as 512Mi or 1Gi; 0: none, the garbage collector's GOGC alone); default: sized for the demo and the machine, or GOMEMLIMIT when set")
	fs.BoolVar(&f.heapProfiles, "debug-heap-profiles", false, "write the Go heap's profile into the data dir ("+controlplane.HeapProfileName+") on each SIGUSR1")
	fs.MarkHidden("debug-heap-profiles")
}

// compactionFor is --compaction-interval for a cluster that runs the
// demo's profile p: as given, else controlplane.DefaultCompactionInterval.
func (f *bundledFlags) compactionFor(p demo.Profile) time.Duration {
	if f.compactionSet != nil && f.compactionSet() {
		return f.compaction
	}
	return controlplane.DefaultCompactionInterval(p)
}

// limit is --memory-limit in bytes for a cluster that runs the demo's
// profile p: without the flag, GOMEMLIMIT when set (the runtime read it at
// start: 0 leaves it), else controlplane.DefaultMemoryLimit.
func (f *bundledFlags) limit(p demo.Profile) (int64, error) {
	if f.memoryLimit == "" {
		if os.Getenv("GOMEMLIMIT") != "" {
			return 0, nil
		}
		return controlplane.DefaultMemoryLimit(p), nil
	}
	q, err := resource.ParseQuantity(f.memoryLimit)
	if err != nil || q.Sign() < 0 {
		return 0, fmt.Errorf("--memory-limit %q: a size in bytes, such as 512Mi or 1Gi, or 0 for none", f.memoryLimit)
	}
	if q.IsZero() {
		return math.MaxInt64, nil // debug.SetMemoryLimit's "no limit"
	}
	return q.Value(), nil
}

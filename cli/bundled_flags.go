package cli

import (
	"time"

	"github.com/etcdscope/etcdscope/demo"
	"github.com/etcdscope/etcdscope/embedded/controlplane"
	"github.com/spf13/pflag"
)

// bundledFlags are the flags of the bundled cluster that both the explorer
// and serve start.
type bundledFlags struct {
	members int
	// demo is the load of the simulated control plane (calm, busy, off);
	// demoNodes its number of kubelets.
	demo      string
	demoNodes int
	// compaction is kube-apiserver's compaction interval.
	compaction time.Duration
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
	fs.DurationVar(&f.compaction, "compaction-interval", controlplane.DefaultCompactionInterval, u.compaction)
}

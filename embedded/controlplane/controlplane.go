// Package controlplane starts and stops the bundled control plane as one
// piece: the etcd members (package embedded), Kubernetes' own control plane
// in front of them (embedded/kube: kube-apiserver, kube-controller-manager,
// kube-scheduler) with its kubeconfig, and the simulated kubelets and
// add-ons that act through it (demo), each logging to a file of its own in
// the cluster's data dir. The TUI and serve both run it; what fails once it
// runs comes out of Errors.
package controlplane

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/etcdscope/etcdscope/demo"
	"github.com/etcdscope/etcdscope/embedded"
	"github.com/etcdscope/etcdscope/embedded/datadir"
	"github.com/etcdscope/etcdscope/embedded/fanout"
	"github.com/etcdscope/etcdscope/embedded/kube"
)

// Options say what runs.
type Options struct {
	// Cluster is the etcd cluster: members and data dir.
	Cluster embedded.Options
	// APIServer runs Kubernetes' control plane on the cluster.
	APIServer bool
	// Demo is the load of the simulated components, which act through the
	// control plane (run with them); "" and demo.Off run none.
	Demo demo.Profile
	// Nodes is the demo's number of kubelets; 0 means 3.
	Nodes int
	// CompactionInterval is kube-apiserver's --etcd-compaction-interval;
	// 0 turns its compaction off.
	CompactionInterval time.Duration
	// EncryptionConfig is kube-apiserver's --encryption-provider-config.
	EncryptionConfig string
	// CaptureStderr sends what the control plane's libraries write to file
	// descriptor 2 into its log (see captureStderr): for a process that
	// draws on the terminal, or prints there what it means to.
	CaptureStderr bool
	// MemoryLimit is the Go runtime's soft memory limit
	// (debug.SetMemoryLimit) while the control plane runs, in bytes; 0
	// leaves the process's (GOMEMLIMIT, or none). DefaultMemoryLimit sizes
	// it for a profile.
	MemoryLimit int64
	// HeapProfiles writes the Go heap's profile into the data dir
	// (HeapProfileName) on each SIGUSR1: for bench/soak, and for whoever
	// asks where the control plane's memory goes.
	HeapProfiles bool
	// Announce, when set, names what runs the cluster ("etcdscope serve") in
	// a state file in StateDir, so that commands with no flags read it.
	Announce string
}

// DefaultCompactionInterval is how often kube-apiserver compacts etcd's
// history under the demo's profile p: its own default, 5 minutes, but for
// the busy demo, 1 minute. kube-apiserver compacts to the revision it saw
// one interval before, so etcd keeps one to two intervals of history, and
// each member's bbolt file grows to hold it: the busy demo's 5 to 10
// minutes made files of 71 to 138 MB each (by its write rate), mapped into
// this process three times over, where a minute's compaction kept them at
// 26 to 33 MB (bench/soak, docs/benchmarks.md).
func DefaultCompactionInterval(p demo.Profile) time.Duration {
	if p == demo.Busy {
		return time.Minute
	}
	return 5 * time.Minute
}

// APIServer is where kube-apiserver serves, the kubeconfig that reaches it
// (an admin and a read-only viewer context, the admin's current) and the
// control plane's log.
type APIServer struct {
	URL, Kubeconfig, Log string
	// EncryptionConfig is its --encryption-provider-config, absolute; ""
	// when it stores values plain.
	EncryptionConfig string
}

// ControlPlane is a running bundled control plane.
type ControlPlane struct {
	cluster *embedded.Cluster
	kube    *kube.ControlPlane // nil without Options.APIServer
	apiInfo APIServer
	demo    *demo.Demo // nil until the demo started
	// reactions fans out what the demo reports to its one OnReaction.
	reactions fanout.Hub[demo.Reaction]
	runDemo   bool
	logs      []*os.File
	// restoreStderr undoes Options.CaptureStderr; nil without it.
	restoreStderr func()
	restoreLimit  func() // undoes Options.MemoryLimit
	statePath     string // the state file of Options.Announce

	errs    chan error
	closing chan struct{}
	watch   sync.WaitGroup
	demoMu  sync.Mutex
	once    sync.Once
	err     error
}

// errorBuffer is how many failures Errors holds for a reader that is not
// there yet: each component fails once, and there are a handful.
const errorBuffer = 32

// Start starts the etcd members and returns once they serve. With
// Options.APIServer or a demo it has also started Kubernetes' control
// plane, which becomes ready on its own (Ready); the demo starts once it
// is. ctx bounds the start of the members. On an error, what started is
// stopped again.
func Start(ctx context.Context, opts Options) (*ControlPlane, error) {
	c, err := embedded.Start(ctx, opts.Cluster)
	if err != nil {
		return nil, err
	}
	cp := &ControlPlane{cluster: c, errs: make(chan error, errorBuffer), closing: make(chan struct{})}
	cp.restoreLimit = setMemoryLimit(opts.MemoryLimit)
	cp.runDemo = opts.Demo != "" && opts.Demo != demo.Off
	if opts.HeapProfiles {
		profileHeapOnSignal(&cp.watch, cp.closing, c.DataDir(), cp.report)
	}
	if !opts.APIServer && !cp.runDemo {
		return cp.announced(opts.Announce)
	}
	nodes := opts.Nodes
	if nodes <= 0 {
		nodes = 3
	}
	if err := cp.startKube(ctx, opts, nodes); err != nil {
		return nil, errors.Join(err, cp.Close())
	}
	cp.watch.Go(func() { cp.runWhenReady(opts.Demo, nodes) })
	return cp.announced(opts.Announce)
}

// startKube starts the control plane on the cluster, with an identity for
// each of the demo's components, and writes the kubeconfig.
func (cp *ControlPlane) startKube(ctx context.Context, opts Options, nodes int) error {
	log, err := cp.openLog("kubernetes.log")
	if err != nil {
		return err
	}
	if opts.CaptureStderr {
		if cp.restoreStderr, err = captureStderr(log); err != nil {
			return err
		}
	}
	var users []kube.User
	if cp.runDemo {
		for _, u := range demo.Users(nodes) {
			users = append(users, kube.User{Name: u.Name, Groups: u.Groups})
		}
	}
	f := cp.cluster.TLS()
	etcd := kube.Etcd{Endpoints: cp.cluster.Endpoints(), CA: f.CA, Cert: f.Cert, Key: f.Key}
	cp.kube, err = kube.Start(ctx, kube.Options{
		Dir:                filepath.Join(cp.cluster.DataDir(), "kubernetes"),
		Etcd:               etcd,
		CompactionInterval: opts.CompactionInterval,
		EncryptionConfig:   opts.EncryptionConfig,
		Log:                log,
		Users:              users,
	})
	if err != nil {
		return fmt.Errorf("start Kubernetes' control plane: %w", err)
	}
	cp.apiInfo = APIServer{URL: cp.kube.URL(), Kubeconfig: filepath.Join(cp.cluster.DataDir(), "kubeconfig"), Log: log.Name()}
	if opts.EncryptionConfig != "" {
		if cp.apiInfo.EncryptionConfig, err = filepath.Abs(opts.EncryptionConfig); err != nil {
			return err
		}
	}
	return cp.kube.WriteKubeconfig(cp.apiInfo.Kubeconfig)
}

// runWhenReady starts the demo once the control plane is ready, and
// reports the control plane's stop, until Close.
func (cp *ControlPlane) runWhenReady(profile demo.Profile, nodes int) {
	select {
	case <-cp.closing:
		return
	case <-cp.kube.Stopped():
		cp.report(fmt.Errorf("the control plane stopped: %w", cp.kube.Err()))
		return
	case <-cp.kube.Ready():
	}
	if cp.runDemo {
		if err := cp.startDemo(profile, nodes); err != nil {
			cp.report(err)
		}
	}
	select {
	case <-cp.closing:
	case <-cp.kube.Stopped():
		cp.report(fmt.Errorf("the control plane stopped: %w", cp.kube.Err()))
	}
}

func (cp *ControlPlane) startDemo(profile demo.Profile, nodes int) error {
	log, err := cp.openLog("demo.log")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	go func() { // Close cuts a bootstrap short
		select {
		case <-cp.closing:
			cancel()
		case <-ctx.Done():
		}
	}()
	d, err := demo.Start(ctx, demo.Options{
		Config:     cp.kube.RESTConfig,
		Nodes:      nodes,
		Profile:    profile,
		Log:        log,
		OnError:    func(err error) { cp.report(fmt.Errorf("demo: %w", err)) },
		OnReaction: cp.reactions.Publish,
	})
	if err != nil {
		return fmt.Errorf("start the demo: %w", err)
	}
	cp.demoMu.Lock()
	defer cp.demoMu.Unlock()
	select {
	case <-cp.closing:
		d.Close() // Close came during the start: it will not see this demo
	default:
		cp.demo = d
	}
	return nil
}

// openLog opens name in the data dir for appending: a kept --data-dir
// keeps the logs of every run. A link there is refused, not followed.
func (cp *ControlPlane) openLog(name string) (*os.File, error) {
	f, err := datadir.OpenAppend(filepath.Join(cp.cluster.DataDir(), name))
	if err == nil {
		cp.logs = append(cp.logs, f)
	}
	return f, err
}

// report hands err to Errors' reader, or drops it when errorBuffer
// failures wait unread: a failing component never waits for the UI.
func (cp *ControlPlane) report(err error) {
	select {
	case cp.errs <- err:
	default:
	}
}

// Errors delivers each failure after Start: a component of the control
// plane stopping on its own, a component of the demo stopping with an
// error. Close closes it.
func (cp *ControlPlane) Errors() <-chan error { return cp.errs }

// Ready closes when kube-apiserver answers /readyz; nil when it does not
// run.
func (cp *ControlPlane) Ready() <-chan struct{} {
	if cp.kube == nil {
		return nil
	}
	return cp.kube.Ready()
}

// Cluster is the etcd cluster: its members, endpoints, TLS files, data dir
// and log.
func (cp *ControlPlane) Cluster() *embedded.Cluster { return cp.cluster }

// APIServer says where kube-apiserver serves; zero when it does not run.
func (cp *ControlPlane) APIServer() APIServer { return cp.apiInfo }

// Writes publishes what kube-apiserver did with each write; nil when it
// does not run.
func (cp *ControlPlane) Writes() *fanout.Hub[kube.Write] {
	if cp.kube == nil {
		return nil
	}
	return cp.kube.Writes()
}

// Reactions publishes what the demo's components saw of each write; nil
// when the demo does not run.
func (cp *ControlPlane) Reactions() *fanout.Hub[demo.Reaction] {
	if !cp.runDemo {
		return nil
	}
	return &cp.reactions
}

// Close stops the demo first (through the API server), then the control
// plane, then the members; a temporary data dir goes with them. It may be
// called more than once.
func (cp *ControlPlane) Close() error {
	cp.once.Do(func() {
		cp.unannounce()
		close(cp.closing)
		cp.demoMu.Lock()
		if cp.demo != nil {
			cp.demo.Close()
		}
		cp.demoMu.Unlock()
		var errs []error
		if cp.kube != nil {
			errs = append(errs, cp.kube.Close())
		}
		cp.watch.Wait()
		cp.reactions.Close()
		close(cp.errs) // nothing reports any more: the demo and the watcher are done
		errs = append(errs, cp.cluster.Close())
		if cp.restoreStderr != nil {
			cp.restoreStderr()
		}
		cp.restoreLimit()
		for _, f := range cp.logs {
			errs = append(errs, f.Close())
		}
		cp.err = errors.Join(errs...)
	})
	return cp.err
}

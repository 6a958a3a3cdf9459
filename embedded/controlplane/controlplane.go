// Package controlplane starts and stops the bundled control plane as one
// piece: the etcd members (package embedded), the built-in Kubernetes API
// server in front of them (embedded/apiserver) with its kubeconfig, and the
// simulated components that act through it (demo), each logging to a file
// of its own in the cluster's data dir. The TUI and serve both run it; what
// fails once it runs comes out of Errors.
package controlplane

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/etcdscope/etcdscope/demo"
	"github.com/etcdscope/etcdscope/embedded"
	"github.com/etcdscope/etcdscope/embedded/apiserver"
	"github.com/etcdscope/etcdscope/embedded/fanout"
	"k8s.io/client-go/rest"
)

// Options say what runs.
type Options struct {
	// Cluster is the etcd cluster: members, data dir, TLS.
	Cluster embedded.Options
	// APIServer runs the built-in API server on a free loopback port.
	APIServer bool
	// Demo is the load of the simulated components. They act through the
	// API server, which runs with them; "" and demo.Off run none.
	Demo demo.Profile
	// Nodes is the demo's number of kubelets; 0 means 3.
	Nodes int
}

// APIServer is where the built-in API server serves, the kubeconfig that
// reaches it (an admin and a read-only viewer context, the admin's
// current) and its log.
type APIServer struct {
	URL, Kubeconfig, Log string
}

// ControlPlane is a running bundled control plane.
type ControlPlane struct {
	cluster *embedded.Cluster
	api     *apiserver.Server // nil without Options.APIServer
	apiInfo APIServer
	demo    *demo.Demo // nil without Options.Demo
	// reactions fans out what the demo reports to its one OnReaction.
	reactions fanout.Hub[demo.Reaction]
	logs      []*os.File

	errs    chan error
	closing chan struct{}
	watch   sync.WaitGroup
	once    sync.Once
	err     error
}

// errorBuffer is how many failures Errors holds for a reader that is not
// there yet: each component fails once, and there are a handful.
const errorBuffer = 32

// Start starts the etcd members, then the API server, then the demo, and
// returns when each is ready: the members serve, the API server answers
// /readyz, the demo's bootstrap objects are written. ctx bounds the start
// only. On an error, what started is stopped again.
func Start(ctx context.Context, opts Options) (*ControlPlane, error) {
	c, err := embedded.Start(ctx, opts.Cluster)
	if err != nil {
		return nil, err
	}
	cp := &ControlPlane{cluster: c, errs: make(chan error, errorBuffer), closing: make(chan struct{})}
	runDemo := opts.Demo != "" && opts.Demo != demo.Off
	if !opts.APIServer && !runDemo {
		return cp, nil
	}
	nodes := opts.Nodes
	if nodes <= 0 {
		nodes = 3
	}
	tokens := map[string]string{}
	list := []apiserver.Token{
		{Token: rand.Text(), User: "admin", UID: "admin", Groups: []string{apiserver.AdminGroup}},
		{Token: rand.Text(), User: "viewer", UID: "viewer", Groups: []string{apiserver.ViewerGroup}},
	}
	if runDemo {
		for _, u := range demo.Users(nodes) {
			group := apiserver.AdminGroup
			if u.ReadOnly {
				group = apiserver.ViewerGroup
			}
			tokens[u.Name] = rand.Text()
			list = append(list, apiserver.Token{Token: tokens[u.Name], User: u.Name, UID: u.Name, Groups: []string{group}})
		}
	}
	if err := cp.startAPIServer(ctx, list); err != nil {
		return nil, errors.Join(err, cp.Close())
	}
	if runDemo {
		if err := cp.startDemo(ctx, opts.Demo, nodes, tokens); err != nil {
			return nil, errors.Join(err, cp.Close())
		}
	}
	return cp, nil
}

// startAPIServer starts the API server on the cluster with tokens, writes
// its kubeconfig into the data dir, and reports when it stops on its own.
func (cp *ControlPlane) startAPIServer(ctx context.Context, tokens []apiserver.Token) error {
	cfg, err := cp.cluster.ClientConfig()
	if err != nil {
		return err
	}
	log, err := cp.openLog("apiserver.log")
	if err != nil {
		return err
	}
	if cp.api, err = apiserver.Start(ctx, apiserver.Options{Etcd: cfg, Log: log, Tokens: tokens}); err != nil {
		return fmt.Errorf("start the API server: %w", err)
	}
	cp.apiInfo = APIServer{URL: cp.api.URL(), Kubeconfig: filepath.Join(cp.cluster.DataDir(), "kubeconfig"), Log: log.Name()}
	if err := cp.api.WriteKubeconfig(cp.apiInfo.Kubeconfig); err != nil {
		return err
	}
	cp.watch.Go(func() {
		select {
		case <-cp.closing:
		case <-cp.api.Stopped():
			select {
			case <-cp.closing: // Close stopped it
			default:
				err := cp.api.Err()
				if err == nil {
					err = errors.New("it no longer serves")
				}
				cp.report(fmt.Errorf("the API server stopped: %w", err))
			}
		}
	})
	return nil
}

func (cp *ControlPlane) startDemo(ctx context.Context, profile demo.Profile, nodes int, tokens map[string]string) error {
	log, err := cp.openLog("demo.log")
	if err != nil {
		return err
	}
	cp.demo, err = demo.Start(ctx, demo.Options{
		Config:     func(user string) *rest.Config { return cp.api.RESTConfig(tokens[user]) },
		Nodes:      nodes,
		Profile:    profile,
		Log:        log,
		OnError:    func(err error) { cp.report(fmt.Errorf("demo: %w", err)) },
		OnReaction: cp.reactions.Publish,
	})
	if err != nil {
		return fmt.Errorf("start the demo: %w", err)
	}
	return nil
}

// openLog opens name in the data dir for appending: a kept --data-dir
// keeps the logs of every run.
func (cp *ControlPlane) openLog(name string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(cp.cluster.DataDir(), name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
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

// Errors delivers each failure after Start: the API server stopping on
// its own, a component of the demo stopping with an error. Close closes it.
func (cp *ControlPlane) Errors() <-chan error { return cp.errs }

// Cluster is the etcd cluster: its members, endpoints, TLS files, data dir
// and log.
func (cp *ControlPlane) Cluster() *embedded.Cluster { return cp.cluster }

// APIServer says where the API server serves; zero when it does not run.
func (cp *ControlPlane) APIServer() APIServer { return cp.apiInfo }

// Writes publishes the API server's write traces; nil when it does not run.
func (cp *ControlPlane) Writes() *fanout.Hub[apiserver.WriteTrace] {
	if cp.api == nil {
		return nil
	}
	return cp.api.Writes()
}

// Reactions publishes what the demo's components saw of each write; nil
// when the demo does not run.
func (cp *ControlPlane) Reactions() *fanout.Hub[demo.Reaction] {
	if cp.demo == nil {
		return nil
	}
	return &cp.reactions
}

// Close stops the demo first (its leaders release their Leases through the
// API server), then the API server, then the members; a temporary data dir
// goes with them. It may be called more than once.
func (cp *ControlPlane) Close() error {
	cp.once.Do(func() {
		close(cp.closing)
		if cp.demo != nil {
			cp.demo.Close()
		}
		cp.reactions.Close()
		var errs []error
		if cp.api != nil {
			errs = append(errs, cp.api.Close())
		}
		cp.watch.Wait()
		close(cp.errs) // nothing reports any more: the demo and the watcher are done
		for _, f := range cp.logs {
			errs = append(errs, f.Close())
		}
		cp.err = errors.Join(append(errs, cp.cluster.Close())...)
	})
	return cp.err
}

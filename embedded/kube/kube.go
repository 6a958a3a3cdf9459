package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"path/filepath"
	"sync"
	"time"

	"github.com/etcdscope/etcdscope/embedded/datadir"
	"github.com/etcdscope/etcdscope/embedded/fanout"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Options say what the control plane stores into and where it keeps its
// files.
type Options struct {
	// Dir holds the PKI (pki/), the kubeconfigs, the audit policy and the
	// audit log. A reused dir keeps its CA.
	Dir string
	// Etcd is the cluster kube-apiserver stores into.
	Etcd Etcd
	// CompactionInterval is kube-apiserver's --etcd-compaction-interval:
	// how often it compacts etcd's history; 0 turns compaction off.
	CompactionInterval time.Duration
	// EncryptionConfig is passed to kube-apiserver's
	// --encryption-provider-config when set.
	EncryptionConfig string
	// Log receives the three components' logs (klog's, which is one per
	// process). Nil discards them. It never reaches the terminal.
	Log io.Writer
	// Users are identities besides the admin, the viewer and the
	// components, each given a client certificate (RESTConfig).
	Users []User
}

// Etcd is how kube-apiserver reaches etcd: its --etcd-servers and, for a
// TLS cluster (the bundled one always is), the client's files.
type Etcd struct {
	Endpoints     []string
	CA, Cert, Key string
}

// User is a client identity: a client certificate with the user as its
// common name and the groups as its organizations.
type User struct {
	Name   string
	Groups []string
}

// The built-in identities.
const (
	// AdminUser is in system:masters, as kubeadm's super-admin.
	AdminUser = "kubernetes-admin"
	// ViewerUser may get, list and watch everything, through an RBAC
	// ClusterRoleBinding of ViewerRole.
	ViewerUser            = "etcdscope-viewer"
	ViewerRole            = "etcdscope:viewer"
	controllerManagerUser = "system:kube-controller-manager"
	schedulerUser         = "system:kube-scheduler"
	clusterName           = "etcdscope"
)

// ControlPlane is kube-apiserver, kube-controller-manager and
// kube-scheduler running in this process.
type ControlPlane struct {
	dir string
	pki *pki
	url string
	// configs are each user's client configuration, made at Start.
	configs    map[string]*rest.Config
	identities map[string]identity

	writes *recorder
	sink   *auditSink

	cancel context.CancelFunc // stops kube-apiserver
	// stopComponents stops the controller manager and the scheduler, which
	// Close waits for before it stops kube-apiserver: the scheduler gives
	// its lease back on the way out, through kube-apiserver.
	stopComponents context.CancelFunc
	components     sync.WaitGroup
	starting       sync.Mutex    // orders the components' start and Close
	closed         chan struct{} // closed by Close, before it stops the components
	once           sync.Once
	ready          chan struct{}
	stopped        chan struct{}
	run            sync.WaitGroup
	errOnce        sync.Once
	err            error
}

// Start starts kube-apiserver on a free loopback port and returns; the
// controller manager and the scheduler start once it answers /readyz,
// which closes Ready. Stopped closes when any of the three stops on its
// own, and Err says why. ctx bounds the preparation only.
func Start(ctx context.Context, opts Options) (*ControlPlane, error) {
	if len(opts.Etcd.Endpoints) == 0 {
		return nil, errors.New("kube-apiserver needs an etcd endpoint")
	}
	redirectLogs(opts.Log)
	c := &ControlPlane{dir: opts.Dir, ready: make(chan struct{}), stopped: make(chan struct{}), closed: make(chan struct{})}
	if err := datadir.Ensure(opts.Dir); err != nil {
		return nil, err
	}
	var err error
	if c.pki, err = loadPKI(filepath.Join(opts.Dir, "pki")); err != nil {
		return nil, err
	}
	listener, err := net.Listen("tcp", net.JoinHostPort(servingHost, "0"))
	if err != nil {
		return nil, fmt.Errorf("kube-apiserver's port: %w", err)
	}
	c.url = (&url.URL{Scheme: "https", Host: listener.Addr().String()}).String()
	if err := c.issueIdentities(opts.Users); err != nil {
		listener.Close()
		return nil, err
	}
	encryption, err := encryptionOf(opts.EncryptionConfig)
	if err != nil && opts.Log != nil {
		// kube-apiserver reads the file too, and refuses to serve when it
		// cannot: its error is the one to report.
		fmt.Fprintf(opts.Log, "write path: the encryption config is not shown: %v\n", err)
	}
	c.writes = newRecorder(encryption)
	if c.sink, err = c.startAuditSink(c.writes); err != nil {
		listener.Close()
		return nil, err
	}
	flags, err := c.apiServerFlags(opts)
	if err != nil {
		listener.Close()
		c.sink.close()
		return nil, err
	}
	apiCtx, cancel := context.WithCancel(context.Background())
	componentsCtx, stopComponents := context.WithCancel(context.Background())
	c.cancel, c.stopComponents = cancel, stopComponents
	c.goRun(&c.run, "kube-apiserver", func() error { return runAPIServer(apiCtx, flags, listener, c.writes) })
	c.run.Go(func() { c.startWhenReady(componentsCtx) })
	return c, nil
}

// startWhenReady waits for /readyz, binds the viewer, closes ready, and
// starts the controller manager and the scheduler.
func (c *ControlPlane) startWhenReady(ctx context.Context) {
	admin, err := kubernetes.NewForConfig(c.configs[AdminUser])
	if err != nil {
		c.fail(err)
		return
	}
	if err := waitReady(ctx, admin); err != nil {
		if ctx.Err() == nil {
			c.fail(fmt.Errorf("kube-apiserver never became ready: %w", err))
		}
		return
	}
	if err := bindViewer(ctx, admin); err != nil {
		if ctx.Err() == nil {
			c.fail(err)
		}
		return
	}
	close(c.ready)
	c.starting.Lock()
	defer c.starting.Unlock()
	select {
	case <-c.closed: // Close is not waiting for components it did not see
		return
	default:
	}
	c.goRun(&c.components, "kube-controller-manager", func() error { return runControllerManager(ctx, c.controllerManagerFlags()) })
	c.goRun(&c.components, "kube-scheduler", func() error { return runScheduler(ctx, c.schedulerFlags()) })
}

// goRun runs a component in group; its return before Close is a failure.
func (c *ControlPlane) goRun(group *sync.WaitGroup, name string, run func() error) {
	group.Go(func() {
		err := run()
		select {
		case <-c.closed:
			return
		default:
		}
		if err == nil {
			err = errors.New("it stopped")
		}
		c.fail(fmt.Errorf("%s: %w", name, err))
	})
}

// fail records the first failure and closes Stopped.
func (c *ControlPlane) fail(err error) {
	c.errOnce.Do(func() {
		c.err = err
		close(c.stopped)
	})
}

// waitReady polls /readyz until it answers ok.
func waitReady(ctx context.Context, client kubernetes.Interface) error {
	var last error
	for {
		body, err := client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		if err == nil {
			return nil
		}
		last = fmt.Errorf("%w %s", err, body)
		select {
		case <-ctx.Done():
			return errors.Join(ctx.Err(), last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// URL is where kube-apiserver serves.
func (c *ControlPlane) URL() string { return c.url }

// Ready closes when kube-apiserver answers /readyz.
func (c *ControlPlane) Ready() <-chan struct{} { return c.ready }

// WaitReady waits for Ready, and fails when the control plane stops first
// or ctx ends.
func (c *ControlPlane) WaitReady(ctx context.Context) error {
	select {
	case <-c.ready:
		return nil
	case <-c.stopped:
		return fmt.Errorf("the control plane stopped before it was ready: %w", c.err)
	case <-ctx.Done():
		return fmt.Errorf("the control plane was not ready in time: %w", ctx.Err())
	}
}

// Stopped closes when a component stops on its own; Err says which and why.
func (c *ControlPlane) Stopped() <-chan struct{} { return c.stopped }

// Err is why the control plane stopped, nil while it runs.
func (c *ControlPlane) Err() error {
	select {
	case <-c.stopped:
		return c.err
	default:
		return nil
	}
}

// RESTConfig is user's client configuration; nil for a user Start was
// not given.
func (c *ControlPlane) RESTConfig(user string) *rest.Config {
	if cfg, ok := c.configs[user]; ok {
		return rest.CopyConfig(cfg)
	}
	return nil
}

// Close stops the controller manager and the scheduler, then
// kube-apiserver, and waits for them. It may be called more than once.
func (c *ControlPlane) Close() error {
	c.once.Do(func() {
		c.starting.Lock()
		close(c.closed)
		c.starting.Unlock()
		c.stopComponents()
	})
	c.components.Wait()
	c.cancel()
	c.run.Wait()
	err := c.sink.close()
	c.writes.hub.Close()
	return err
}

// Writes publishes what kube-apiserver did with each write: see Write. A
// subscriber slower than its buffer loses writes rather than slowing the
// server; nothing is recorded while none subscribes.
func (c *ControlPlane) Writes() *fanout.Hub[Write] { return &c.writes.hub }

package demo

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/etcdscope/etcdscope/decode"
	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
)

// Profile is how much scripted activity runs on top of the components.
type Profile string

const (
	// Calm runs one step of the script every few seconds.
	Calm Profile = "calm"
	// Busy runs the script many times faster, in several namespaces at once.
	Busy Profile = "busy"
	// Off runs no script: the components only keep the cluster alive.
	Off Profile = "off"
)

// ParseProfile accepts calm, busy and off.
func ParseProfile(s string) (Profile, error) {
	switch p := Profile(s); p {
	case Calm, Busy, Off:
		return p, nil
	}
	return "", fmt.Errorf("--demo=%s: want calm, busy or off", s)
}

// User is an identity the demo acts as, with the groups the API server
// must authenticate it in; what it may do is RBAC's and the Node
// authorizer's business, as in a kubeadm cluster.
type User struct {
	Name   string
	Groups []string
}

// The users of the simulated components, as kubeadm's clusters name them.
const (
	proxyUser       = "system:kube-proxy"
	coreDNSUser     = "system:serviceaccount:kube-system:coredns"
	provisionerUser = "system:serviceaccount:kube-system:csi-provisioner"
	// ScriptUser is who writes the bootstrap objects and runs the load
	// script: the admin of a kubeadm cluster, in system:masters.
	ScriptUser = "kubernetes-admin"
)

func nodeUser(node string) string { return "system:node:" + node }

// Users lists every identity a demo of n nodes acts as: the kubelets in
// system:nodes (the Node authorizer's and NodeRestriction's group), the
// rest as themselves, bound by the bootstrap policy (kube-proxy) or by
// the bootstrap objects (CoreDNS, the CSI provisioner). ScriptUser is the
// cluster's admin and is not among them.
func Users(nodes int) []User {
	us := []User{{Name: provisionerUser}, {Name: proxyUser}, {Name: coreDNSUser}}
	for i := range nodes {
		us = append(us, User{Name: nodeUser(nodeName(i)), Groups: []string{"system:nodes"}})
	}
	return us
}

// Options configure a demo.
type Options struct {
	// Config is the client configuration for user; the demo sets the user
	// agent and rate limits itself.
	Config func(user string) *rest.Config
	// Nodes is the number of kubelets; 0 means 3.
	Nodes int
	// Profile is the load; "" means Calm.
	Profile Profile
	// Log receives the components' logs (klog's structured logger); nil
	// discards them.
	Log io.Writer
	// OnError, if set, hears each error a component stops with, when it
	// stops, on the component's goroutine; Err keeps the first.
	OnError func(error)
	// OnReaction, if set, hears each watch event a component's informer
	// receives, on the informer's goroutine: it must not block.
	OnReaction func(Reaction)
}

// Demo is a running simulated control plane.
type Demo struct {
	cancel     context.CancelFunc
	wg         sync.WaitGroup
	nodes      int
	onError    func(error)
	onReaction func(Reaction)
	webhook    *webhook

	mu   sync.Mutex
	errs []error
}

// Start writes the bootstrap objects, then starts every component and the
// load script on goroutines of their own, and returns. Close stops them.
func Start(ctx context.Context, opts Options) (*Demo, error) {
	if opts.Nodes <= 0 {
		opts.Nodes = 3
	}
	if opts.Profile == "" {
		opts.Profile = Calm
	}
	d := &Demo{nodes: opts.Nodes, onError: opts.OnError, onReaction: opts.OnReaction}
	logger := logr.Discard()
	if opts.Log != nil {
		w := opts.Log
		logger = funcr.New(func(prefix, args string) { fmt.Fprintln(w, prefix, args) }, funcr.Options{})
	}
	runCtx, cancel := context.WithCancel(klog.NewContext(context.Background(), logger))
	d.cancel = cancel
	c := clients{config: opts.Config}
	admin, err := c.forUser(ScriptUser, "kubectl")
	if err != nil {
		cancel()
		return nil, err
	}
	if d.webhook, err = startWebhook(); err != nil {
		cancel()
		return nil, err
	}
	if err := bootstrap(ctx, admin, d.webhook.admissionObjects()); err != nil {
		cancel()
		d.webhook.close()
		return nil, fmt.Errorf("bootstrap objects: %w", err)
	}
	if err := createCartCRD(ctx, c); err != nil {
		cancel()
		d.webhook.close()
		return nil, err
	}
	starters := []func(context.Context, clients) error{
		d.runProvisioner, d.runKubeProxies, d.runCoreDNS,
	}
	for i := range opts.Nodes {
		starters = append(starters, func(ctx context.Context, c clients) error { return d.runKubelet(ctx, c, nodeName(i), i) })
	}
	if opts.Profile != Off {
		starters = append(starters, func(ctx context.Context, c clients) error { return runScript(ctx, c, opts.Profile) })
	}
	for _, start := range starters {
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			if err := start(runCtx, c); err != nil && runCtx.Err() == nil {
				d.fail(err)
			}
		}()
	}
	return d, nil
}

func (d *Demo) fail(err error) {
	d.mu.Lock()
	d.errs = append(d.errs, err)
	d.mu.Unlock()
	if d.onError != nil {
		d.onError(err)
	}
}

// Err is the first error a component stopped with, if one did.
func (d *Demo) Err() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.errs) == 0 {
		return nil
	}
	return d.errs[0]
}

// Close stops every component (the leaders release their Leases) and waits
// for their goroutines; the API server must still be up for the release.
func (d *Demo) Close() {
	d.cancel()
	d.wg.Wait()
	d.webhook.close()
}

// clients builds a clientset per component, as each real component has its
// own kubeconfig.
type clients struct {
	config func(user string) *rest.Config
}

func (c clients) forUser(user, agent string) (kubernetes.Interface, error) {
	return kubernetes.NewForConfig(c.restFor(user, agent))
}

func (c clients) restFor(user, agent string) *rest.Config {
	cfg := rest.CopyConfig(c.config(user))
	cfg.UserAgent = agent + "/" + decode.KubernetesVersion
	// kube-controller-manager's --kube-api-qps and burst; no client here
	// should be throttled below what the demo needs.
	cfg.QPS, cfg.Burst = 100, 200
	return cfg
}

// resync is the informers' resync period: level-triggered components see
// every object again now and then, as the real ones do.
const resync = 10 * time.Minute

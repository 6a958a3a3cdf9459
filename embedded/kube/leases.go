package kube

import (
	"context"
	"fmt"
	"os"
	"sync"

	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	componentbaseconfig "k8s.io/component-base/config"
	"k8s.io/klog/v2"
)

// lease is a component's leader-election Lease, as the component's own
// parsed options describe it (--leader-elect-* flags, defaults 15 s / 10 s /
// 2 s in kube-system), held beside the component while the component itself
// runs with --leader-elect=false: with election on, both components end the
// process when they lose the lease (kube-controller-manager through
// klog.FlushAndExit; kube-scheduler through os.Exit when stopped and
// klog.FlushAndExit on a loss), and here the process is the TUI.
type lease struct {
	component string
	config    componentbaseconfig.LeaderElectionConfiguration
	// kubeconfig is the component's own: its user, so that its agent
	// names it (componentAgents) as the lease's writer in managedFields.
	kubeconfig *rest.Config
	// releaseOnCancel is what the component sets: kube-scheduler always,
	// kube-controller-manager behind the
	// ControllerManagerReleaseLeaderElectionLockOnExit gate.
	releaseOnCancel bool
}

// elector builds client-go's elector for l, as the components build theirs
// (kube-controller-manager's leaderElectAndRun, kube-scheduler's
// makeLeaderElectionConfig): the identity is the host name, "_" and a UUID,
// the client resourcelock.NewFromKubeconfig's, whose agent ends in
// "/leader-election". No Events are recorded: the components' recorders
// start sending only once the components run, after the lease.
func (l lease) elector(onStarted func(context.Context), onStopped func()) (*leaderelection.LeaderElector, error) {
	host, err := os.Hostname()
	if err != nil {
		return nil, fmt.Errorf("%s's lease: the host name: %w", l.component, err)
	}
	// NewFromKubeconfig panics on a config clientset.NewForConfig refuses;
	// this one is the config the component already built its clients from.
	lock, err := resourcelock.NewFromKubeconfig(l.config.ResourceLock, l.config.ResourceNamespace, l.config.ResourceName,
		resourcelock.ResourceLockConfig{Identity: host + "_" + string(uuid.NewUUID())},
		l.kubeconfig, l.config.RenewDeadline.Duration)
	if err != nil {
		return nil, fmt.Errorf("%s's lease: %w", l.component, err)
	}
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   l.config.LeaseDuration.Duration,
		RenewDeadline:   l.config.RenewDeadline.Duration,
		RetryPeriod:     l.config.RetryPeriod.Duration,
		Callbacks:       leaderelection.LeaderCallbacks{OnStartedLeading: onStarted, OnStoppedLeading: onStopped},
		ReleaseOnCancel: l.releaseOnCancel,
		Name:            l.config.ResourceName,
	})
	if err != nil {
		return nil, fmt.Errorf("%s's lease: %w", l.component, err)
	}
	return le, nil
}

// runLeading starts work once the lease is acquired, as a component's
// OnStartedLeading does, and holds the lease until work returns or ctx
// ends; then it stops the elector (releasing the lease when the component
// would) and returns work's error, with no goroutine of the elector's
// left.
//
// Unlike a real component, which exits on a lost lease and is restarted by
// the kubelet, work keeps running: the loss is logged and the elector tries
// to acquire the lease again. Should another holder take the lease (a
// second kube-scheduler run against this cluster), both work at once.
func runLeading(ctx context.Context, l lease, work func() error) error {
	ctx, stop := context.WithCancel(ctx)
	acquired := make(chan struct{})
	var once sync.Once
	logger := klog.FromContext(ctx).WithValues("lease", l.config.ResourceNamespace+"/"+l.config.ResourceName)
	le, err := l.elector(
		func(context.Context) { once.Do(func() { close(acquired) }) },
		func() {
			if ctx.Err() == nil {
				logger.Error(nil, "leaderelection lost: "+l.component+" keeps running (a real one exits and is restarted); acquiring again")
			}
		})
	if err != nil {
		stop()
		return err
	}
	var electing sync.WaitGroup
	defer func() {
		stop()
		electing.Wait()
	}()
	electing.Go(func() {
		// Run returns when the lease is lost or ctx ends; an elector may
		// run again, its observed record telling it when the lease expires.
		for ctx.Err() == nil {
			le.Run(ctx)
		}
	})
	select {
	case <-acquired:
		return work()
	case <-ctx.Done():
		return ctx.Err()
	}
}

package demo

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/controller/daemon"
	"k8s.io/kubernetes/pkg/controller/deployment"
	"k8s.io/kubernetes/pkg/controller/endpoint"
	"k8s.io/kubernetes/pkg/controller/endpointslice"
	"k8s.io/kubernetes/pkg/controller/job"
	"k8s.io/kubernetes/pkg/controller/replicaset"
	"k8s.io/kubernetes/pkg/controller/serviceaccount"
	"k8s.io/kubernetes/pkg/controller/statefulset"
)

// kube-controller-manager's and kube-scheduler's leader-election defaults
// (--leader-elect-lease-duration, -renew-deadline, -retry-period): the
// leader renews its Lease every retry period.
const (
	leaseDuration = 15 * time.Second
	renewDeadline = 10 * time.Second
	retryPeriod   = 2 * time.Second
)

// leaderElect runs lead while this process holds the Lease kube-system/name,
// as kube-controller-manager and kube-scheduler do; it returns when ctx
// ends, releasing the Lease.
func leaderElect(ctx context.Context, client kubernetes.Interface, name, identity string, lead func(ctx context.Context)) error {
	lock, err := resourcelock.New(resourcelock.LeasesResourceLock, "kube-system", name,
		client.CoreV1(), client.CoordinationV1(), resourcelock.ResourceLockConfig{Identity: identity})
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: lock, Name: name, ReleaseOnCancel: true,
		LeaseDuration: leaseDuration, RenewDeadline: renewDeadline, RetryPeriod: retryPeriod,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) {
				wg.Add(1)
				defer wg.Done()
				lead(ctx)
			},
			OnStoppedLeading: func() {},
		},
	})
	if err != nil {
		return err
	}
	// A leader that loses its Lease (the API server was slow for longer
	// than the renew deadline) campaigns again, as a restarted one would.
	for ctx.Err() == nil {
		le.Run(ctx)
		wg.Wait()
	}
	return nil
}

// runControllerManager is kube-controller-manager: its controllers run on
// one shared informer factory while it leads.
func (d *Demo) runControllerManager(ctx context.Context, c clients) error {
	client, err := c.forUser(controllerManagerUser, "kube-controller-manager")
	if err != nil {
		return err
	}
	return leaderElect(ctx, client, "kube-controller-manager", "controller-manager-0_"+string(uuid.NewUUID()), func(ctx context.Context) {
		if err := d.runControllers(ctx, client); err != nil && ctx.Err() == nil {
			d.fail(fmt.Errorf("kube-controller-manager: %w", err))
		}
	})
}

func (d *Demo) runControllers(ctx context.Context, client kubernetes.Interface) error {
	f := informers.NewSharedInformerFactory(client, resync)
	defer f.Shutdown()
	core, apps := f.Core().V1(), f.Apps().V1()
	dc, err := deployment.NewDeploymentController(ctx, apps.Deployments(), apps.ReplicaSets(), core.Pods(), client)
	if err != nil {
		return err
	}
	dsc, err := daemon.NewDaemonSetsController(ctx, apps.DaemonSets(), apps.ControllerRevisions(), core.Pods(), core.Nodes(), client,
		flowcontrol.NewBackOff(time.Second, 15*time.Minute))
	if err != nil {
		return err
	}
	sac, err := serviceaccount.NewServiceAccountsController(klog.FromContext(ctx), core.ServiceAccounts(), core.Namespaces(), client,
		serviceaccount.DefaultServiceAccountsControllerOptions())
	if err != nil {
		return err
	}
	jc, err := job.NewController(ctx, client, core.Pods(), f.Batch().V1().Jobs(), nil, nil)
	if err != nil {
		return err
	}
	rsc := replicaset.NewReplicaSetController(ctx, apps.ReplicaSets(), core.Pods(), client, replicaset.BurstReplicas)
	ssc := statefulset.NewStatefulSetController(ctx, core.Pods(), apps.StatefulSets(), core.PersistentVolumeClaims(), apps.ControllerRevisions(), client)
	// kube-controller-manager's defaults: 100 endpoints a slice, updates
	// batched over 0 s.
	esc := endpointslice.NewController(ctx, core.Pods(), core.Services(), core.Nodes(), f.Discovery().V1().EndpointSlices(), 100, client, 0)
	epc := endpoint.NewEndpointController(ctx, core.Pods(), core.Services(), core.Endpoints(), client, 0)

	for _, o := range []struct {
		name, resource string
		informer       interface {
			Informer() cache.SharedIndexInformer
		}
	}{
		{"deployment controller", "deployments", apps.Deployments()},
		{"replicaset controller", "replicasets", apps.ReplicaSets()},
		{"replicaset controller", "pods", core.Pods()},
		{"daemonset controller", "daemonsets", apps.DaemonSets()},
		{"statefulset controller", "statefulsets", apps.StatefulSets()},
		{"job controller", "jobs", f.Batch().V1().Jobs()},
		{"endpointslice controller", "services", core.Services()},
		{"serviceaccount controller", "namespaces", core.Namespaces()},
	} {
		d.observe(o.name, o.resource, o.informer.Informer(), nil)
	}
	f.Start(ctx.Done())
	var wg sync.WaitGroup
	for _, run := range []func(context.Context, int){dc.Run, rsc.Run, dsc.Run, ssc.Run, jc.Run, esc.Run, epc.Run, sac.Run} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run(ctx, 2)
		}()
	}
	wg.Wait()
	return nil
}

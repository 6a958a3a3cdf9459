package kube

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/pflag"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/tools/cache"
	cliflag "k8s.io/component-base/cli/flag"
	cmfeatures "k8s.io/controller-manager/pkg/features"
	kcmapp "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	kcmoptions "k8s.io/kubernetes/cmd/kube-controller-manager/app/options"
	schedulerapp "k8s.io/kubernetes/cmd/kube-scheduler/app"
	scheduleroptions "k8s.io/kubernetes/cmd/kube-scheduler/app/options"
)

// The controller manager and the scheduler run with --leader-elect=false,
// and hold their Leases beside them (runLeading): both end the process when
// they lose a lease, which here would end the TUI.

// controllerManagerFlags are kube-controller-manager's command line, as
// kubeadm runs it, with this cluster's files. It serves no port of its own.
func (c *ControlPlane) controllerManagerFlags() []string {
	caCert, caKey := c.pki.path(caName)
	return []string{
		"--kubeconfig=" + c.kubeconfigPath(controllerManagerUser),
		"--leader-elect=false",
		"--secure-port=0",
		"--controllers=*,bootstrapsigner,tokencleaner",
		"--use-service-account-credentials=true",
		"--service-account-private-key-file=" + c.pki.dir + "/" + saName + ".key",
		"--root-ca-file=" + caCert,
		"--cluster-signing-cert-file=" + caCert,
		"--cluster-signing-key-file=" + caKey,
		"--cluster-name=" + clusterName,
	}
}

// schedulerFlags are kube-scheduler's command line: the default profile.
func (c *ControlPlane) schedulerFlags() []string {
	return []string{
		"--kubeconfig=" + c.kubeconfigPath(schedulerUser),
		"--leader-elect=false",
		"--secure-port=0",
	}
}

// parseFlags parses args into the named flag sets of a component.
func parseFlags(component string, sets cliflag.NamedFlagSets, args []string) error {
	fs := pflag.NewFlagSet(component, pflag.ContinueOnError)
	for _, f := range sets.FlagSets {
		fs.AddFlagSet(f)
	}
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%s's flags: %w", component, err)
	}
	return nil
}

// runControllerManager builds kube-controller-manager from flags, as its
// command does, and runs its controllers until ctx ends. The controller
// manager takes its informers' name for the life of the process, so a
// process runs it once.
func runControllerManager(ctx context.Context, flags []string) error {
	s, err := kcmoptions.NewKubeControllerManagerOptions()
	if err != nil {
		return err
	}
	known, disabled, aliases := kcmapp.KnownControllers(), kcmapp.ControllersDisabledByDefault(), kcmapp.ControllerAliases()
	sets := s.Flags(known, disabled, aliases)
	s.ParsedFlags = &sets
	if err := parseFlags("kube-controller-manager", sets, flags); err != nil {
		return err
	}
	if err := s.ComponentGlobalsRegistry.Set(); err != nil {
		return err
	}
	cfg, err := s.Config(ctx, known, disabled, aliases)
	if err != nil {
		return err
	}
	l := lease{
		component:       "kube-controller-manager",
		config:          cfg.ComponentConfig.Generic.LeaderElection,
		kubeconfig:      cfg.Kubeconfig,
		releaseOnCancel: utilfeature.DefaultFeatureGate.Enabled(cmfeatures.ControllerManagerReleaseLeaderElectionLockOnExit),
	}
	return runLeading(ctx, l, func() error { return kcmapp.Run(ctx, cfg.Complete()) })
}

// runScheduler builds kube-scheduler from flags, as its command does, and
// schedules until ctx ends.
func runScheduler(ctx context.Context, flags []string) error {
	opts := scheduleroptions.NewOptions()
	if err := parseFlags("kube-scheduler", *opts.Flags, flags); err != nil {
		return err
	}
	if err := opts.ComponentGlobalsRegistry.Set(); err != nil {
		return err
	}
	name, err := cache.NewInformerName("kube-scheduler")
	if err != nil {
		return err
	}
	defer name.Release()
	opts.InformerName = name
	cc, sched, err := schedulerapp.Setup(ctx, opts)
	if err != nil {
		return err
	}
	// makeLeaderElectionConfig sets ReleaseOnCancel unconditionally.
	l := lease{component: "kube-scheduler", config: cc.ComponentConfig.LeaderElection, kubeconfig: cc.KubeConfig, releaseOnCancel: true}
	return runLeading(ctx, l, func() error {
		err := schedulerapp.Run(ctx, cc, sched)
		if ctx.Err() != nil {
			return nil // without leader election, Run's way to say it was stopped is an error
		}
		if err == nil {
			err = errors.New("it stopped")
		}
		return err
	})
}

package kube

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/decode"
	clientv3 "go.etcd.io/etcd/client/v3"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	componentbaseconfig "k8s.io/component-base/config"
	componentbaseconfigv1alpha1 "k8s.io/component-base/config/v1alpha1"
	"k8s.io/utils/ptr"
)

// identityPattern is the components' holderIdentity: the host name, "_"
// and a UUID (kube-controller-manager's Run, kube-scheduler's
// makeLeaderElectionConfig).
func identityPattern(t *testing.T) *regexp.Regexp {
	t.Helper()
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	return regexp.MustCompile(`^` + regexp.QuoteMeta(host) + `_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
}

func adminClient(t *testing.T) kubernetes.Interface {
	t.Helper()
	client, err := kubernetes.NewForConfig(testCP.RESTConfig(AdminUser))
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// TestComponentsHoldTheirLeasesAsInARealCluster reads the two kube-system
// Leases a kubeadm cluster has: held in the components' identity format,
// for the components' default lease duration, renewed, and written by the
// components as managedFields name them.
func TestComponentsHoldTheirLeasesAsInARealCluster(t *testing.T) {
	t.Parallel()
	var defaults componentbaseconfigv1alpha1.LeaderElectionConfiguration
	componentbaseconfigv1alpha1.RecommendedDefaultLeaderElectionConfiguration(&defaults)
	wantSeconds := int32(defaults.LeaseDuration.Seconds())
	identity := identityPattern(t)
	leases := adminClient(t).CoordinationV1().Leases("kube-system")
	for _, component := range []string{"kube-controller-manager", "kube-scheduler"} {
		var first *coordinationv1.Lease
		eventually(t, time.Minute, component+"'s lease is held", func() error {
			l, err := leases.Get(context.Background(), component, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if holder := ptr.Deref(l.Spec.HolderIdentity, ""); !identity.MatchString(holder) {
				return fmt.Errorf("holderIdentity %q, want %s", holder, identity)
			}
			first = l
			return nil
		})
		if got := ptr.Deref(first.Spec.LeaseDurationSeconds, 0); got != wantSeconds {
			t.Errorf("%s: leaseDurationSeconds %d, want %d", component, got, wantSeconds)
		}
		var managers []string
		for _, f := range first.ManagedFields {
			managers = append(managers, f.Manager)
		}
		if !slices.Contains(managers, component) {
			t.Errorf("%s: managedFields managers %q, want %s", component, managers, component)
		}
		eventually(t, time.Minute, component+"'s lease is renewed", func() error {
			l, err := leases.Get(context.Background(), component, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if !l.Spec.RenewTime.After(first.Spec.RenewTime.Time) || ptr.Deref(l.Spec.HolderIdentity, "") != *first.Spec.HolderIdentity {
				return fmt.Errorf("renewTime %v by %q, first %v by %q", l.Spec.RenewTime, ptr.Deref(l.Spec.HolderIdentity, ""), first.Spec.RenewTime, *first.Spec.HolderIdentity)
			}
			return nil
		})
	}
}

// TestWorkStartsWithTheLeaseAndOutlivesItsLoss runs runLeading on a lease
// another holder has: the work starts once the lease is this elector's;
// taken away, the lease is logged as lost while the work goes on, and
// acquired again once it expires; the end of ctx releases it.
func TestWorkStartsWithTheLeaseAndOutlivesItsLoss(t *testing.T) {
	t.Parallel()
	const name = "etcdscope-lease-test"
	leases := adminClient(t).CoordinationV1().Leases("default")
	ctx := context.Background()
	take := func(holder string) error {
		return retry.RetryOnConflict(retry.DefaultRetry, func() error {
			l, err := leases.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			l.Spec.HolderIdentity, l.Spec.RenewTime = ptr.To(holder), &metav1.MicroTime{Time: time.Now()}
			_, err = leases.Update(ctx, l, metav1.UpdateOptions{})
			return err
		})
	}
	if _, err := leases.Create(ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr.To("other"), LeaseDurationSeconds: ptr.To[int32](3), RenewTime: &metav1.MicroTime{Time: time.Now()}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	holder := func() string {
		l, err := leases.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return "error: " + err.Error()
		}
		return ptr.Deref(l.Spec.HolderIdentity, "")
	}
	l := shortLease(name)
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	started, done := make(chan string, 1), make(chan error, 1)
	go func() {
		done <- runLeading(runCtx, l, func() error {
			started <- holder()
			<-runCtx.Done()
			return nil
		})
	}()
	var mine string
	select {
	case mine = <-started:
	case <-time.After(time.Minute):
		t.Fatal("the work did not start within a minute")
	}
	if !identityPattern(t).MatchString(mine) {
		t.Fatalf("when the work started the lease was held by %q, want this elector", mine)
	}
	if err := take("thief"); err != nil {
		t.Fatal(err)
	}
	waitLogged(t, "leaderelection lost: test-component keeps running", "default/"+name)
	eventually(t, time.Minute, "the lease is acquired again", func() error {
		if got := holder(); got != mine {
			return fmt.Errorf("held by %q, want %q", got, mine)
		}
		return nil
	})
	select {
	case err := <-done:
		t.Fatalf("the work ended with the lease: %v", err)
	default:
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("runLeading: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("runLeading did not return within a minute of its context's end")
	}
	if got := holder(); got != "" {
		t.Errorf("after the end the lease is held by %q, want released", got)
	}
}

// electorGoroutines are the stacks of goroutines running client-go's
// leader election, which Close must leave none of.
func electorGoroutines() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var found []string
	for g := range strings.SplitSeq(string(buf), "\n\n") {
		if strings.Contains(g, "k8s.io/client-go/tools/leaderelection.") {
			found = append(found, g)
		}
	}
	return found
}

// leaseHolders reads, in etcd, who holds kube-scheduler's and
// kube-controller-manager's leases ("" for a lease released); an error
// when a lease is not there.
func leaseHolders(ctx context.Context, cli *clientv3.Client) (scheduler, manager string, err error) {
	holder := func(component string) (string, error) {
		key := "/registry/leases/kube-system/" + component
		resp, err := cli.Get(ctx, key)
		if err != nil {
			return "", err
		}
		if len(resp.Kvs) == 0 {
			return "", fmt.Errorf("no %s", key)
		}
		l, ok := decode.Decoder{}.Decode(key, resp.Kvs[0].Value).Object.(*coordinationv1.Lease)
		if !ok {
			return "", fmt.Errorf("%s is not a Lease", key)
		}
		return ptr.Deref(l.Spec.HolderIdentity, ""), nil
	}
	if scheduler, err = holder("kube-scheduler"); err != nil {
		return "", "", err
	}
	manager, err = holder("kube-controller-manager")
	return scheduler, manager, err
}

// leasesHeld waits until both components hold their leases: a run whose
// tests end within seconds (go test -run of one test) closes the control
// plane before they took them, and the check after Close needs them.
func leasesHeld() error {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cli, err := testClient()
	if err != nil {
		return err
	}
	defer cli.Close()
	for {
		scheduler, manager, err := leaseHolders(ctx, cli)
		if err == nil && scheduler != "" && manager != "" {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("kube-scheduler and kube-controller-manager did not both hold their leases within 60s (held by %q, %q; %v)", scheduler, manager, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// leasesAfterClose checks, in etcd once the control plane is closed, that
// each component left its lease as it would on its way out: kube-scheduler
// released it (ReleaseOnCancel), kube-controller-manager, whose release is
// behind an alpha gate that is off, still names itself.
func leasesAfterClose() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cli, err := testClient()
	if err != nil {
		return err
	}
	defer cli.Close()
	scheduler, manager, err := leaseHolders(ctx, cli)
	if err != nil {
		return err
	}
	if scheduler != "" || manager == "" {
		return fmt.Errorf("after Close kube-scheduler's lease is held by %q (want released), kube-controller-manager's by %q (want kept)", scheduler, manager)
	}
	return nil
}

// shortLease is a lease in default of the admin's, held for 3 s: a test's.
func shortLease(name string) lease {
	return lease{
		component: "test-component",
		config: componentbaseconfig.LeaderElectionConfiguration{
			ResourceLock: "leases", ResourceNamespace: "default", ResourceName: name,
			LeaseDuration: metav1.Duration{Duration: 3 * time.Second},
			RenewDeadline: metav1.Duration{Duration: 2 * time.Second},
			RetryPeriod:   metav1.Duration{Duration: 500 * time.Millisecond},
		},
		kubeconfig:      testCP.RESTConfig(AdminUser),
		releaseOnCancel: true,
	}
}

// waitLogged waits for a line of kubernetes.log that holds every part.
func waitLogged(t *testing.T, parts ...string) {
	t.Helper()
	eventually(t, time.Minute, fmt.Sprintf("%q in kubernetes.log", parts), func() error {
		log, err := os.ReadFile(filepath.Join(testDir, "kubernetes.log"))
		if err != nil {
			return err
		}
		for line := range strings.Lines(string(log)) {
			if !slices.ContainsFunc(parts, func(p string) bool { return !strings.Contains(line, p) }) {
				return nil
			}
		}
		return errors.New("not in kubernetes.log")
	})
}

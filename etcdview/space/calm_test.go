package space

import (
	"context"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/demo"
	"github.com/etcdscope/etcdscope/embedded/controlplane"
	"github.com/etcdscope/etcdscope/etcdview"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// TestCalmDemoForecastsNoQuota runs the bundled control plane with the
// calm demo and kube-apiserver's own compaction cycle at a short interval,
// reads the members' status every second as the TUI does, and forecasts
// from what the size in use keeps after each compaction: the calm demo's
// few MiB of a 2 GiB quota are no warning at any reading, and once the
// bootstrap is behind, the growth across its compactions is more than a
// day from the quota for every member. It once warned of the quota within
// a day five minutes in, naming a different member at each refresh.
func TestCalmDemoForecastsNoQuota(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the control plane for a minute and a half")
	}
	const interval = 5 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cp, err := controlplane.Start(ctx, controlplane.Options{APIServer: true, Demo: demo.Calm, CompactionInterval: interval, CaptureStderr: true})
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Close()
	cfg, err := cp.Cluster().ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	cli, err := clientv3.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	// The demo starts once kube-apiserver is ready; what failed before is
	// on Errors.
	select {
	case <-cp.Ready():
	case <-ctx.Done():
		t.Fatalf("the control plane was not ready in time: %v", failures(cp))
	}
	src := etcdview.NewLive(cli, 0)
	// The control plane's and the demo's first objects are growth, and
	// no sign of the steady state.
	time.Sleep(20 * time.Second)
	var trend SizeTrend
	var compactions []int64
	var f Forecast
	for deadline := time.Now().Add(75 * time.Second); time.Now().Before(deadline); time.Sleep(time.Second) {
		cl, err := src.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(compactions); n == 0 || compactions[n-1] != cl.CompactRevision {
			compactions = append(compactions, cl.CompactRevision)
		}
		trend.Observe(cl, time.Now())
		var ms []Member
		for _, m := range cl.Members {
			ms = append(ms, Member{Name: m.Name, DBSize: m.DBSize, InUse: m.DBInUse, Quota: DefaultQuota, Err: m.Err})
		}
		growth := func(member string) Growth {
			g, _ := trend.Growth(member)
			return g
		}
		var ok bool
		if f, ok = ForecastQuota(ms, growth); !ok {
			t.Fatal("no forecast: no member answered")
		}
		if f.Urgent() {
			t.Errorf("%s: warns %s", time.Now().Format(time.TimeOnly), f)
		}
	}
	if len(compactions) < 4 || f.Growth.Compactions < 3 {
		t.Errorf("compact_rev_key read as %v, the last forecast's growth %+v: want 3 compactions at least", compactions, f.Growth)
	}
	if f.Growing && f.Left < urgentWithin {
		t.Errorf("after %d compactions: %s", len(compactions), f)
	}
	t.Logf("%d values of compact_rev_key read; last forecast: %s", len(compactions), f)
}

// failures are the errors cp reported so far.
func failures(cp *controlplane.ControlPlane) []error {
	var errs []error
	for {
		select {
		case err := <-cp.Errors():
			errs = append(errs, err)
		default:
			return errs
		}
	}
}

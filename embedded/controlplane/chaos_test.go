package controlplane

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/demo"
	"github.com/etcdscope/etcdscope/embedded"
	"github.com/etcdscope/etcdscope/etcdview"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// chaosFor is how long members are stopped and killed;
// ETCDSCOPE_CHAOS=10m runs longer.
func chaosFor(t *testing.T) time.Duration {
	d := 3 * time.Minute
	if s := os.Getenv("ETCDSCOPE_CHAOS"); s != "" {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			t.Fatalf("ETCDSCOPE_CHAOS=%s: %v", s, err)
		}
	}
	return d
}

// TestChaosUnderTheBusyDemo runs the busy demo on 3 members while, in
// turn, a follower is stopped and restarted and the leader is killed (no
// hand-over) and restarted, for chaosFor. Meanwhile a tail watches
// /registry/ as the TUI's does, and an admin creates a ConfigMap every
// second with the real kubectl, retrying each for up to 30 s as its user
// would. After: the tail holds every change etcd replays from where it
// began, once; every create went through; the goroutines are back to about
// what they were.
func TestChaosUnderTheBusyDemo(t *testing.T) {
	if !inChild(t) {
		requireKubectl(t)
		for _, line := range strings.Split(runChild(t), "\n") {
			if strings.Contains(line, "creates, revisions") {
				t.Log(strings.TrimSpace(line))
			}
		}
		return
	}
	cp := start(t, Options{Cluster: embedded.Options{Members: 3}, APIServer: true, Demo: demo.Busy, Nodes: 2})
	waitReady(t, cp)
	cli := chaosClient(t, cp)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := headRevision(t, cli) + 1
	seen := tailFrom(ctx, cli, first)
	create := kubectlCreate(t, cp.APIServer().Kubeconfig)
	time.Sleep(10 * time.Second) // the demo settles before the baseline is taken
	baseline := runtime.NumGoroutine()

	stopWrites, failed := writeEvery(create, time.Second, 30*time.Second)
	chaos(t, cp, chaosFor(t))
	writes := stopWrites()
	if n := failed.Load(); n > 0 {
		t.Errorf("%d of %d creates did not go through within 30 s", n, writes)
	}
	last := headRevision(t, cli)
	checkTail(t, cli, seen, first, last)

	// Goroutines of restarted watches and clients end: the count comes
	// back near the baseline (the demo goes on, so not to it exactly).
	deadline := time.Now().Add(time.Minute)
	for runtime.NumGoroutine() > baseline+baseline/5+20 {
		if time.Now().After(deadline) {
			t.Errorf("goroutines: %d before the chaos, %d a minute after", baseline, runtime.NumGoroutine())
			break
		}
		time.Sleep(time.Second)
	}
	t.Logf("%d creates, revisions %d..%d, goroutines %d → %d", writes, first, last, baseline, runtime.NumGoroutine())
}

func chaosClient(t *testing.T, cp *ControlPlane) *clientv3.Client {
	cfg, err := cp.Cluster().ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Logger = zap.NewNop()
	cli, err := clientv3.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

func headRevision(t *testing.T, cli *clientv3.Client) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := cli.Get(ctx, "/never-a-key")
	if err != nil {
		t.Fatal(err)
	}
	return resp.Header.Revision
}

// tail is what a tail of /registry/ received: how often each key@revision,
// and the keys it saw created.
type tail struct {
	mu      sync.Mutex
	seen    map[string]int
	created map[string]bool
	head    int64
}

// missing are the keys of want the tail has not seen created.
func (tl *tail) missing(want []string) []string {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	var out []string
	for _, k := range want {
		if !tl.created[k] {
			out = append(out, k)
		}
	}
	return out
}

func tailFrom(ctx context.Context, cli *clientv3.Client, rev int64) *tail {
	tl := &tail{seen: map[string]int{}, created: map[string]bool{}}
	batches := etcdview.NewLive(cli, 0).Watch(ctx, "/registry/", etcdview.WatchOptions{Rev: rev})
	go func() {
		for b := range batches {
			tl.mu.Lock()
			for _, ev := range b.Events {
				tl.seen[fmt.Sprintf("%s@%d", ev.KV.Key, ev.KV.ModRevision)]++
				if ev.Type == etcdview.Added {
					tl.created[ev.KV.Key] = true
				}
			}
			tl.head = max(tl.head, b.Revision)
			tl.mu.Unlock()
		}
	}()
	return tl
}

// requireKubectl skips the test when the real kubectl is missing, or fails it
// under ETCDSCOPE_REQUIRE_KUBECTL=1.
func requireKubectl(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(kubectlBin); err != nil {
		if os.Getenv("ETCDSCOPE_REQUIRE_KUBECTL") != "" {
			t.Fatalf("kubectl required (ETCDSCOPE_REQUIRE_KUBECTL=1): %v", err)
		}
		t.Skipf("no kubectl: %v", err)
	}
}

// kubectlBin is the dispatcher every machine of the project has: it runs
// the kubectl release that matches the server's /version.
const kubectlBin = "/usr/bin/kubectl"

// errExists is a create kubectl refused because an earlier try, whose answer
// was lost to a killed leader, had already made the object.
var errExists = errors.New("already exists")

// kubectlCreate is `kubectl create configmap NAME` against the control
// plane, with a discovery cache of its own as a user's would be.
func kubectlCreate(t *testing.T, kubeconfig string) func(ctx context.Context, name string) error {
	cache := t.TempDir()
	return func(ctx context.Context, name string) error {
		out, err := exec.CommandContext(ctx, kubectlBin, "--kubeconfig", kubeconfig, "--cache-dir", cache,
			"--request-timeout", "10s", "create", "configmap", name).CombinedOutput()
		switch {
		case err == nil:
			return nil
		case strings.Contains(string(out), "AlreadyExists") || strings.Contains(string(out), "already exists"):
			return errExists
		}
		return fmt.Errorf("kubectl create configmap %s: %v: %s", name, err, out)
	}
}

// writeEvery creates a ConfigMap every period, retrying each until it
// goes through or within runs out; stop ends it and says how many it made.
func writeEvery(create func(ctx context.Context, name string) error, period, within time.Duration) (stop func() int, failed *atomic.Int64) {
	failed = new(atomic.Int64)
	done := make(chan struct{})
	var n int
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(period)
		defer tick.Stop()
		for ; ; n++ {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			name := fmt.Sprintf("chaos-%d", n)
			deadline := time.Now().Add(within)
			for {
				ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
				err := create(ctx, name)
				cancel()
				if err == nil || errors.Is(err, errExists) {
					break
				}
				if time.Now().After(deadline) {
					failed.Add(1)
					break
				}
				time.Sleep(500 * time.Millisecond)
			}
		}
	})
	return func() int { close(done); wg.Wait(); return n }, failed
}

// chaos stops a follower and kills the leader in turn, each for a few
// seconds, until d has passed.
func chaos(t *testing.T, cp *ControlPlane, d time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d+2*time.Minute)
	defer cancel()
	for end := time.Now().Add(d); time.Now().Before(end); {
		for _, kill := range []bool{false, true} {
			i := memberIndex(t, cp, kill)
			stop := cp.cluster.StopMember
			if kill {
				stop = cp.cluster.KillMember
			}
			if err := stop(i); err != nil {
				t.Fatalf("stop member %d (leader %v): %v", i, kill, err)
			}
			time.Sleep(3 * time.Second) // down for a while, as in an incident
			if err := cp.cluster.RestartMember(ctx, i); err != nil {
				t.Fatalf("restart member %d: %v", i, err)
			}
			time.Sleep(3 * time.Second)
		}
	}
}

// memberIndex is the leader's index, or a follower's; it waits for a
// leader, which an election after a kill takes a moment to give.
func memberIndex(t *testing.T, cp *ControlPlane, leader bool) int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		ms := cp.cluster.Members()
		for i, m := range ms {
			if m.Running && m.Leader == leader && (leader || slicesHasLeader(ms)) {
				return i
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("no %s within 30 s", map[bool]string{true: "leader", false: "follower"}[leader])
	return -1
}

func slicesHasLeader(ms []embedded.MemberStatus) bool {
	for _, m := range ms {
		if m.Leader {
			return true
		}
	}
	return false
}

// checkTail replays /registry/ from first to last straight from etcd and
// compares with what the tail received.
func checkTail(t *testing.T, cli *clientv3.Client, tl *tail, first, last int64) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		tl.mu.Lock()
		head := tl.head
		tl.mu.Unlock()
		if head >= last {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the tail is at %d, etcd at %d, a minute after the chaos", head, last)
		}
		time.Sleep(200 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	want := map[string]bool{}
replay:
	for resp := range cli.Watch(ctx, "/registry/", clientv3.WithPrefix(), clientv3.WithRev(first)) {
		if err := resp.Err(); err != nil {
			t.Fatal(err)
		}
		for _, ev := range resp.Events {
			if ev.Kv.ModRevision > last {
				break replay
			}
			want[fmt.Sprintf("%s@%d", ev.Kv.Key, ev.Kv.ModRevision)] = true
		}
		if n := len(resp.Events); n > 0 && resp.Events[n-1].Kv.ModRevision >= last {
			break
		}
	}
	tl.mu.Lock()
	defer tl.mu.Unlock()
	lost, repeated := 0, 0
	for k := range want {
		switch n := tl.seen[k]; {
		case n == 0:
			lost++
		case n > 1:
			repeated++
		}
	}
	if lost > 0 || repeated > 0 {
		t.Errorf("of %d changes etcd replays from %d to %d, the tail lost %d and repeated %d", len(want), first, last, lost, repeated)
	}
}

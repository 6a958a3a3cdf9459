package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/embedded"
	"github.com/etcdscope/etcdscope/etcdview/etcdviewtest"
	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// tuiSession is the real etcdscope binary running in a tmux pane.
type tuiSession struct {
	t      *testing.T
	socket string
}

// screenDeadline bounds how long the screen may take to show something. The
// first screens wait on a whole control plane starting (and the demo's
// first Pods) while the rest of the suite compiles and runs beside it: at a
// load of 20 on two cores that took more than 30 s.
const screenDeadline = 90 * time.Second

// startTUI runs etcdscope with args in a fresh tmux server of its own,
// 160x45, and stops it (with q, then by killing the server) at cleanup.
func startTUI(t *testing.T, args ...string) *tuiSession {
	t.Helper()
	return startTUIEnv(t, nil, args...)
}

// startTUIEnv is startTUI with env (NAME=value) added to the environment
// etcdscope runs in.
func startTUIEnv(t *testing.T, env []string, args ...string) *tuiSession {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("ETCDSCOPE_REQUIRE_ETCD") == "1" {
			t.Fatal("tmux is not installed and ETCDSCOPE_REQUIRE_ETCD=1")
		}
		t.Skip("tmux is not installed")
	}
	s := &tuiSession{t: t, socket: fmt.Sprintf("etcdscope-e2e-%d-%s", os.Getpid(), strings.ReplaceAll(t.Name(), "/", "-"))}
	cmd := []string{"new-session", "-d", "-s", "tui", "-x", "160", "-y", "45", "-e", runMainEnv + "=1", "-e", "TERM=xterm-256color"}
	for _, kv := range env {
		cmd = append(cmd, "-e", kv)
	}
	cmd = append(append(cmd, "--", os.Args[0]), args...)
	s.tmux(cmd...)
	t.Cleanup(func() {
		exec.Command("tmux", "-L", s.socket, "send-keys", "-t", "tui", "q").Run()
		deadline := time.Now().Add(screenDeadline)
		for time.Now().Before(deadline) && exec.Command("tmux", "-L", s.socket, "has-session", "-t", "tui").Run() == nil {
			time.Sleep(100 * time.Millisecond)
		}
		exec.Command("tmux", "-L", s.socket, "kill-server").Run()
	})
	return s
}

func (s *tuiSession) tmux(args ...string) string {
	s.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", s.socket}, args...)...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// quit types q and waits until etcdscope has ended.
func (s *tuiSession) quit() {
	s.t.Helper()
	s.keys("q")
	deadline := time.Now().Add(screenDeadline)
	for exec.Command("tmux", "-L", s.socket, "has-session", "-t", "tui").Run() == nil {
		if time.Now().After(deadline) {
			s.t.Fatalf("etcdscope still runs %v after q", screenDeadline)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (s *tuiSession) screen() string { return s.tmux("capture-pane", "-p", "-t", "tui") }

// keys types each argument as tmux send-keys names it ("Enter", "Escape", "j").
func (s *tuiSession) keys(keys ...string) {
	s.tmux(append([]string{"send-keys", "-t", "tui"}, keys...)...)
}

// command runs a command line.
func (s *tuiSession) command(line string) {
	s.keys(":")
	s.tmux("send-keys", "-t", "tui", "-l", line)
	s.keys("Enter")
}

// waitFor polls the screen until ok holds, and fails with the last screen
// when it does not within screenDeadline.
func (s *tuiSession) waitFor(what string, ok func(screen string) bool) string {
	s.t.Helper()
	deadline := time.Now().Add(screenDeadline)
	var last string
	for time.Now().Before(deadline) {
		if last = s.screen(); ok(last) {
			return last
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.t.Fatalf("the screen did not show %s within %v; it shows:\n%s", what, screenDeadline, last)
	return ""
}

// waitText waits until the screen shows every one of want.
func (s *tuiSession) waitText(want ...string) string {
	s.t.Helper()
	return s.waitFor(strings.Join(want, " and "), func(sc string) bool {
		for _, w := range want {
			if !strings.Contains(sc, w) {
				return false
			}
		}
		return true
	})
}

// bundledClient connects to the cluster the TUI started in dir.
func bundledClient(t *testing.T, dir string) *clientv3.Client {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "cluster.json"))
	if err != nil {
		t.Fatal(err)
	}
	var layout struct {
		Members []struct{ ClientPort int } `json:"members"`
	}
	if err := json.Unmarshal(data, &layout); err != nil {
		t.Fatal(err)
	}
	var eps []string
	for _, m := range layout.Members {
		eps = append(eps, fmt.Sprintf("https://127.0.0.1:%d", m.ClientPort))
	}
	tls := filepath.Join(dir, "tls")
	tc, err := (&embedded.TLSFiles{CA: filepath.Join(tls, "ca.crt"), Cert: filepath.Join(tls, "client.crt"), Key: filepath.Join(tls, "client.key")}).ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: eps, TLS: tc, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

// webPod is a Pod the tests write straight into etcd, which no controller
// of the bundled control plane touches: bound to no node (kube-controller-
// manager's PodGC deletes a Pod bound to a node that does not exist, 40 to
// 60 s after it starts, which made TestTUIRestoreEndToEnd lose its Pod on a
// loaded machine) and left to a scheduler that does not run (kube-scheduler
// takes only the Pods of its own schedulerName).
func webPod(image string, phase corev1.PodPhase) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-0", UID: "6f1d3c1a-0000-4000-8000-000000000001", Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{SchedulerName: "by-hand", Containers: []corev1.Container{{Name: "web", Image: image}}},
		Status:     corev1.PodStatus{Phase: phase, PodIP: "10.244.0.7"},
	}
}

var leaderName = regexp.MustCompile(`leader (etcd-\d+) ★`)

// TestTUIEndToEnd drives the real binary on the bundled cluster through
// browse, tail, history, time travel, and the loss of the leader.
func TestTUIEndToEnd(t *testing.T) {
	dir := t.TempDir()
	s := startTUI(t, "--data-dir", dir, "--demo=off")
	s.waitText("3/3 members up")
	cli := bundledClient(t, dir)

	rev1 := etcdviewtest.Put(t, cli, webPod("nginx:1.27", corev1.PodPending))
	etcdviewtest.Put(t, cli, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}})

	// Open the Pod: its status section shows.
	s.command("key /registry/pods/default/web-0")
	s.waitText("/registry/pods/default/web-0  rev", "status:", "phase: Pending")

	rev2 := s.updateInTailThenHistory(cli, rev1)

	// Back to the first revision: the older value.
	s.command(fmt.Sprintf("rev %d", rev1))
	s.waitText(fmt.Sprintf("@rev %d", rev1), fmt.Sprintf("web-0  rev %d", rev1), "image: nginx:1.27")
	s.command("rev head")
	s.waitText(fmt.Sprintf("web-0  rev %d", rev2), "image: nginx:1.28")

	// Stop the leader from the cluster pane.
	s.keys("4")
	screen := s.waitFor("a leader", func(sc string) bool { return leaderName.MatchString(sc) && strings.Contains(sc, "ENDPOINT") })
	old := leaderName.FindStringSubmatch(screen)[1]
	var idx int
	fmt.Sscanf(strings.TrimPrefix(old, "etcd-"), "%d", &idx)
	for range idx {
		s.keys("Down")
	}
	s.keys("k")
	screen = s.waitFor("a new leader and the old one unreachable", func(sc string) bool {
		m := leaderName.FindStringSubmatch(sc)
		return m != nil && m[1] != old && strings.Contains(sc, "unreachable") && strings.Contains(sc, "2/3 members up")
	})
	t.Logf("after stopping %s:\n%s", old, screen)

	// The tail goes on.
	ctx, cancel := context.WithTimeout(context.Background(), screenDeadline)
	defer cancel()
	var rev3 int64
	for rev3 == 0 {
		// The first write after the loss may race the client's failover.
		if ctx.Err() != nil {
			t.Fatal("no write succeeded after the leader stopped")
		}
		val, err := etcdviewtest.Encode(webPod("nginx:1.29", corev1.PodRunning))
		if err != nil {
			t.Fatal(err)
		}
		wctx, wcancel := context.WithTimeout(ctx, 5*time.Second)
		resp, err := cli.Put(wctx, "/registry/pods/default/web-0", string(val))
		wcancel()
		if err == nil {
			rev3 = resp.Header.Revision
		}
	}
	s.keys("2")
	s.waitText(fmt.Sprint(rev3), "MODIFIED")
}

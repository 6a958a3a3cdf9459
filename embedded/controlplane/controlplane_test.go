package controlplane

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/demo"
	"github.com/etcdscope/etcdscope/embedded"
	"golang.org/x/sys/unix"
	"k8s.io/client-go/tools/clientcmd"
)

func start(t *testing.T, opts Options) *ControlPlane {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cp, err := Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cp.Close() })
	return cp
}

// childEnv names the test a child process of the test binary runs.
const childEnv = "CONTROLPLANE_TEST_CHILD"

// inChild says whether this process is the child running t; runChild runs
// t alone in one. kube-controller-manager runs once per process, so each
// test that starts Kubernetes' control plane runs in a process of its own,
// as etcdscope does.
func inChild(t *testing.T) bool { return os.Getenv(childEnv) == t.Name() }

func runChild(t *testing.T, env ...string) (output string) {
	t.Helper()
	// Each child bounds its own waits; this only stops a hung one.
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^"+regexp.QuoteMeta(t.Name())+"$", "-test.v")
	cmd.Env = append(append(os.Environ(), childEnv+"="+t.Name()), env...)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("%s in its own process: %v\n%s", t.Name(), err, out)
	}
	return string(out)
}

// waitReady waits for kube-apiserver's /readyz, failing on an error first.
func waitReady(t *testing.T, cp *ControlPlane) {
	t.Helper()
	select {
	case <-cp.Ready():
	case err := <-cp.Errors():
		t.Fatalf("before ready: %v", err)
	case <-time.After(2 * time.Minute):
		t.Fatal("the control plane was not ready within 2 minutes")
	}
}

// TestControlPlaneServesAndCloses runs the control plane with its
// kubeconfig until it is ready, with what libraries write to stderr sent to
// its log; Close then ends Errors without an error, gives stderr back, and
// removes the temporary data dir with the kubeconfig and the logs.
func TestControlPlaneServesAndCloses(t *testing.T) {
	if !inChild(t) {
		out := runChild(t)
		if strings.Contains(out, "written while captured") || !strings.Contains(out, "written after Close") {
			t.Errorf("stderr was not captured, then given back:\n%s", out)
		}
		return
	}
	cp := start(t, Options{Cluster: embedded.Options{Members: 1}, APIServer: true, CaptureStderr: true})
	waitReady(t, cp)
	// What a library's logger does: write to file descriptor 2.
	if _, err := unix.Write(2, []byte("written while captured\n")); err != nil {
		t.Fatal(err)
	}
	if log, err := os.ReadFile(cp.APIServer().Log); err != nil || !strings.Contains(string(log), "written while captured") {
		t.Errorf("the log does not hold what was written to stderr (%v)", err)
	}
	api := cp.APIServer()
	cfg, err := clientcmd.LoadFromFile(api.Kubeconfig)
	if err != nil {
		t.Fatalf("kubeconfig: %v", err)
	}
	if cfg.CurrentContext == "" || cfg.Clusters[cfg.Contexts[cfg.CurrentContext].Cluster].Server != api.URL {
		t.Errorf("the kubeconfig's current context does not reach %s: %+v", api.URL, cfg)
	}
	if _, err := os.Stat(api.Log); err != nil {
		t.Errorf("the control plane's log: %v", err)
	}
	dir := cp.Cluster().DataDir()
	if err := cp.Close(); err != nil {
		t.Fatal(err)
	}
	for err := range cp.Errors() {
		t.Errorf("Close reported %v", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the temporary data dir is left after Close (stat: %v)", err)
	}
	if err := cp.Close(); err != nil {
		t.Errorf("a second Close: %v", err)
	}
	if _, err := unix.Write(2, []byte("written after Close\n")); err != nil {
		t.Fatal(err)
	}
}

// TestAControlPlaneThatStopsIsReported gives kube-apiserver an encryption
// configuration it refuses: it stops, and Errors says so.
func TestAControlPlaneThatStopsIsReported(t *testing.T) {
	if !inChild(t) {
		runChild(t)
		return
	}
	broken := filepath.Join(t.TempDir(), "encryption.yaml")
	if err := os.WriteFile(broken, []byte("kind: EncryptionConfiguration\nresources: [{resources: [secrets], providers: [{aescbc: {keys: [{name: k, secret: not-base64}]}}]}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cp := start(t, Options{Cluster: embedded.Options{Members: 1}, APIServer: true, EncryptionConfig: broken})
	select {
	case err := <-cp.Errors():
		if err == nil || !strings.Contains(err.Error(), "the control plane stopped: kube-apiserver") {
			t.Errorf("Errors gave %v, want kube-apiserver's stop", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("kube-apiserver's stop did not reach Errors within a minute")
	}
}

func TestMembersStopAndRestartByName(t *testing.T) {
	cp := start(t, Options{Cluster: embedded.Options{Members: 3}})
	if w := cp.Writes(); cp.APIServer() != (APIServer{}) || w != nil || cp.Reactions() != nil || cp.Ready() != nil {
		t.Errorf("a control plane or a demo runs without being asked for")
	}
	if err := cp.StopMember("etcd-9"); err == nil || !strings.Contains(err.Error(), `no member "etcd-9"`) {
		t.Errorf("stop of an unknown member: %v", err)
	}
	name := cp.Cluster().Members()[1].Name
	running := func() bool { return cp.Cluster().Members()[1].Running }
	if err := cp.StopMember(name); err != nil || running() {
		t.Fatalf("stop %s: %v, running %v", name, err, running())
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := cp.RestartMember(ctx, name); err != nil || !running() {
		t.Fatalf("restart %s: %v, running %v", name, err, running())
	}
}

// TestAKeptDataDirStartsAgainWithTheDemo starts the demo twice on one
// --data-dir, each time in a process of its own as a user would: the second
// start finds the PKI, the bootstrap objects and the Services' cluster IPs
// there, and goes on. Each time the components' reactions and
// kube-apiserver's writes come out.
func TestAKeptDataDirStartsAgainWithTheDemo(t *testing.T) {
	const dirEnv = "CONTROLPLANE_TEST_DIR"
	if !inChild(t) {
		dir := t.TempDir()
		t.Cleanup(func() { // before the dir goes: what the control plane logged
			if t.Failed() {
				b, _ := os.ReadFile(filepath.Join(dir, "kubernetes.log"))
				t.Logf("the end of kubernetes.log:\n%s", b[max(0, len(b)-8000):])
			}
		})
		for range 2 {
			runChild(t, dirEnv+"="+dir)
		}
		return
	}
	cp := start(t, Options{Cluster: embedded.Options{Members: 1, DataDir: os.Getenv(dirEnv)}, APIServer: true, Demo: demo.Calm, Nodes: 1})
	writes, stopWrites := cp.Writes().Subscribe(1024)
	defer stopWrites()
	waitReady(t, cp)
	reactions, stopReactions := cp.Reactions().Subscribe(1024)
	defer stopReactions()
	for name, ch := range map[string]<-chan struct{}{"reaction": seen(reactions), "write": seen(writes)} {
		select {
		case <-ch:
		case err := <-cp.Errors():
			t.Fatal(err)
		case <-time.After(time.Minute):
			t.Errorf("no %s within a minute", name)
		}
	}
}

// seen closes when the first value comes on ch, and drains ch after.
func seen[T any](ch <-chan T) <-chan struct{} {
	first := make(chan struct{})
	go func() {
		if _, ok := <-ch; ok {
			close(first)
		}
		for range ch {
		}
	}()
	return first
}

// TestBootstrapWritesArriveAfterStart watches /registry/ from the revision
// etcd is at when Start returns, as the TUI's tail does: kube-apiserver's
// bootstrap writes (the system namespaces, the RBAC bootstrap policy, the
// priority classes, the flow-control schemas) arrive on it as they happen.
func TestBootstrapWritesArriveAfterStart(t *testing.T) {
	if !inChild(t) {
		runChild(t)
		return
	}
	cp := start(t, Options{Cluster: embedded.Options{Members: 1}, APIServer: true})
	cli := chaosClient(t, cp)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tl := tailFrom(ctx, cli, headRevision(t, cli)+1)
	waitReady(t, cp)
	want := []string{
		"/registry/namespaces/kube-system", "/registry/clusterroles/cluster-admin",
		"/registry/clusterrolebindings/system:kube-controller-manager",
		"/registry/priorityclasses/system-node-critical", "/registry/flowschemas/exempt",
		"/registry/prioritylevelconfigurations/exempt",
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		missing := tl.missing(want)
		if len(missing) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("30 s after /readyz, the tail has not seen the creation of %v", missing)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

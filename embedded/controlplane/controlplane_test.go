package controlplane

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/demo"
	"github.com/etcdscope/etcdscope/embedded"
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

// TestAPIServerThatStopsOnItsOwnIsReported runs the API server with its
// kubeconfig, stops the server underneath the control plane, and expects
// Errors to say so; Close then ends Errors and removes the temporary data
// dir with the kubeconfig and the logs.
func TestAPIServerThatStopsOnItsOwnIsReported(t *testing.T) {
	cp := start(t, Options{Cluster: embedded.Options{Members: 1}, APIServer: true})
	api := cp.APIServer()
	cfg, err := clientcmd.LoadFromFile(api.Kubeconfig)
	if err != nil {
		t.Fatalf("kubeconfig: %v", err)
	}
	if cfg.CurrentContext == "" || cfg.Clusters[cfg.Contexts[cfg.CurrentContext].Cluster].Server != api.URL {
		t.Errorf("the kubeconfig's current context does not reach %s: %+v", api.URL, cfg)
	}
	if _, err := os.Stat(api.Log); err != nil {
		t.Errorf("the API server's log: %v", err)
	}

	if err := cp.api.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-cp.Errors():
		if err == nil || !strings.Contains(err.Error(), "the API server stopped") {
			t.Errorf("Errors gave %v, want the API server's stop", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the API server's stop did not reach Errors within 30s")
	}

	dir := cp.Cluster().DataDir()
	if err := cp.Close(); err != nil {
		t.Fatal(err)
	}
	if err, open := <-cp.Errors(); open {
		t.Errorf("Errors still open after Close, gave %v", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the temporary data dir is left after Close (stat: %v)", err)
	}
}

// TestCloseIsNoFailure closes a control plane whose API server serves:
// Errors ends without an error.
func TestCloseIsNoFailure(t *testing.T) {
	cp := start(t, Options{Cluster: embedded.Options{Members: 1}, APIServer: true})
	if err := cp.Close(); err != nil {
		t.Fatal(err)
	}
	for err := range cp.Errors() {
		t.Errorf("Close reported %v", err)
	}
	if err := cp.Close(); err != nil {
		t.Errorf("a second Close: %v", err)
	}
}

func TestMembersStopAndRestartByName(t *testing.T) {
	cp := start(t, Options{Cluster: embedded.Options{Members: 3}})
	if cp.APIServer() != (APIServer{}) || cp.Writes() != nil || cp.Reactions() != nil {
		t.Errorf("an API server or a demo runs without being asked for")
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
// --data-dir: the second start finds the bootstrap objects there, the
// Services' cluster IPs taken, and goes on. Each time the components'
// reactions and the API server's writes come out.
func TestAKeptDataDirStartsAgainWithTheDemo(t *testing.T) {
	dir := t.TempDir()
	for run := range 2 {
		cp := start(t, Options{Cluster: embedded.Options{Members: 1, DataDir: dir}, Demo: demo.Calm, Nodes: 1})
		reactions, stopReactions := cp.Reactions().Subscribe(1024)
		writes, stopWrites := cp.Writes().Subscribe(1024)
		for name, ch := range map[string]<-chan struct{}{"reaction": seen(reactions), "write": seen(writes)} {
			select {
			case <-ch:
			case <-time.After(30 * time.Second):
				t.Errorf("run %d: no %s within 30s", run, name)
			}
		}
		stopReactions()
		stopWrites()
		if err := cp.Close(); err != nil {
			t.Fatalf("run %d: %v", run, err)
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

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

var (
	kubeconfigOnScreen = regexp.MustCompile(`kubectl --kubeconfig (\S+/kubeconfig)`)
	tailKept           = regexp.MustCompile(`tail (\d+)/\d+ kept`)
)

const e2eManifest = `apiVersion: v1
kind: ConfigMap
metadata:
  name: e2e-hello
  namespace: default
data:
  greeting: hello
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: e2e-web
  namespace: default
spec:
  replicas: 2
  selector:
    matchLabels: {app: e2e-web}
  template:
    metadata:
      labels: {app: e2e-web}
    spec:
      containers:
      - name: web
        image: nginx:1.27
`

// TestDemoEndToEnd starts etcdscope with no flags: the bundled cluster, the
// API server and the demo come up, the tree and the tail move, a manifest
// applied with the real kubectl shows in the tail and on the write path,
// and q leaves no process and no data dir behind.
func TestDemoEndToEnd(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl is not installed")
	}
	start := time.Now()
	s := startTUI(t)
	s.waitText("[1 browse]", "3/3 members up")
	t.Logf("first screen after %v", time.Since(start))
	s.waitText("pods/", "deployments/", "leases/", "minions/", "endpointslices/")

	// The tail moves on its own.
	first := s.waitFor("a count in the tail", func(sc string) bool { return tailKept.MatchString(sc) })
	n0, _ := strconv.Atoi(tailKept.FindStringSubmatch(first)[1])
	s.waitFor("the tail growing", func(sc string) bool {
		m := tailKept.FindStringSubmatch(sc)
		n, _ := strconv.Atoi(m[1])
		return m != nil && n > n0
	})

	// kubectl, from another process, with the kubeconfig the flow screen names.
	s.keys("5")
	screen := s.waitFor("the kubeconfig", func(sc string) bool { return kubeconfigOnScreen.MatchString(sc) })
	kubeconfig := kubeconfigOnScreen.FindStringSubmatch(screen)[1]
	dataDir := filepath.Dir(kubeconfig)
	manifest := filepath.Join(t.TempDir(), "e2e.yaml")
	if err := os.WriteFile(manifest, []byte(e2eManifest), 0o600); err != nil {
		t.Fatal(err)
	}
	s.keys("p") // hold the write path still once the apply is in
	s.keys("p")
	out, err := exec.Command(kubectl, "--kubeconfig", kubeconfig, "apply", "-f", manifest).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl apply: %v\n%s", err, out)
	}
	s.waitText("default/e2e-web", "admin") // the Deployment, written by kubectl as admin
	s.keys("2")
	s.waitText("default/e2e-hello", "default/e2e-web")
	// The controllers, the scheduler and the kubelets answer.
	s.waitFor("the Deployment's pods running", func(sc string) bool {
		return strings.Contains(sc, "default/e2e-web-")
	})

	s.keys("q")
	deadline := time.Now().Add(screenDeadline)
	for exec.Command("tmux", "-L", s.socket, "has-session", "-t", "tui").Run() == nil {
		if time.Now().After(deadline) {
			t.Fatalf("etcdscope still runs %v after q", screenDeadline)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if _, err := os.Stat(dataDir); !os.IsNotExist(err) {
		t.Errorf("the temporary data dir %s is still there after quit (%v)", dataDir, err)
	}
	if out, err := exec.Command("pgrep", "-f", dataDir).Output(); err == nil {
		t.Errorf("processes left after quit: %s", out)
	}
}

package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/embedded/controlplane"
)

var (
	kubeconfigOnScreen = regexp.MustCompile(`kubectl --kubeconfig (\S+/kubeconfig)`)
	tailKept           = regexp.MustCompile(`tail (\d+)/\d+ kept`)
	writesReceived     = regexp.MustCompile(`write path · (\d+) writes?`)
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

// numberOn is the number the first group of re finds on screen, and whether
// it found one.
func numberOn(re *regexp.Regexp, screen string) (int, bool) {
	m := re.FindStringSubmatch(screen)
	if m == nil {
		return 0, false
	}
	n, err := strconv.Atoi(m[1])
	return n, err == nil
}

// TestDemoEndToEnd starts etcdscope with no flags: the bundled cluster, the
// API server and the demo come up, the tree and the tail move, a manifest
// applied with the real kubectl shows in the tail and on the write path,
// p holds the write path still while writes go on, and q leaves no process
// and no data dir behind.
func TestDemoEndToEnd(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		if os.Getenv("ETCDSCOPE_REQUIRE_KUBECTL") == "1" {
			t.Fatalf("kubectl required (ETCDSCOPE_REQUIRE_KUBECTL=1): %v", err)
		}
		t.Skip("kubectl is not installed")
	}
	start := time.Now()
	// A state dir of its own: the clusters that tests running beside it
	// announce are not there for it to read instead of starting its own.
	s := startTUIEnv(t, []string{controlplane.StateDirEnv + "=" + t.TempDir()})
	s.waitText("[1 browse]", "3/3 members up")
	t.Logf("first screen after %v", time.Since(start))
	s.waitText("pods/", "deployments/", "leases/", "minions/", "endpointslices/")

	// The tail moves on its own.
	n0, _ := numberOn(tailKept, s.waitFor("a count in the tail", func(sc string) bool { _, ok := numberOn(tailKept, sc); return ok }))
	s.waitFor("the tail growing", func(sc string) bool {
		n, ok := numberOn(tailKept, sc)
		return ok && n > n0
	})

	// kubectl, from another process, with the kubeconfig the write path names.
	s.keys("5")
	screen := s.waitFor("the kubeconfig", func(sc string) bool { return kubeconfigOnScreen.MatchString(sc) })
	kubeconfig := kubeconfigOnScreen.FindStringSubmatch(screen)[1]
	dataDir := filepath.Dir(kubeconfig)
	manifest := filepath.Join(t.TempDir(), "e2e.yaml")
	if err := os.WriteFile(manifest, []byte(e2eManifest), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(kubectl, "--kubeconfig", kubeconfig, "apply", "-f", manifest).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl apply: %v\n%s", err, out)
	}
	s.waitText("default/e2e-web", "admin") // the Deployment, written by kubectl as admin

	// Paused, the write path holds its rows while the demo writes on.
	s.keys("p")
	paused, _ := numberOn(writesReceived, s.waitText("paused"))
	s.waitFor("writes counted while paused, the Deployment's still shown", func(sc string) bool {
		n, ok := numberOn(writesReceived, sc)
		return ok && n > paused && strings.Contains(sc, "default/e2e-web")
	})
	s.keys("p")
	s.waitFor("the write path resumed", func(sc string) bool { return !strings.Contains(sc, "paused") })
	// The tail, filtered: the demo's writes have scrolled the apply's by.
	s.keys("2", "/")
	s.tmux("send-keys", "-t", "tui", "-l", "e2e")
	s.keys("Enter")
	s.waitText("default/e2e-hello", "default/e2e-web")
	// The controllers, the scheduler and the kubelets answer.
	s.waitFor("the Deployment's pods running", func(sc string) bool {
		return strings.Contains(sc, "default/e2e-web-")
	})

	s.quit()
	if _, err := os.Stat(dataDir); !os.IsNotExist(err) {
		t.Errorf("the temporary data dir %s is still there after quit (%v)", dataDir, err)
	}
	if out, err := exec.Command("pgrep", "-f", dataDir).Output(); err == nil {
		t.Errorf("processes left after quit: %s", out)
	}
}

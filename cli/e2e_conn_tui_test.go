package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/etcdview/etcdviewtest"
)

// TestCommandsReadTheClusterTheTUIRuns starts the explorer with no
// connection flags, as a user does, and from outside runs get and ls with
// none either: they read the explorer's cluster, whose export line screen
// 4 shows; once the explorer quits, they fail and say how to give one.
func TestCommandsReadTheClusterTheTUIRuns(t *testing.T) {
	dir := t.TempDir()
	s := startTUI(t, "--data-dir", dir, "--demo=off")
	s.waitText("3/3 members up")
	etcdviewtest.PutKeys(t, bundledClient(t, dir), []string{"/registry/configmaps/default/from-the-tui"}, "v")
	// Other tests' clusters announce themselves in the same state dir:
	// --data-dir picks this one, as a user with two running would.
	if got := run(t, "ls", "--data-dir", dir, "/registry/configmaps/default/"); !strings.Contains(got, "/registry/configmaps/default/from-the-tui") {
		t.Errorf("ls with no connection flags printed %q, want the key the TUI's cluster holds", got)
	}
	s.keys("4")
	s.waitText("export ETCDCTL_ENDPOINTS=http", "KUBECONFIG="+dir+"/kubeconfig")
	s.keys("q")
	deadline := time.Now().Add(screenDeadline)
	for {
		code, _, errOut := runCommand(t, "ls", "--data-dir", dir)
		if code == 1 && strings.Contains(errOut, "no bundled cluster runs in "+dir) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after q: exit %d, %q; want the cluster gone", code, errOut)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

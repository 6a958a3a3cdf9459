package cli

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/etcdscope/etcdscope/etcdview/etcdviewtest"
	corev1 "k8s.io/api/core/v1"
)

// applyLine is the restore pane's command line as the screen shows it.
var applyLine = regexp.MustCompile(`(?m)^(etcdscope restore .*) \| kubectl apply -f -\s*$`)

// TestTUIRestoreEndToEnd drives the real binary on the bundled cluster as
// someone who deleted a Pod by mistake: u on a row of its history shows the
// manifest of that revision and the command line to apply it; after the
// delete, u in browse at :rev R shows it as it was. The line on the screen,
// run as it is, prints the same object.
func TestTUIRestoreEndToEnd(t *testing.T) {
	dir := t.TempDir()
	s := startTUI(t, "--data-dir", dir, "--demo=off")
	s.waitText("3/3 members up")
	cli := bundledClient(t, dir)
	rev1 := etcdviewtest.Put(t, cli, webPod("nginx:1.27", corev1.PodPending))
	rev2 := etcdviewtest.Put(t, cli, webPod("nginx:1.28", corev1.PodRunning))

	s.command("key /registry/pods/default/web-0")
	s.waitText("/registry/pods/default/web-0  rev", "image: nginx:1.28")
	s.keys("h")
	s.waitText("[3 history]", fmt.Sprintf("diff revision %d → %d", rev1, rev2))
	s.keys("j", "u")
	screen := s.waitText(fmt.Sprintf("restore /registry/pods/default/web-0 as of revision %d", rev1),
		fmt.Sprintf("etcdscope restore pods/web-0 -n default --rev %d | kubectl apply -f -", rev1), "image: nginx:1.27")
	t.Logf("u on the history row of revision %d:\n%s", rev1, screen)
	for _, set := range []string{"resourceVersion", "uid:", "phase: Pending"} {
		if strings.Contains(screen, set) {
			t.Errorf("the manifest holds %q, which the API server sets:\n%s", set, screen)
		}
	}
	printed := runShown(t, screen, dir)
	if !strings.Contains(printed, "image: nginx:1.27") || !strings.Contains(printed, "name: web-0") {
		t.Errorf("the command line on the screen printed\n%s\nwant the Pod as it was at %d", printed, rev1)
	}

	s.keys("Escape")
	s.waitText("[3 history]", "REV")
	resp, err := cli.Delete(t.Context(), "/registry/pods/default/web-0")
	if err != nil {
		t.Fatal(err)
	}
	s.command(fmt.Sprintf("rev %d", rev2))
	s.waitText(fmt.Sprintf("@rev %d", rev2))
	s.command("key /registry/pods/default/web-0")
	s.waitText(fmt.Sprintf("web-0  rev %d", rev2), "image: nginx:1.28")
	s.keys("u")
	screen = s.waitText(fmt.Sprintf("etcdscope restore pods/web-0 -n default --rev %d | kubectl apply -f -", rev2), "image: nginx:1.28")
	t.Logf("u in browse at :rev %d, the Pod deleted at %d:\n%s", rev2, resp.Header.Revision, screen)
}

// runShown runs, in process, the etcdscope half of the command line the
// screen shows, on the bundled cluster in dir, and returns what it printed.
func runShown(t *testing.T, screen, dir string) string {
	t.Helper()
	m := applyLine.FindStringSubmatch(screen)
	if m == nil {
		t.Fatalf("no command line on the screen:\n%s", screen)
	}
	args := strings.Fields(m[1])[1:]
	return run(t, append(args, "--data-dir", dir)...)
}

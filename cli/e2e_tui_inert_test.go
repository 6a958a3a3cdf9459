package cli

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/etcdscope/etcdscope/etcdview/etcdviewtest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Escape sequences anyone allowed to write a ConfigMap can store: kube-
// apiserver keeps any string in data and annotations.
const (
	setTitle    = "\x1b]0;pwned\x07"
	setClipTo   = "\x1b]52;c;cHduZWQ=\x07" // "pwned", base64, into the clipboard
	clearScreen = "\x1b[2J\x1b[H"
)

// hostileConfigMap carries the sequences in a data value, a data key (a
// direct write to etcd skips the API server's key validation) and an
// annotation.
func hostileConfigMap(greeting string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "motd", UID: "6f1d3c1a-0000-4000-8000-000000000002",
			Annotations: map[string]string{"note": setTitle + setClipTo + clearScreen}},
		Data: map[string]string{"motd": greeting + setTitle + clearScreen + setClipTo, "k" + setTitle: "v"},
	}
}

// TestTUIShowsHostileDataInert writes a ConfigMap whose data and annotation
// set the terminal's title, write its clipboard and clear its screen,
// changes it under the tail and opens it in the object pane: the pane's
// title stays, tmux receives no clipboard write, the screen keeps its header
// and rows, and the sequences show as escapes.
func TestTUIShowsHostileDataInert(t *testing.T) {
	dir := t.TempDir()
	s := startTUI(t, "--data-dir", dir, "--demo=off")
	// With set-clipboard on, an OSC 52 that reached tmux would become a
	// paste buffer.
	s.tmux("set-option", "-g", "set-clipboard", "on")
	s.waitText("3/3 members up")
	title := s.paneTitle()
	cli := bundledClient(t, dir)
	etcdviewtest.Put(t, cli, hostileConfigMap("hello "))

	s.keys("2")
	s.waitText("tail /registry/")
	rev := etcdviewtest.Put(t, cli, hostileConfigMap("bye "))
	tail := s.waitText(fmt.Sprint(rev), "MODIFIED", "default/motd", `data.motd hello \x1b]0;pwned\x07`)
	t.Logf("the tail:\n%s", tail)
	s.checkIntact(title, "REV", "TYPE", "CHANGES")

	s.command("key /registry/configmaps/default/motd")
	object := s.waitText("/registry/configmaps/default/motd  rev "+fmt.Sprint(rev), "note:", "pwned")
	t.Logf("the object pane:\n%s", object)
	s.checkIntact(title, "metadata:", "configmaps/")
	s.keys("Tab", "o")
	s.waitText("  json", `\u001b]0;pwned\u0007`)
	s.checkIntact(title, `"kind": "ConfigMap"`)
}

// TestTUICommandTypedInOneBurst types a command line as tmux sends it, and a
// slow link or a paste delivers it: in one read. Every key of it counts,
// the ":" first.
func TestTUICommandTypedInOneBurst(t *testing.T) {
	db, err := filepath.Abs(kube17 + "boltdb-db")
	if err != nil {
		t.Fatal(err)
	}
	s := startTUI(t, "--db", db)
	s.waitText("pods/")
	s.tmux("send-keys", "-t", "tui", "-l", ":pods default")
	s.keys("Enter")
	s.waitText("/registry/pods/default/", "pi-dqtsw")
}

func (s *tuiSession) paneTitle() string {
	return strings.TrimSpace(s.tmux("display-message", "-p", "-t", "tui", "#{pane_title}"))
}

// checkIntact fails unless the pane's title is still title, no clipboard
// write reached tmux, and the screen shows the header and every one of want.
func (s *tuiSession) checkIntact(title string, want ...string) {
	s.t.Helper()
	if got := s.paneTitle(); got != title {
		s.t.Errorf("the pane title became %q, was %q", got, title)
	}
	if buffers := strings.TrimSpace(s.tmux("list-buffers")); buffers != "" {
		s.t.Errorf("a clipboard write reached tmux: %s", buffers)
	}
	s.waitText(append([]string{"etcdscope", "members up", "browse", "tail", "write path"}, want...)...)
}

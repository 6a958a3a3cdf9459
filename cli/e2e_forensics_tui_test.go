package cli

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestTUIForensicsEndToEnd drives the real binary on the bundled cluster as
// someone who asks what a rollout changed and what it owns: the real
// kubectl restarts CoreDNS, screen 7 names kubectl-rollout as its writer
// and opens the Deployment's history at that revision; then O on the
// Deployment shows its ReplicaSets and Pods, and a Pod opens in the object
// pane.
func TestTUIForensicsEndToEnd(t *testing.T) {
	k := newKubectl(t)
	dir := t.TempDir()
	s := startTUI(t, "--data-dir", dir, "--demo-nodes", "1")
	waitLong(t, s, "3/3 members up", "control plane ready")
	// The TUI writes the kubeconfig of its control plane into its data
	// dir; kubectl's timeouts stay under the minute k.run allows it.
	k.kubeconfig = filepath.Join(dir, "kubeconfig")
	k.run(t, "wait", "--for=create", "--timeout=50s", "-n", "kube-system", "deployment/coredns")
	k.run(t, "-n", "kube-system", "rollout", "status", "deployment/coredns", "--timeout=50s")
	k.run(t, "-n", "kube-system", "rollout", "restart", "deployment", "coredns")

	timelineOfTheRestart(t, s)
	k.run(t, "-n", "kube-system", "rollout", "status", "deployment/coredns", "--timeout=50s")
	ownersOfCoreDNS(t, s)
}

// restartRow is the timeline's row of the CoreDNS Deployment with
// kubectl-rollout among its writers; its group is its last revision in the
// window.
var restartRow = regexp.MustCompile(`(?m)^[> ] +coredns +\+\d+ ~\d+ -\d+ +rev (?:\d+-)?(\d+) .*\bby .*\bkubectl-rollout Update\b`)

func timelineOfTheRestart(t *testing.T, s *tuiSession) {
	s.command("changes 5m /registry/deployments/")
	screen := s.waitFor("the coredns row written by kubectl-rollout", func(sc string) bool {
		return strings.Contains(sc, "[7 timeline]") && restartRow.MatchString(sc)
	})
	t.Logf("screen 7 after kubectl rollout restart:\n%s", screen)
	rev := restartRow.FindStringSubmatch(screen)[1]
	moveTo(t, s, screen, restartRow)
	s.keys("Enter")
	atRev := regexp.MustCompile(`(?m)^> +` + rev + ` `)
	screen = s.waitFor("the history of coredns at revision "+rev, func(sc string) bool {
		return strings.Contains(sc, "[3 history]") && strings.Contains(sc, "history /registry/deployments/kube-system/coredns") && atRev.MatchString(sc)
	})
	// The restart itself is a revision of it: a new generation, a new
	// template (its restartedAt annotation).
	if !restartRevision.MatchString(screen) {
		t.Errorf("the history at revision %s has no revision of the restart:\n%s", rev, screen)
	}
}

var restartRevision = regexp.MustCompile(`(?m)^[> ] +\d+ +\d+ +\d+ metadata\.generation \d+→\d+, spec\.template`)

// treeRow is a row of the owners pane: its cursor, its indent and its
// node's kind and name.
var treeRow = regexp.MustCompile(`^([> ]) ([ │├└─]*)(Deployment|ReplicaSet|Pod)/(\S+) `)

func ownersOfCoreDNS(t *testing.T, s *tuiSession) {
	s.command("key /registry/deployments/kube-system/coredns")
	// O reads the tree's selected key: wait for the tree to reach it.
	selected := regexp.MustCompile(`(?m)^> coredns `)
	s.waitFor("coredns selected in browse", func(sc string) bool {
		return strings.Contains(sc, "[1 browse]") && strings.Contains(sc, "/registry/deployments/kube-system/coredns  rev") && selected.MatchString(sc)
	})
	s.keys("O")
	var pod string
	screen := s.waitFor("Deployment/coredns → ReplicaSet/coredns-… → Pod/coredns-…", func(sc string) bool {
		pod = ownedPod(sc)
		return strings.Contains(sc, "owners of /registry/deployments/kube-system/coredns") && pod != ""
	})
	t.Logf("the owners of coredns:\n%s", screen)
	moveTo(t, s, screen, regexp.MustCompile(`(?m)^[> ] [ │├└─]*Pod/`+regexp.QuoteMeta(pod)+` `))
	s.keys("Enter")
	s.waitText("[1 browse]", "/registry/pods/kube-system/"+pod+"  rev", "kind: Pod", "name: "+pod)
}

// ownedPod is the name of a Pod the screen shows as the dependent of a
// ReplicaSet of coredns, itself the dependent of the Deployment coredns
// on the cursor; "" when it shows none.
func ownedPod(screen string) string {
	var deployment bool
	var rs string // the last ReplicaSet of coredns, and its indent
	var rsIndent int
	for _, line := range strings.Split(screen, "\n") {
		m := treeRow.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		indent := len([]rune(m[2]))
		switch {
		case m[3] == "Deployment":
			deployment = m[1] == ">" && m[4] == "coredns" && indent == 0
		case m[3] == "ReplicaSet" && deployment && indent == 3 && strings.HasPrefix(m[4], "coredns-"):
			rs, rsIndent = m[4], indent
		case m[3] == "Pod" && rs != "" && indent == rsIndent+3 && strings.HasPrefix(m[4], rs+"-"):
			return m[4]
		}
	}
	return ""
}

// moveTo moves the cursor of the list on screen, the row that starts with
// ">", to the first row row matches.
func moveTo(t *testing.T, s *tuiSession, screen string, row *regexp.Regexp) {
	t.Helper()
	cursor, target := -1, -1
	for i, line := range strings.Split(screen, "\n") {
		if strings.HasPrefix(line, "> ") && cursor < 0 {
			cursor = i
		}
		if row.MatchString(line) && target < 0 {
			target = i
		}
	}
	if cursor < 0 || target < 0 {
		t.Fatalf("no cursor (%d) or no row %s (%d) on the screen:\n%s", cursor, row, target, screen)
	}
	key := "j"
	if target < cursor {
		key = "k"
	}
	for range max(target-cursor, cursor-target) {
		s.keys(key)
	}
}

// waitLong waits for want for twice the screen's deadline: the bundled
// control plane starts in tens of seconds on a loaded machine.
func waitLong(t *testing.T, s *tuiSession, want ...string) {
	t.Helper()
	deadline := time.Now().Add(2 * screenDeadline)
	for {
		sc := s.screen()
		missing := ""
		for _, w := range want {
			if !strings.Contains(sc, w) {
				missing = w
			}
		}
		if missing == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %q on the screen within %v:\n%s", missing, 2*screenDeadline, sc)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

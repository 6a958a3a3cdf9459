package ui

import (
	"fmt"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/ui/uitest"
)

// web0Revs are the fixture's three revisions of web-0, newest first.
func web0Revs(t *testing.T, src *uitest.Source) []int64 {
	t.Helper()
	h, err := src.History(t.Context(), "/registry/pods/default/web-0", etcdview.HistoryOptions{})
	if err != nil || len(h.Entries) != 3 {
		t.Fatalf("the fixture's history of web-0: %d entries, %v", len(h.Entries), err)
	}
	return []int64{h.Entries[0].KV.ModRevision, h.Entries[1].KV.ModRevision, h.Entries[2].KV.ModRevision}
}

func TestGoldenRestoreFromAHistoryRow(t *testing.T) {
	for _, size := range [][2]int{{100, 30}, {160, 45}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			tm, src := newTest(t, size[0], size[1])
			revs := web0Revs(t, src)
			waitScreen(t, tm, "pods/", "etcd-0 ★")
			command(tm, "key /registry/pods/default/web-0")
			waitScreen(t, tm, "status:")
			typeText(tm, "h")
			waitScreen(t, tm, "diff revision")
			typeText(tm, "ju")
			line := fmt.Sprintf("etcdscope restore pods/web-0 -n default --rev %d | kubectl apply -f -", revs[1])
			waitScreen(t, tm, line, "image: nginx:1.27", "esc close")
			got := finalView(t, tm)
			// As the API server sets them again on create: not in the manifest.
			for _, set := range []string{"resourceVersion", "uid:", "creationTimestamp", "status:"} {
				if strings.Contains(got, set) {
					t.Errorf("the manifest holds %s:\n%s", set, got)
				}
			}
			golden.RequireEqual(t, []byte(got))
		})
	}
}

func TestRestoreMasksSecretsUntilX(t *testing.T) {
	tm, src := newTest(t, 140, 40)
	rev := src.PutObject(uitest.Pod("default", "web-9", "nginx:1.29", true))
	waitScreen(t, tm, "pods/", "etcd-0 ★")
	command(tm, fmt.Sprintf("rev %d", rev))
	waitScreen(t, tm, fmt.Sprintf("@rev %d", rev))
	command(tm, "key /registry/secrets/default/db-password")
	waitScreen(t, tm, "password:")
	typeText(tm, "u")
	waitScreen(t, tm, fmt.Sprintf("etcdscope restore secrets/db-password -n default --rev %d | kubectl apply -f -", rev), "# left out: Secret default/db-password", "Secrets masked")
	typeText(tm, "x")
	// The manifest holds the data as a Secret's manifest does: base64.
	waitScreen(t, tm, fmt.Sprintf("--rev %d --show-secrets | kubectl apply -f -", rev), "password: aHVudGVyMg==", "Secrets shown")
	press(tm, tea.KeyEsc)
	waitScreen(t, tm, "secrets/", "db-password")
	if got := finalView(t, tm); strings.Contains(got, "kubectl apply") {
		t.Errorf("esc left the restore pane up:\n%s", got)
	}
}

func TestRestoreInBrowseAsksForAPastRevision(t *testing.T) {
	tm, _ := newTest(t, 140, 40)
	waitScreen(t, tm, "pods/", "etcd-0 ★")
	command(tm, "key /registry/pods/default/web-0")
	waitScreen(t, tm, "status:")
	typeText(tm, "u")
	waitScreen(t, tm, "u restores an object as it was: :rev R first")
	finalView(t, tm)
}

// TestRestoreOfACompactedRevisionSaysTheOldest: the history row of a
// revision compacted since it was read names the oldest one left.
func TestRestoreOfACompactedRevisionSaysTheOldest(t *testing.T) {
	tm, src := newTest(t, 160, 40)
	revs := web0Revs(t, src)
	waitScreen(t, tm, "pods/", "etcd-0 ★")
	command(tm, "key /registry/pods/default/web-0")
	waitScreen(t, tm, "status:")
	typeText(tm, "h")
	waitScreen(t, tm, "diff revision")
	src.Compact(revs[0])
	typeText(tm, "jju")
	waitScreen(t, tm, fmt.Sprintf("revision %d has been compacted: the oldest revision etcd still holds is %d", revs[2], revs[0]))
	finalView(t, tm)
}

package ui

import (
	"fmt"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/etcdscope/etcdscope/ui/uitest"
	corev1 "k8s.io/api/core/v1"
)

// TestGoldenPodsColumns is a level of pods with kubectl's columns, in the
// tree's share of the width (narrow), and as a table over the whole
// screen (wide, w).
func TestGoldenPodsColumns(t *testing.T) {
	for _, size := range [][2]int{{100, 30}, {160, 45}} {
		for _, wide := range []bool{false, true} {
			mode := map[bool]string{false: "narrow", true: "wide"}[wide]
			t.Run(fmt.Sprintf("%s_%dx%d", mode, size[0], size[1]), func(t *testing.T) {
				src := uitest.Fixture()
				evicted := uitest.Pod("default", "web-2", "nginx:1.28", false)
				evicted.Status.Phase, evicted.Status.Reason = corev1.PodFailed, "Evicted"
				src.PutObject(evicted)
				tm := startOn(t, size[0], size[1], Options{Source: src, Description: "fixture store"})
				waitScreen(t, tm, "pods/", "etcd-0 ★")
				command(tm, "key /registry/pods/default/")
				waitScreen(t, tm, "READY", "Evicted")
				waitScreen(t, tm, "web-0  rev 12") // the object pane beside
				if wide {
					typeText(tm, "w")
					waitScreen(t, tm, "RESTARTS", "AGE")
				}
				view := finalView(t, tm)
				if pane := strings.Contains(view, "│"); pane == wide {
					t.Errorf("wide %v, object pane drawn %v:\n%s", wide, pane, view)
				}
				golden.RequireEqual(t, []byte(view))
			})
		}
	}
}

func TestOpeningAnObjectLeavesTheWideTable(t *testing.T) {
	m := sized(uitest.Fixture(), 100)
	drive := func(cmd tea.Cmd) {
		uitest.Drive(t, func(msg tea.Msg) tea.Cmd { _, c := m.Update(msg); return c }, cmd)
	}
	drive(m.browse.tree.GoTo("/registry/pods/default/"))
	_, cmd := m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{'w'}})
	drive(cmd)
	if !m.browse.tree.Wide() || strings.Contains(m.View(), "│") {
		t.Fatalf("w did not give the tree the whole screen:\n%s", m.View())
	}
	_, cmd = m.Update(tea.KeyMsg{Type: tea.KeyEnter})
	drive(cmd)
	if m.browse.tree.Wide() || !m.browse.objectFocus || !strings.Contains(m.View(), "│") {
		t.Errorf("enter on a pod left the table wide %v, object focus %v:\n%s", m.browse.tree.Wide(), m.browse.objectFocus, m.View())
	}
}

package contexts

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/etcdscope/etcdscope/ui/common"
)

func newList(rows ...Cluster) *Model {
	m := New(common.DefaultStyles())
	m.SetSize(100, 10)
	m.Set(rows)
	return m
}

// switchTo is the cluster enter asks for, or "" for none.
func switchTo(m *Model) string {
	cmd := m.Update(tea.KeyMsg{Type: tea.KeyEnter})
	if cmd == nil {
		return ""
	}
	return cmd().(SwitchMsg).Name
}

func TestTheCursorStartsOnTheClusterShown(t *testing.T) {
	m := newList(Cluster{Name: "a"}, Cluster{Name: "b", Current: true}, Cluster{Name: "c"})
	if got := switchTo(m); got != "b" {
		t.Errorf("enter at once switches to %q, want the current b", got)
	}
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("j")})
	if got := switchTo(m); got != "c" {
		t.Errorf("j then enter switches to %q, want c", got)
	}
	if got := switchTo(newList()); got != "" {
		t.Errorf("enter on an empty list switches to %q", got)
	}
}

// TestALongNameKeepsTheColumns: a name past maxNameWidth is cut, an
// ellipsis and a gap before its WHAT, and every row's WHAT starts in the
// same column.
func TestALongNameKeepsTheColumns(t *testing.T) {
	long := strings.Repeat("n", 60)
	m := newList(Cluster{Name: long, What: "far"}, Cluster{Name: "short", What: "near", Current: true})
	rows := strings.Split(m.View(), "\n")
	at := func(row, s string) int { return ansi.StringWidth(row[:max(strings.Index(row, s), 0)]) }
	far, near := at(rows[2], "far"), at(rows[3], "near")
	if far == 0 || far != near || strings.Contains(m.View(), long) || !strings.Contains(rows[2], "…  far") {
		t.Errorf("WHAT at %d and %d, the long name whole: %v\n%s", far, near, strings.Contains(m.View(), long), m.View())
	}
}

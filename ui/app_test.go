package ui

import (
	"context"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/etcdscope/etcdscope/ui/uitest"
)

func appOn(src *uitest.Source) *Model {
	m := sized(src, 100)
	m.Update(m.tree.Init()())
	return m
}

func TestCommandLine(t *testing.T) {
	tests := []struct {
		line string
		want []string
	}{
		{"deploy default", []string{"/registry/deployments/default/", "web"}},
		{"key /registry/pods/default/web-0", []string{"web-0  rev 12", "status:"}},
		{"rev 11", []string{"@rev 11"}},
		{"rev 3", []string{"cannot read revision 3", "compacted"}},
		{"nosuch", []string{`"nosuch" is no command`}},
	}
	for _, tc := range tests {
		src := uitest.Fixture()
		src.Compact(5)
		m := appOn(src)
		update := func(msg tea.Msg) tea.Cmd { _, cmd := m.Update(msg); return cmd }
		uitest.Press(update, ":")
		uitest.Type(update, tc.line)
		uitest.Press(update, "enter")
		got := m.View()
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf(":%s: no %q in\n%s", tc.line, w, got)
			}
		}
	}
}

func TestMemberKeysOutsideBundledModeSayWhy(t *testing.T) {
	m := New(context.Background(), Options{Source: uitest.Fixture(), MembersOff: "etcdscope never writes to a live etcd"})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	update := func(msg tea.Msg) tea.Cmd { _, cmd := m.Update(msg); return cmd }
	uitest.Drive(update, m.cluster.Init())
	uitest.Press(update, "4", "k")
	if got := m.View(); !strings.Contains(got, "never writes to a live etcd") {
		t.Errorf("k outside bundled mode:\n%s", got)
	}
}

func TestScreenKeysAndHelp(t *testing.T) {
	m := appOn(uitest.Fixture())
	update := func(msg tea.Msg) tea.Cmd { _, cmd := m.Update(msg); return cmd }
	for _, tc := range []struct{ key, want string }{{"2", "[2 tail]"}, {"3", "[3 history]"}, {"4", "[4 cluster]"}, {"1", "[1 browse]"}, {"?", "move (every list)"}} {
		uitest.Press(update, tc.key)
		if got := m.View(); !strings.Contains(got, tc.want) {
			t.Errorf("%s: no %q in\n%s", tc.key, tc.want, got)
		}
	}
}

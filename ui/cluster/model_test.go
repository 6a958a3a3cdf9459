package cluster

import (
	"errors"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/etcdscope/etcdscope/ui/common"
	"github.com/etcdscope/etcdscope/ui/uitest"
	"github.com/muesli/termenv"
)

func init() { lipgloss.SetColorProfile(termenv.Ascii) }

func TestStopAndRestartSendTheSelectedMember(t *testing.T) {
	src := uitest.Fixture()
	m := New(uitest.Common(src), 0)
	m.SetSize(140, 10)
	m.Update(m.refresh())
	press := func(k string) tea.Msg {
		cmd := m.Update(uitest.Key(k))
		if cmd == nil {
			return nil
		}
		return cmd()
	}
	press("j")
	press("j")
	press("up")
	if got := press("k"); got != (common.StopMemberMsg{Index: 1, Name: "etcd-1"}) {
		t.Errorf("k sent %v, want a stop of etcd-1", got)
	}
	if m.cursor.Pos != 1 {
		t.Errorf("k moved the cursor to %d", m.cursor.Pos)
	}
	if got := press("r"); got != (common.RestartMemberMsg{Index: 1, Name: "etcd-1"}) {
		t.Errorf("r sent %v", got)
	}
}

func TestStoppedMemberShowsUnreachable(t *testing.T) {
	src := uitest.Fixture()
	cl, _ := src.Status(t.Context())
	cl.Members[0].Leader, cl.Members[0].Err = false, errors.New("connect: connection refused")
	cl.Members[1].Leader = true
	src.SetStatus(cl.Members)
	m := New(uitest.Common(src), 0)
	m.SetSize(160, 10)
	m.Update(m.refresh())
	got := m.View()
	if !strings.Contains(got, "unreachable") || !strings.Contains(got, "2/3 members up") {
		t.Errorf("stopped member:\n%s", got)
	}
	st, _ := m.Status()
	if Leader(st.Cluster) != "etcd-1" {
		t.Errorf("leader %q, want etcd-1", Leader(st.Cluster))
	}
}

package cluster

import (
	"context"
	"errors"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/ui/common"
	"github.com/etcdscope/etcdscope/ui/uitest"
	"github.com/muesli/termenv"
)

func init() { lipgloss.SetColorProfile(termenv.Ascii) }

func TestStopAndRestartSendTheSelectedMember(t *testing.T) {
	src := uitest.Fixture()
	m := New(uitest.Common(src), 0, nil)
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
	m := New(uitest.Common(src), 0, nil)
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

func TestExportLineIsWholeAtEveryWidth(t *testing.T) {
	vars := []string{"ETCDCTL_ENDPOINTS=https://127.0.0.1:40001,https://127.0.0.1:40002,https://127.0.0.1:40003",
		"ETCDCTL_CACERT=/tmp/dd/tls/ca.crt", "ETCDCTL_CERT=/tmp/dd/tls/client.crt", "ETCDCTL_KEY=/tmp/dd/tls/client.key"}
	want := "export " + strings.Join(vars, " ")
	for _, tc := range []struct {
		width, rows int
	}{{len(want), 1}, {120, 2}, {60, 4}, {20, 4}} {
		m := New(uitest.Common(uitest.Fixture()), 0, vars)
		m.SetSize(tc.width, 12)
		m.Update(m.refresh())
		view := strings.Split(m.View(), "\n")
		if len(view) != 12 {
			t.Errorf("width %d: the pane is %d rows high, want 12", tc.width, len(view))
		}
		// The rows a mouse selects, pasted into a shell, are the line.
		var pasted []string
		for _, row := range view[12-tc.rows:] {
			pasted = append(pasted, strings.TrimSuffix(strings.TrimRight(row, " "), " \\"))
		}
		if got := strings.Join(strings.Fields(strings.Join(pasted, " ")), " "); got != want || strings.Contains(view[12-tc.rows-1], "ETCDCTL") {
			t.Errorf("width %d: the export rows are\n%s\nwant them to paste as %q", tc.width, strings.Join(view[12-tc.rows:], "\n"), want)
		}
		for _, row := range view[12-tc.rows:] {
			if tc.width >= 100 && len(row) > tc.width {
				t.Errorf("width %d: export row %q is wider", tc.width, row)
			}
		}
		if !strings.Contains(view[2], "etcd-0") {
			t.Errorf("width %d: the members' rows moved:\n%s", tc.width, strings.Join(view, "\n"))
		}
	}
}

// kineSource answers Status as etcdview's Live does for kine: one member,
// no Raft figures, the etcd version kine emulates.
type kineSource struct{ *uitest.Source }

func (kineSource) Status(context.Context) (etcdview.Cluster, error) {
	ep := "unix:///var/lib/rancher/k3s/server/kine.sock"
	return etcdview.Cluster{Description: "etcd at " + ep, Revision: 4242, Kine: true, EmulatedVersion: "3.6.11",
		Members: []etcdview.Member{{Name: "kine", Endpoint: ep, Leader: true, Version: "3.6.11", DBSize: 3 << 20, Revision: 4242}}}, nil
}

func TestKineShowsWhatItEmulatesAndNoRaft(t *testing.T) {
	c := uitest.Common(uitest.Fixture())
	c.Src = kineSource{}
	m := New(c, 0, nil)
	m.SetSize(160, 10)
	m.Update(m.refresh())
	view := strings.Split(m.View(), "\n")
	if !strings.Contains(view[0], "kine (emulating etcd 3.6.11)  revision 4242") {
		t.Errorf("title %q, want kine and the etcd version it emulates", view[0])
	}
	row := strings.Fields(strings.TrimPrefix(view[2], ">")) // the cursor
	if len(row) < 6 || row[0] != "kine" || row[1] != "kine" || row[3] != "-" || row[4] != "-" || row[5] != "-" {
		t.Errorf("kine's row %q, want role kine and no term, index or applied", view[2])
	}
	if strings.Contains(m.View(), "leader ★") {
		t.Errorf("kine shown as a Raft leader:\n%s", m.View())
	}
}

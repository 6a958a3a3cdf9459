package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"
	"github.com/etcdscope/etcdscope/ui/cluster"
	"github.com/etcdscope/etcdscope/ui/common"
)

// chrome is the rows around the body: two header rows, the tabs, the flash
// line, and the footer; a recording's time line is one more.
func (m *Model) chrome() int {
	if m.rec != nil {
		return 6
	}
	return 5
}

func (m *Model) bodyHeight() int { return max(m.height-m.chrome(), 1) }

// layout sizes every screen for the window.
func (m *Model) layout() {
	for _, s := range m.screens {
		s.pane.SetSize(m.width, m.bodyHeight())
	}
	m.clusters.SetSize(m.width, m.bodyHeight())
	m.restore.SetSize(m.width, m.bodyHeight())
}

// View draws the header, the tabs, the flash line, the screen and the footer.
func (m *Model) View() string {
	if m.width == 0 {
		return ""
	}
	rows := []string{m.headerTop(), m.headerStatus()}
	if m.rec != nil {
		rows = append(rows, m.timeLine())
	}
	rows = append(rows, m.tabs(), m.flashLine())
	body := m.body()
	return strings.Join(rows, "\n") + "\n" + common.Box(body, m.width, m.bodyHeight()) + "\n" + m.footer()
}

func (m *Model) body() string {
	switch {
	case m.helpShown:
		return m.helpView()
	case m.clustersShown:
		return m.clusters.View()
	case m.restoreShown:
		return m.restore.View()
	}
	return m.active().View()
}

// spread puts left and right on one row of the window's width.
func (m *Model) spread(left, right string) string {
	gap := m.width - ansi.StringWidth(left) - ansi.StringWidth(right)
	if gap < 1 {
		return common.Fit(left+" "+right, m.width)
	}
	return left + strings.Repeat(" ", gap) + right
}

func (m *Model) headerTop() string {
	s := m.common.Styles
	desc := m.opts.Description
	st, ok := m.cluster.Status()
	if desc == "" && ok {
		desc = st.Cluster.Description
	}
	if ok && st.Cluster.Kine {
		// What answers at the endpoints is kine, not the etcd named.
		desc = strings.Replace(desc, "etcd at ", st.Cluster.Server()+" at ", 1)
	}
	where := "head"
	if ok {
		where = fmt.Sprintf("head rev %d", max(st.Cluster.Revision, m.tail.Head()))
	}
	if rev := m.browse.rev; rev > 0 {
		where = s.Note.Render(fmt.Sprintf("@rev %d", rev))
	}
	if w := m.space.Warning(); w != "" {
		where = s.Down.Render(w) + "  " + where
	}
	return m.spread(s.Title.Render("etcdscope")+"  "+common.Text(desc), where)
}

func (m *Model) headerStatus() string {
	s := m.common.Styles
	st, ok := m.cluster.Status()
	health := s.Faint.Render("members: asking…")
	if ok {
		cl := st.Cluster
		leader := common.Render(s.Leader, "leader "+cluster.Leader(cl)+" ★")
		if cluster.Leader(cl) == "" {
			leader = s.Down.Render("no leader")
		}
		up := fmt.Sprintf("%d/%d members up", cluster.Up(cl), len(cl.Members))
		if cluster.Up(cl) < len(cl.Members) {
			up = s.Down.Render(up)
		}
		switch {
		case cl.Recording:
			// What was recorded: no member to be up or down.
			health = common.Render(s.Leader, "recording, offline")
		case cl.Kine:
			// kine has no Raft: no leader to name.
			health = common.Render(s.Leader, "kine, no Raft") + " · " + up
		default:
			health = leader + " · " + up
		}
	}
	r := m.tail.Ring()
	dropped := fmt.Sprintf("%d dropped", r.Dropped())
	if r.Dropped() > 0 {
		dropped = s.Modified.Render(dropped)
	}
	line := fmt.Sprintf("%s · %.1f ev/s · tail %d/%d kept, %s", health, m.rate.rate(), r.Len(), r.Cap(), dropped)
	if m.opts.ControlPlaneReady != nil {
		cp := s.Faint.Render("control plane starting…")
		if m.controlPlaneReady {
			cp = "control plane ready"
		}
		line += " · " + cp
	}
	if r := m.recordState(); r != "" {
		line += " · " + r
	}
	return common.Fit(line, m.width)
}

func (m *Model) tabs() string {
	s := m.common.Styles
	parts := make([]string, len(m.screens))
	for i, sc := range m.screens {
		label := fmt.Sprintf("%d %s", i+1, sc.name)
		if Screen(i) == m.screen && !m.helpShown && !m.clustersShown {
			parts[i] = s.ActiveTab.Render("[" + label + "]")
		} else {
			parts[i] = s.Tab.Render(" " + label + " ")
		}
	}
	return common.Fit(strings.Join(parts, " "), m.width)
}

func (m *Model) flashLine() string {
	s := m.common.Styles
	switch {
	case m.commanding:
		return common.Fit(m.input.View(), m.width)
	case m.flash == "" && m.switching != "":
		return common.Fit(common.Render(s.Flash, "• switching to "+m.switching+"…"), m.width)
	case m.flash == "":
		return ""
	case m.flashErr:
		return common.Fit(common.Render(s.FlashErr, "✗ "+m.flash), m.width)
	}
	return common.Fit(common.Render(s.Flash, "• "+m.flash), m.width)
}

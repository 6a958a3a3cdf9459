package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/etcdscope/etcdscope/ui/cluster"
	"github.com/etcdscope/etcdscope/ui/common"
)

// chrome is the rows around the body: two header rows, the tabs, the flash
// line, and the footer.
const chrome = 5

func (m *Model) bodyHeight() int { return max(m.height-chrome, 1) }

func (m *Model) treeWidth() int { return max(24, m.width*2/5) }

// layout sizes every pane for the window.
func (m *Model) layout() {
	h := m.bodyHeight()
	tw := m.treeWidth()
	m.tree.SetSize(tw, h)
	m.object.SetSize(max(m.width-tw-1, 1), h)
	m.tail.SetSize(m.width, h)
	m.history.SetSize(m.width, h)
	m.cluster.SetSize(m.width, h)
	m.flow.SetSize(m.width, h)
}

// View draws the header, the tabs, the flash line, the screen and the footer.
func (m *Model) View() string {
	if m.width == 0 {
		return ""
	}
	rows := []string{m.headerTop(), m.headerStatus(), m.tabs(), m.flashLine()}
	body := m.body()
	return strings.Join(rows, "\n") + "\n" + common.Box(body, m.width, m.bodyHeight()) + "\n" + m.footer()
}

func (m *Model) body() string {
	if m.help {
		return m.helpView()
	}
	switch m.screen {
	case Tail:
		return m.tail.View()
	case History:
		return m.history.View()
	case Cluster:
		return m.cluster.View()
	case WritePath:
		return m.flow.View()
	}
	h := m.bodyHeight()
	sep := strings.TrimSuffix(strings.Repeat(m.common.Styles.Separator.Render("│")+"\n", h), "\n")
	return lipgloss.JoinHorizontal(lipgloss.Top, common.Box(m.tree.View(), m.treeWidth(), h), sep, m.object.View())
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
	where := "head"
	if ok {
		where = fmt.Sprintf("head rev %d", max(st.Cluster.Revision, m.tail.Head()))
	}
	if m.rev > 0 {
		where = s.Note.Render(fmt.Sprintf("@rev %d", m.rev))
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
		health = leader + " · " + up
	}
	r := m.tail.Ring()
	dropped := fmt.Sprintf("%d dropped", r.Dropped())
	if r.Dropped() > 0 {
		dropped = s.Modified.Render(dropped)
	}
	return common.Fit(fmt.Sprintf("%s · %.1f ev/s · tail %d/%d kept, %s", health, m.rate, r.Len(), r.Cap(), dropped), m.width)
}

func (m *Model) tabs() string {
	s := m.common.Styles
	var parts []string
	for i, name := range screenNames {
		label := fmt.Sprintf(" %d %s ", i+1, name)
		if Screen(i) == m.screen && !m.help {
			parts = append(parts, s.ActiveTab.Render("["+strings.TrimSpace(label)+"]"))
		} else {
			parts = append(parts, s.Tab.Render(label))
		}
	}
	return common.Fit(strings.Join(parts, " "), m.width)
}

func (m *Model) flashLine() string {
	s := m.common.Styles
	switch {
	case m.commanding:
		return common.Fit(m.input.View(), m.width)
	case m.flash == "":
		return ""
	case m.flashErr:
		return common.Fit(common.Render(s.FlashErr, "✗ "+m.flash), m.width)
	}
	return common.Fit(common.Render(s.Flash, "• "+m.flash), m.width)
}

func (m *Model) footer() string {
	bindings := m.active().ShortHelp()
	if m.screen == Browse {
		bindings = append(bindings, m.keys.Tab)
	}
	bindings = append(bindings, m.keys.ShortHelp()...)
	return common.Fit(m.helpLine(bindings), m.width)
}

func (m *Model) helpLine(bindings []key.Binding) string {
	s := m.common.Styles
	parts := make([]string, 0, len(bindings))
	for _, b := range bindings {
		if b.Enabled() {
			parts = append(parts, s.Key.Render(b.Help().Key)+" "+s.Desc.Render(b.Help().Desc))
		}
	}
	return strings.Join(parts, "  ")
}

// helpView lists every binding, from the keymaps, in columns.
func (m *Model) helpView() string {
	s := m.common.Styles
	nav := common.DefaultNavKeyMap()
	sections := []struct {
		title    string
		bindings [][]key.Binding
	}{
		{"screens", m.keys.FullHelp()},
		{"move (every list)", [][]key.Binding{nav.Bindings()}},
		{"command line", [][]key.Binding{commandHelp}},
		{"browse: tree", m.tree.FullHelp()},
		{"browse: object", m.object.FullHelp()},
		{"tail", m.tail.FullHelp()},
		{"history", m.history.FullHelp()},
		{"cluster", m.cluster.FullHelp()},
		{"write path", m.flow.FullHelp()},
	}
	var blocks [][]string
	for _, sec := range sections {
		var all []key.Binding
		for _, g := range sec.bindings {
			all = append(all, g...)
		}
		kw := 0
		for _, b := range all {
			kw = max(kw, ansi.StringWidth(b.Help().Key))
		}
		block := []string{s.Title.Render(sec.title)}
		for _, b := range all {
			k := b.Help().Key
			block = append(block, " "+s.Key.Render(k)+strings.Repeat(" ", kw-ansi.StringWidth(k)+1)+s.Desc.Render(b.Help().Desc))
		}
		blocks = append(blocks, append(block, ""))
	}
	h := m.bodyHeight()
	var cols [][]string
	var col []string
	for _, b := range blocks {
		if len(col) > 0 && len(col)+len(b) > h {
			cols = append(cols, col)
			col = nil
		}
		col = append(col, b...)
	}
	cols = append(cols, col)
	// Each column as wide as its widest line when they all fit, else equal.
	widths := make([]int, len(cols))
	total := 0
	for i, c := range cols {
		for _, l := range c {
			widths[i] = max(widths[i], ansi.StringWidth(l)+2)
		}
		total += widths[i]
	}
	rendered := make([]string, len(cols))
	for i, c := range cols {
		w := widths[i]
		if total > m.width {
			w = m.width / len(cols)
		}
		rendered[i] = common.Box(strings.Join(c, "\n"), w, h)
	}
	return lipgloss.JoinHorizontal(lipgloss.Top, rendered...)
}

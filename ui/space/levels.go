package space

import (
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/etcdscope/etcdscope/etcdview/space"
	"github.com/etcdscope/etcdscope/ui/common"
)

// onKey moves in the pane that has the cursor, goes down and up the tree,
// sorts, reads again, and opens keys in the object and history screens.
func (m *Model) onKey(msg tea.KeyMsg) tea.Cmd {
	switch {
	case m.job != nil && key.Matches(msg, m.keys.Cancel):
		m.job.Cancel()
		return nil
	case key.Matches(msg, m.keys.Refresh):
		depth := firstDepth
		if m.report != nil {
			depth = m.report.Options.Depth
		}
		return m.read(depth, m.level)
	case m.report == nil:
		return nil
	case key.Matches(msg, m.keys.Sort):
		i := slices.Index(space.Measures, m.by)
		m.by = space.Measures[(i+1)%len(space.Measures)]
		m.refreshRows()
		return nil
	case key.Matches(msg, m.keys.Pane):
		m.nextPane(msg.String() == "shift+tab")
		return nil
	case key.Matches(msg, m.keys.Up):
		return m.up()
	case key.Matches(msg, m.keys.Open):
		return m.open()
	case key.Matches(msg, m.keys.History):
		if k := m.selectedKey(); k != "" {
			return common.Send(common.OpenHistoryMsg{Key: k})
		}
		return nil
	}
	m.cursors[m.pane].Move(m.keys.NavKeyMap, msg, m.paneLen(m.pane))
	return nil
}

// open goes down into the selected directory, reading deeper when the
// report stops above its children, or opens the selected key.
func (m *Model) open() tea.Cmd {
	if k := m.selectedKey(); k != "" {
		return common.Send(common.OpenObjectMsg{Key: k, Rev: m.report.Revision, Focus: true})
	}
	if m.pane != levelPane || len(m.rows) == 0 {
		return nil
	}
	n := m.rows[m.cursors[levelPane].Pos]
	if n.Depth >= m.report.Options.Depth {
		return m.read(n.Depth+1, n.Path)
	}
	m.setLevel(n.Path)
	return nil
}

// up goes to the level above, its cursor on the level it leaves.
func (m *Model) up() tea.Cmd {
	n := m.report.Find(m.level)
	if n == nil || n.Parent() == nil {
		return nil
	}
	from := n.Path
	m.setLevel(n.Parent().Path)
	for i, r := range m.rows {
		if r.Path == from {
			m.cursors[levelPane].Pos = i
		}
	}
	m.cursors[levelPane].Clamp(len(m.rows))
	return nil
}

func (m *Model) setLevel(path string) {
	m.level, m.pane = path, levelPane
	m.cursors = [panes]common.Cursor{}
	m.layoutCursors()
	m.refreshRows()
}

// selectedKey is the key under the cursor: a key of the level, or one of
// the lists; "" on a directory.
func (m *Model) selectedKey() string {
	pos := m.cursors[m.pane].Pos
	switch {
	case m.paneLen(m.pane) == 0:
		return ""
	case m.pane == levelPane:
		if n := m.rows[pos]; n.IsKey() {
			return n.Path
		}
		return ""
	case m.pane == largestPane:
		return m.levelNode().Largest[pos].Key
	case m.pane == hottestPane:
		return m.levelNode().Hottest[pos].Key
	}
	return m.liveKeys()[pos].Key
}

// levelNode is the node of the level in view.
func (m *Model) levelNode() *space.Node {
	if m.report == nil {
		return nil
	}
	return m.report.Find(m.level)
}

// refreshRows sorts the level's nodes by the measure and the rates, the
// cursor staying on the node it was on.
func (m *Model) refreshRows() {
	n := m.levelNode()
	if n == nil {
		m.rows = nil
		return
	}
	c := &m.cursors[levelPane]
	var on string
	if c.Pos < len(m.rows) {
		on = m.rows[c.Pos].Path
	}
	m.rows = space.Sorted(n.Children, m.by, &m.rates, m.report.History)
	for i, r := range m.rows {
		if r.Path == on {
			c.Pos = i
		}
	}
	for p := range panes {
		m.cursors[p].Clamp(m.paneLen(p))
	}
}

// liveKeys are the hottest keys by live rate below the level.
func (m *Model) liveKeys() []space.KeyRate {
	var ks []space.KeyRate
	for _, k := range m.rates.Keys {
		if strings.HasPrefix(k.Key, m.level) {
			ks = append(ks, k)
		}
	}
	return ks
}

func (m *Model) paneLen(p pane) int {
	n := m.levelNode()
	switch {
	case n == nil:
		return 0
	case p == levelPane:
		return len(m.rows)
	case p == largestPane:
		return len(n.Largest)
	case p == hottestPane:
		return len(n.Hottest)
	}
	return len(m.liveKeys())
}

// nextPane moves the cursor to the next pane with rows, or the one before.
func (m *Model) nextPane(back bool) {
	step := pane(1)
	if back {
		step = panes - 1
	}
	for p := (m.pane + step) % panes; p != m.pane; p = (p + step) % panes {
		if m.paneLen(p) > 0 {
			m.pane = p
			return
		}
	}
}

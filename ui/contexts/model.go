// Package contexts is the list :ctx opens, as k9s' contexts view: the
// clusters the explorer can switch to, the one shown marked. It only
// shows them; the app lists them, and switches to the one picked.
package contexts

import (
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/etcdscope/etcdscope/ui/common"
)

// maxNameWidth bounds the NAME column, so that one long name does not push
// every WHAT off the screen.
const maxNameWidth = 32

// Cluster is one row of the list.
type Cluster struct {
	Name, What string
	Current    bool
}

// SwitchMsg asks the app to switch to the cluster Name.
type SwitchMsg struct{ Name string }

// CloseMsg asks the app to close the list.
type CloseMsg struct{}

// Model is the clusters list.
type Model struct {
	styles *common.Styles
	keys   KeyMap

	rows    []Cluster
	lines   []common.Line
	header  string
	loading bool
	cursor  common.Cursor

	width, height int
}

// New is an empty list.
func New(s *common.Styles) *Model { return &Model{styles: s, keys: DefaultKeyMap()} }

// Loading empties the list until Set, while the clusters are read.
func (m *Model) Loading() {
	m.rows, m.lines, m.loading = nil, nil, true
}

// Set shows rows, the cursor on the current one.
func (m *Model) Set(rows []Cluster) {
	m.rows, m.loading = rows, false
	m.cursor.Pos = 0
	for i, r := range rows {
		if r.Current {
			m.cursor.Pos = i
		}
	}
	m.layoutRows()
	m.cursor.Clamp(len(m.rows))
}

// layoutRows lays the rows out as kubectl config get-contexts does: a
// CURRENT column with a *, then NAME and WHAT. Every string comes from a
// config file or from where a cluster was found: it is drawn through the
// inert boundary (common.Text), and measured as drawn; NewLine passes it
// through again, which leaves inert text as it is.
func (m *Model) layoutRows() {
	width := len("NAME")
	for _, r := range m.rows {
		width = max(width, min(maxNameWidth, ansi.StringWidth(common.Text(r.Name))))
	}
	row := func(current, name, what string) string {
		return common.Pad(current, len("CURRENT")+2) + common.Pad(common.Fit(name, width), width+2) + what
	}
	m.header = m.styles.Faint.Render(row("CURRENT", "NAME", "WHAT"))
	m.lines = make([]common.Line, len(m.rows))
	for i, r := range m.rows {
		mark := ""
		if r.Current {
			mark = "*"
		}
		m.lines[i] = common.NewLine(row(mark, common.Text(r.Name), common.Text(r.What)))
	}
}

// Takes says whether msg is one of the list's keys; the app's own (q, :,
// ?, the digits) go on working over it.
func (m *Model) Takes(msg tea.KeyMsg) bool {
	return key.Matches(msg, m.keys.Switch, m.keys.Close, m.keys.Up, m.keys.Down, m.keys.Top, m.keys.Bottom,
		m.keys.HalfUp, m.keys.HalfDown, m.keys.PageUp, m.keys.PageDown)
}

// Update moves the cursor, and asks the app to switch (enter) or to close
// the list (esc).
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	if k, ok := msg.(tea.KeyMsg); ok {
		switch {
		case key.Matches(k, m.keys.Close):
			return common.Send(CloseMsg{})
		case key.Matches(k, m.keys.Switch):
			if len(m.rows) == 0 {
				return nil
			}
			return common.Send(SwitchMsg{Name: m.rows[m.cursor.Pos].Name})
		}
	}
	m.cursor.Move(m.keys.NavKeyMap, msg, len(m.rows))
	return nil
}

// SetSize sets the list's size: a title row and the header above the rows.
func (m *Model) SetSize(w, h int) {
	m.width, m.height = w, h
	m.cursor.Height = max(h-2, 1)
	m.cursor.Clamp(len(m.rows))
}

// View is the title, the header and the rows in view.
func (m *Model) View() string {
	title := m.styles.Title.Render("clusters") + "  " + m.styles.Faint.Render(common.Count(len(m.rows), "cluster"))
	if m.loading {
		return title + "\n" + m.styles.Faint.Render("listing the clusters…")
	}
	return title + "\n" + common.Fit("  "+m.header, m.width) + "\n" +
		common.RenderWindow(m.lines, m.cursor, m.width, m.styles.Selected, true)
}

// ShortHelp lists the list's keys for the footer.
func (m *Model) ShortHelp() []key.Binding { return m.keys.ShortHelp() }

// FullHelp lists the list's keys for the help screen.
func (m *Model) FullHelp() [][]key.Binding { return m.keys.FullHelp() }

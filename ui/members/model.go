// Package members is the view of one key as each etcd member holds it at
// one revision, the key a members check found differing: each member's
// mod revision, version and value hash, then each value that is not the
// majority's as a diff against it, then the majority's value.
//
// A diff against the majority, not the values side by side: a bad disk or
// a bug changes a few bytes of a long object, which three columns of
// YAML, each a third of the screen wide and cut at its edge, hide; the
// diff shows the changed field whole, and reads the same for 3 members
// or 5.
package members

import (
	"fmt"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/etcdview/check"
	"github.com/etcdscope/etcdscope/ui/common"
)

// LoadedMsg carries the members' values read for the view, laid out.
type LoadedMsg struct {
	gen   int
	lines []common.Line
	err   error
}

// CloseMsg asks browse to close the view.
type CloseMsg struct{}

// Model is the members' values view.
type Model struct {
	common common.Common
	keys   KeyMap

	key     string
	rev     int64
	gen     int
	loading bool
	err     error
	lines   []common.Line
	cursor  common.Cursor

	width, height int
	focused       bool
}

// New is an empty view.
func New(c common.Common) *Model { return &Model{common: c, keys: DefaultKeyMap()} }

// Open reads each member's value of key at rev.
func (m *Model) Open(key string, rev int64) tea.Cmd {
	m.key, m.rev, m.err, m.lines, m.loading = key, rev, nil, nil, true
	m.cursor.Pos, m.cursor.Offset = 0, 0
	m.gen++
	c, gen := m.common, m.gen
	return func() tea.Msg {
		ctx, cancel := c.Context()
		defer cancel()
		vals, err := check.MemberValues(ctx, c.Src, key, rev)
		if err != nil {
			return LoadedMsg{gen: gen, err: fmt.Errorf("each member's value of %s at revision %d: %w", decode.EscapeKey(key), rev, err)}
		}
		return LoadedMsg{gen: gen, lines: layout(c.Styles, c.Decoder, key, vals)}
	}
}

// Key is the key shown.
func (m *Model) Key() string { return m.key }

// Focus gives or takes the keyboard focus.
func (m *Model) Focus(on bool) { m.focused = on }

// SetSize sets the view's size.
func (m *Model) SetSize(w, h int) {
	m.width, m.height = w, h
	m.cursor.Height = max(h-1, 1)
	m.cursor.Clamp(len(m.lines))
}

// ShortHelp lists the view's main keys.
func (m *Model) ShortHelp() []key.Binding { return m.keys.ShortHelp() }

// FullHelp lists all the view's keys.
func (m *Model) FullHelp() [][]key.Binding { return m.keys.FullHelp() }

// Update handles the view's keys and its read.
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case LoadedMsg:
		if msg.gen != m.gen {
			return nil
		}
		m.loading, m.err, m.lines = false, msg.err, msg.lines
		m.cursor.Clamp(len(m.lines))
		if msg.err != nil {
			return common.FlashErr(msg.err)
		}
	case tea.KeyMsg:
		if m.cursor.Move(m.keys.NavKeyMap, msg, len(m.lines)) {
			return nil
		}
		switch {
		case key.Matches(msg, m.keys.Close):
			m.gen++
			return common.Send(CloseMsg{})
		case key.Matches(msg, m.keys.Reload) && m.key != "":
			return m.Open(m.key, m.rev)
		}
	case tea.MouseMsg:
		m.cursor.Move(m.keys.NavKeyMap, msg, len(m.lines))
	}
	return nil
}

// View draws the title over the laid-out values.
func (m *Model) View() string {
	s := m.common.Styles
	at := "at the newest revision"
	if m.rev > 0 {
		at = fmt.Sprintf("at revision %d", m.rev)
	}
	title := common.Fit(common.Render(s.Title, decode.EscapeKey(m.key)+" on each member "+at), m.width)
	switch {
	case m.loading:
		return common.FillHeight([]string{title, s.Faint.Render("asking each member…")}, m.height)
	case m.err != nil:
		return common.FillHeight([]string{title, common.Fit(common.Render(s.FlashErr, m.err.Error()), m.width)}, m.height)
	}
	return title + "\n" + common.RenderWindow(m.lines, m.cursor, m.width, s.Selection(m.focused), false)
}

// Package manifest is the restore pane: the manifest etcdview/restore makes
// of one object as it was at a revision, what it left out and why, and the
// command line that applies it. etcdscope prints; the user applies.
package manifest

import (
	"fmt"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/etcdview/restore"
	"github.com/etcdscope/etcdscope/ui/common"
)

// LoadedMsg carries the manifest read for the pane, or why there is none.
type LoadedMsg struct {
	gen int
	m   *restore.Manifest
	err error
}

// CloseMsg asks the app to close the pane.
type CloseMsg struct{}

// Model is the restore pane.
type Model struct {
	common common.Common
	keys   KeyMap

	key         string
	rev         int64
	showSecrets bool
	gen         int
	loading     bool
	err         error
	manifest    *restore.Manifest
	lines       []common.Line
	cursor      common.Cursor

	width, height int
	focused       bool
}

// New is an empty restore pane; Secrets show when the explorer's decoder
// shows them (--show-secrets), until x masks them.
func New(c common.Common) *Model {
	return &Model{common: c, keys: DefaultKeyMap(), showSecrets: c.Decoder.ShowSecrets}
}

// Open reads the manifest of the object at key as it was at rev.
func (m *Model) Open(key string, rev int64) tea.Cmd {
	m.key, m.rev = key, rev
	return m.read()
}

func (m *Model) read() tea.Cmd {
	m.gen++
	m.loading, m.err, m.manifest, m.lines = true, nil, nil, nil
	m.cursor.Pos, m.cursor.Offset = 0, 0
	c, gen, key, rev := m.common, m.gen, m.key, m.rev
	dec := c.Decoder
	dec.ShowSecrets = m.showSecrets
	return func() tea.Msg {
		ctx, cancel := c.Context()
		defer cancel()
		man, err := restore.Object(ctx, c.Src, key, rev, restore.Options{ShowSecrets: dec.ShowSecrets, Decoder: dec})
		if err != nil {
			err = fmt.Errorf("restore %s at revision %d: %w", decode.EscapeKey(key), rev, err)
		}
		return LoadedMsg{gen: gen, m: man, err: err}
	}
}

// Key is the key of the object shown, and Rev its revision.
func (m *Model) Key() string { return m.key }

// Rev is the revision the manifest is of.
func (m *Model) Rev() int64 { return m.rev }

// Focus gives or takes the keyboard focus.
func (m *Model) Focus(on bool) { m.focused = on }

// SetSize sets the pane's size.
func (m *Model) SetSize(w, h int) {
	m.width, m.height = w, h
	m.cursor.Height = max(h-headRows, 1)
	m.cursor.Clamp(len(m.lines))
}

// headRows are the rows above the manifest: the title, the command line
// and a blank row.
const headRows = 3

// ShortHelp lists the pane's main keys.
func (m *Model) ShortHelp() []key.Binding { return m.keys.ShortHelp() }

// FullHelp lists all the pane's keys.
func (m *Model) FullHelp() [][]key.Binding { return m.keys.FullHelp() }

// Takes says whether msg is one of the pane's keys; the app's own (q, :,
// ?, the digits) go on working over it.
func (m *Model) Takes(msg tea.KeyMsg) bool {
	return key.Matches(msg, m.keys.Secrets, m.keys.Close) || key.Matches(msg, m.keys.Bindings()...)
}

// Update handles the pane's keys and its read.
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case LoadedMsg:
		if msg.gen != m.gen {
			return nil
		}
		m.loading, m.err, m.manifest = false, msg.err, msg.m
		if msg.err != nil {
			return common.FlashErr(msg.err)
		}
		m.lines = m.layout()
		m.cursor.Clamp(len(m.lines))
	case tea.KeyMsg:
		if m.cursor.Move(m.keys.NavKeyMap, msg, len(m.lines)) {
			return nil
		}
		switch {
		case key.Matches(msg, m.keys.Close):
			m.gen++ // a read that runs is dropped
			return common.Send(CloseMsg{})
		case key.Matches(msg, m.keys.Secrets) && m.key != "":
			m.showSecrets = !m.showSecrets
			return m.read()
		}
	case tea.MouseMsg:
		m.cursor.Move(m.keys.NavKeyMap, msg, len(m.lines))
	}
	return nil
}

// layout is the manifest's rows: what was left out or dropped, as YAML
// comments (so that the rows copied still apply), then the YAML.
func (m *Model) layout() []common.Line {
	s := m.common.Styles
	var out []common.Line
	for _, l := range m.manifest.LeftOut {
		out = append(out, common.StyledLine(s.Note, fmt.Sprintf("# left out: %s %s: %s", l.Kind, objectName(l.Namespace, l.Name), l.Why)))
	}
	for _, o := range m.manifest.Objects {
		for _, d := range o.Dropped {
			out = append(out, common.StyledLine(s.Faint, fmt.Sprintf("# dropped from %s %s: %s", o.Kind, objectName(o.Namespace, o.Name), d)))
		}
	}
	if len(out) > 0 {
		out = append(out, common.Line{})
	}
	return append(out, s.YAMLLines(string(m.manifest.YAML))...)
}

func objectName(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

// View draws the title, the command line to copy, and the manifest.
func (m *Model) View() string {
	s := m.common.Styles
	secrets := "Secrets masked: x reveals"
	if m.showSecrets {
		secrets = "Secrets shown: x masks"
	}
	title := common.Render(s.Title, fmt.Sprintf("restore %s as of revision %d", decode.EscapeKey(m.key), m.rev)) + s.Faint.Render("  "+secrets)
	// The command line is drawn bare, for a mouse to copy whole.
	line := common.Text(ApplyLine(m.common.Decoder.Keys, m.key, m.rev, m.showSecrets))
	rows := []string{common.Fit(title, m.width), common.Fit(line, m.width), ""}
	switch {
	case m.loading:
		return common.FillHeight(append(rows, s.Faint.Render("reading the object as it was…")), m.height)
	case m.err != nil:
		return common.FillHeight(append(rows, common.Fit(common.Render(s.FlashErr, m.err.Error()), m.width)), m.height)
	}
	return common.FillHeight(rows, headRows) + "\n" + common.RenderWindow(m.lines, m.cursor, m.width, s.Selection(m.focused), false)
}

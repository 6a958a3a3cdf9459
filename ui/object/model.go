// Package object is the object pane: one etcd value decoded as YAML in
// foldable sections, or as JSON, raw bytes, or etcd's metadata.
package object

import (
	"errors"
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/ui/common"
)

// Mode is what the pane shows of the value.
type Mode int

const (
	ModeYAML Mode = iota
	ModeJSON
	ModeRaw
	ModeMeta
)

func (m Mode) String() string {
	return [...]string{"yaml", "json", "raw", "etcd"}[m]
}

type state int

const (
	empty state = iota
	loading
	ready
	failed
)

// LoadedMsg carries a value read and rendered for request gen.
type LoadedMsg struct {
	gen int
	r   Rendered
	err error
}

// Model is the object pane.
type Model struct {
	common common.Common
	keys   KeyMap

	key   string
	rev   int64
	gen   int
	state state
	err   error
	r     Rendered

	mode        Mode
	folded      map[string]bool
	showSecrets bool
	showManaged bool

	lines  []common.Line
	owner  []int // section index of each line of the YAML view, -1 for the head
	cursor common.Cursor

	width, height int
	focused       bool
}

// New is an empty object pane.
func New(c common.Common) *Model {
	return &Model{common: c, keys: DefaultKeyMap(), folded: map[string]bool{}}
}

// Open reads key as of rev (0: newest) and shows it.
func (m *Model) Open(key string, rev int64) tea.Cmd {
	if key != m.key {
		// Folds are of one object's sections: the next opens unfolded.
		m.cursor = common.Cursor{Height: m.cursor.Height}
		m.showSecrets, m.folded = false, map[string]bool{}
	}
	m.key, m.rev = key, rev
	m.gen++
	m.state = loading
	gen, c, d := m.gen, m.common, m.decoder()
	return func() tea.Msg {
		ctx, cancel := c.Context()
		defer cancel()
		kv, err := c.Src.Get(ctx, key, rev)
		if err != nil {
			return LoadedMsg{gen: gen, err: readError(key, rev, err)}
		}
		return LoadedMsg{gen: gen, r: Render(c.Styles, d, kv)}
	}
}

func readError(key string, rev int64, err error) error {
	at := "the newest revision"
	if rev > 0 {
		at = fmt.Sprintf("revision %d", rev)
	}
	if errors.Is(err, etcdview.ErrNotFound) {
		return fmt.Errorf("%s does not exist at %s", key, at)
	}
	return fmt.Errorf("get %s at %s: %w", key, at, err)
}

// redecode renders the value held again, after a decoder option changed;
// a read under way is made again, with the option.
func (m *Model) redecode() tea.Cmd {
	if m.state == loading {
		return m.Open(m.key, m.rev)
	}
	if m.r.KV == nil {
		return nil
	}
	m.gen++
	gen, c, d, kv := m.gen, m.common, m.decoder(), m.r.KV
	return func() tea.Msg { return LoadedMsg{gen: gen, r: Render(c.Styles, d, kv)} }
}

func (m *Model) decoder() decode.Decoder {
	d := m.common.Decoder
	d.ShowSecrets = m.showSecrets
	d.ShowManagedFields = m.showManaged
	return d
}

// Key is the key shown, "" when none.
func (m *Model) Key() string { return m.key }

// Rev is the revision asked for, 0 for the newest.
func (m *Model) Rev() int64 { return m.rev }

// Focus gives or takes the keyboard focus.
func (m *Model) Focus(on bool) { m.focused = on }

// SetSize sets the pane's size.
func (m *Model) SetSize(w, h int) {
	m.width, m.height = w, h
	m.cursor.Height = max(h-1, 1)
	m.cursor.Clamp(len(m.lines))
}

// ShortHelp lists the pane's main keys.
func (m *Model) ShortHelp() []key.Binding { return m.keys.ShortHelp() }

// FullHelp lists all the pane's keys.
func (m *Model) FullHelp() [][]key.Binding { return m.keys.FullHelp() }

// Update handles the pane's keys and its reads.
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case LoadedMsg:
		if msg.gen != m.gen {
			return nil
		}
		if msg.err != nil {
			m.state, m.err, m.r = failed, msg.err, Rendered{}
			m.relayout()
			return nil
		}
		m.state, m.err, m.r = ready, nil, msg.r
		m.relayout()
	case tea.KeyMsg:
		return m.onKey(msg)
	case tea.MouseMsg:
		m.cursor.Move(m.keys.NavKeyMap, msg, len(m.lines))
	}
	return nil
}

func (m *Model) onKey(msg tea.KeyMsg) tea.Cmd {
	if m.cursor.Move(m.keys.NavKeyMap, msg, len(m.lines)) {
		return nil
	}
	setMode := func(mode Mode) tea.Cmd {
		m.mode = mode
		m.cursor.Pos, m.cursor.Offset = 0, 0
		m.relayout()
		return nil
	}
	switch {
	case key.Matches(msg, m.keys.YAML):
		return setMode(ModeYAML)
	case key.Matches(msg, m.keys.JSON):
		return setMode(ModeJSON)
	case key.Matches(msg, m.keys.Raw):
		return setMode(ModeRaw)
	case key.Matches(msg, m.keys.Meta):
		return setMode(ModeMeta)
	case key.Matches(msg, m.keys.ManagedFields):
		m.showManaged = !m.showManaged
		return m.redecode()
	case key.Matches(msg, m.keys.Secrets):
		switch {
		case m.state != ready:
			return nil // what is read may or may not be a Secret
		case m.r.Kind != "Secret":
			return common.Flash("x reveals Secret data; this is no Secret")
		}
		m.showSecrets = !m.showSecrets
		return m.redecode()
	case key.Matches(msg, m.keys.Fold):
		m.toggleFold()
	case key.Matches(msg, m.keys.FoldAll):
		m.toggleFoldAll()
	case key.Matches(msg, m.keys.History):
		if m.key != "" {
			return common.Send(common.OpenHistoryMsg{Key: m.key, Rev: m.r.modRev()})
		}
	}
	return nil
}

func (r Rendered) modRev() int64 {
	if r.KV == nil {
		return 0
	}
	return r.KV.ModRevision
}

func (m *Model) toggleFold() {
	if m.mode != ModeYAML || m.cursor.Pos >= len(m.owner) || m.owner[m.cursor.Pos] < 0 {
		return
	}
	sec := m.owner[m.cursor.Pos]
	name := m.r.Sections[sec].Name
	m.folded[name] = !m.folded[name]
	m.relayout()
	// Keep the cursor on the section's heading.
	for i, o := range m.owner {
		if o == sec {
			m.cursor.Pos = i
			break
		}
	}
	m.cursor.Clamp(len(m.lines))
}

func (m *Model) toggleFoldAll() {
	fold := false
	for _, s := range m.r.Sections {
		if !m.folded[s.Name] {
			fold = true
		}
	}
	for _, s := range m.r.Sections {
		m.folded[s.Name] = fold
	}
	m.relayout()
}

// relayout builds the lines of the current mode from the rendered value:
// slices of precomputed lines, nothing decoded or styled again.
func (m *Model) relayout() {
	m.lines, m.owner = m.lines[:0], m.owner[:0]
	switch m.mode {
	case ModeJSON:
		m.lines = append(m.lines, m.r.JSON...)
	case ModeRaw:
		m.lines = append(m.lines, m.r.Raw...)
	case ModeMeta:
		m.lines = append(m.lines, m.r.Meta...)
	default:
		m.layoutYAML()
	}
	m.cursor.Clamp(len(m.lines))
}

func (m *Model) layoutYAML() {
	faint := m.common.Styles.Faint
	for _, l := range m.r.Head {
		m.lines = append(m.lines, l)
		m.owner = append(m.owner, -1)
	}
	for i, s := range m.r.Sections {
		if m.folded[s.Name] {
			note := fmt.Sprintf(" … %d lines folded", len(s.Lines)-1)
			m.lines = append(m.lines, s.Lines[0].Append(common.StyledLine(faint, note)))
			m.owner = append(m.owner, i)
			continue
		}
		for _, l := range s.Lines {
			m.lines = append(m.lines, l)
			m.owner = append(m.owner, i)
		}
	}
}

// View draws the title (key, revision, mode) and the window of lines.
func (m *Model) View() string {
	s := m.common.Styles
	var title string
	switch m.state {
	case empty:
		return common.FillHeight([]string{s.Faint.Render("select a key to see its value")}, m.height)
	case failed:
		return common.FillHeight([]string{common.Fit(common.Render(s.Title, m.key), m.width), common.Fit(common.Render(s.FlashErr, m.err.Error()), m.width)}, m.height)
	case loading:
		if m.r.KV == nil {
			return common.FillHeight([]string{common.Fit(common.Render(s.Title, m.key), m.width), s.Faint.Render("reading…")}, m.height)
		}
	}
	kv := m.r.KV
	title = common.Render(s.Title, decode.EscapeKey(kv.Key)) + s.Faint.Render(fmt.Sprintf("  rev %d  %s", kv.ModRevision, m.mode))
	var flags []string
	if m.showManaged {
		flags = append(flags, "managedFields shown")
	}
	if m.showSecrets {
		flags = append(flags, "secrets shown")
	}
	if len(flags) > 0 {
		title += "  " + s.Note.Render(strings.Join(flags, ", "))
	}
	return common.Fit(title, m.width) + "\n" + common.RenderWindow(m.lines, m.cursor, m.width, s.Selection(m.focused), m.focused)
}

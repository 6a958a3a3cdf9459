// Package owners is the owners pane: the tree of one object's owners up to
// the roots and its dependents down, matched by uid as the garbage
// collector matches them, read from every object of one revision. Each
// node opens in the object pane.
package owners

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/etcdview/owners"
	"github.com/etcdscope/etcdscope/ui/common"
)

// LoadedMsg carries the graph read for the pane, or why it could not be.
type LoadedMsg struct {
	gen    int
	g      *owners.Graph
	target owners.ID
	rev    int64
	err    error
}

// progressMsg asks the pane to redraw the count of a read that runs.
type progressMsg struct{ gen int }

// CloseMsg asks the app to close the pane.
type CloseMsg struct{}

// progressEvery is how often a read's count is redrawn.
const progressEvery = 250 * time.Millisecond

// Model is the owners pane.
type Model struct {
	common common.Common
	keys   KeyMap

	key     string
	rev     int64 // asked for: 0 is the newest
	gen     int
	loading bool
	read    *atomic.Int64 // values read so far by the read that runs
	cancel  context.CancelFunc
	err     error

	g       *owners.Graph
	readRev int64 // the revision the graph is of
	rows    []owners.Row
	nameW   int // the widest of the rows' indent and name
	cursor  common.Cursor

	width, height int
	focused       bool
}

// New is an empty owners pane.
func New(c common.Common) *Model {
	return &Model{common: c, keys: DefaultKeyMap()}
}

// Open reads every object as of rev (0: the newest) and shows the tree of
// the one at key, the cursor on it. A read still running for another key
// is stopped.
func (m *Model) Open(key string, rev int64) tea.Cmd {
	m.Stop()
	m.key, m.rev, m.err, m.g, m.rows = key, rev, nil, nil, nil
	m.gen++
	if owners.Ignored(decode.ParseKey(key)) {
		m.err = fmt.Errorf("%s is an Event: the garbage collector ignores Events, so they own nothing and nothing owns them", decode.EscapeKey(key))
		return nil
	}
	ctx, cancel := context.WithCancel(m.common.Ctx)
	m.loading, m.cancel, m.read = true, cancel, new(atomic.Int64)
	c, gen, read := m.common, m.gen, m.read
	c.Ctx = ctx
	return tea.Batch(func() tea.Msg { return load(c, gen, key, rev, read) }, m.tick(gen))
}

// Stop ends a read that runs; what it answers is dropped.
func (m *Model) Stop() {
	if m.cancel != nil {
		m.cancel()
		m.cancel = nil
	}
	if m.loading {
		m.loading = false
		m.gen++
	}
}

func (m *Model) tick(gen int) tea.Cmd {
	return m.common.After(progressEvery, func(time.Time) tea.Msg { return progressMsg{gen} })
}

// load reads the graph of every object as of rev for the object at key,
// each of the read's steps within the pane's timeout.
func load(c common.Common, gen int, key string, rev int64, read *atomic.Int64) LoadedMsg {
	msg := LoadedMsg{gen: gen}
	var err error
	msg.g, msg.rev, err = owners.Read(c.Ctx, c.Src, c.Decoder, rev, owners.Options{Timeout: c.ReadTimeout(), Progress: read.Store})
	if err != nil {
		msg.err = fmt.Errorf("owners of %s: %w", decode.EscapeKey(key), err)
		return msg
	}
	id, ok := msg.g.Lookup(key)
	if !ok {
		msg.err = fmt.Errorf("%s: %w at revision %d", decode.EscapeKey(key), errNoObject, msg.rev)
	}
	msg.target = id
	return msg
}

var errNoObject = errors.New("no object with metadata")

// Focus gives or takes the keyboard focus.
func (m *Model) Focus(on bool) { m.focused = on }

// SetSize sets the pane's size.
func (m *Model) SetSize(w, h int) {
	m.width, m.height = w, h
	m.cursor.Height = max(h-2, 1)
	m.cursor.Clamp(len(m.rows))
}

// ShortHelp lists the pane's main keys.
func (m *Model) ShortHelp() []key.Binding { return m.keys.ShortHelp() }

// FullHelp lists all the pane's keys.
func (m *Model) FullHelp() [][]key.Binding { return m.keys.FullHelp() }

// Update handles the pane's keys and its reads.
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case LoadedMsg:
		return m.onLoaded(msg)
	case progressMsg:
		if msg.gen == m.gen && m.loading {
			return m.tick(msg.gen)
		}
	case tea.KeyMsg:
		return m.onKey(msg)
	case tea.MouseMsg:
		m.cursor.Move(m.keys.NavKeyMap, msg, len(m.rows))
	}
	return nil
}

func (m *Model) onLoaded(msg LoadedMsg) tea.Cmd {
	if msg.gen != m.gen {
		return nil
	}
	m.cancel()
	m.cancel, m.loading = nil, false
	m.readRev = msg.rev
	if msg.err != nil {
		m.err = msg.err
		return common.FlashErr(msg.err)
	}
	m.g, m.rows = msg.g, owners.Rows(msg.g.Tree(msg.target))
	m.nameW = 0
	m.cursor.Pos, m.cursor.Offset = 0, 0
	for i, r := range m.rows {
		m.nameW = max(m.nameW, len([]rune(r.Indent))+len([]rune(m.g.Object(r.ID).Ident())))
		if r.Target && !r.Repeated {
			m.cursor.Pos = i
		}
	}
	m.cursor.Clamp(len(m.rows))
	return nil
}

func (m *Model) onKey(msg tea.KeyMsg) tea.Cmd {
	if m.cursor.Move(m.keys.NavKeyMap, msg, len(m.rows)) {
		return nil
	}
	switch {
	case key.Matches(msg, m.keys.Close):
		m.Stop()
		return common.Send(CloseMsg{})
	case key.Matches(msg, m.keys.Reload) && m.key != "":
		return m.Open(m.key, m.rev)
	case key.Matches(msg, m.keys.Open) && m.cursor.Pos < len(m.rows):
		id := m.rows[m.cursor.Pos].ID
		if m.g.Virtual(id) {
			return common.Flash("no object has this uid: nothing to open")
		}
		return common.Send(common.OpenObjectMsg{Key: m.g.Object(id).Key, Rev: m.readRev, Focus: true})
	}
	return nil
}

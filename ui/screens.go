package ui

import (
	"strconv"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/etcdscope/etcdscope/ui/common"
	"github.com/etcdscope/etcdscope/ui/writepath"
)

// Screen is a screen's place in the table of screens, one less than the
// digit key that shows it.
type Screen int

// The screens, in the order of their tabs and keys 1-7.
const (
	Browse Screen = iota
	Tail
	History
	Cluster
	WritePath
	Space
	Timeline
)

// pane is what the app asks of a screen: a Component it can give the keys.
type pane interface {
	common.Component
	Focus(on bool)
}

// initer is a pane with a read or a feed of its own to start with the UI.
type initer interface{ Init() tea.Cmd }

// capturer is a pane with a text field (a filter) that, while it is open,
// takes every key, the app's own too.
type capturer interface{ Capturing() bool }

// screen is one entry of the table of screens.
type screen struct {
	name string // its tab, and its key on the help screen
	// about is what its key says on the help screen instead of its name.
	about string
	pane  pane
	// open is what its key does; nil only shows the screen. The screens
	// that read on demand read here.
	open func() tea.Cmd
	key  key.Binding // its digit, from its place in the table
}

// newScreens is the table of screens: the tabs, the digit keys, the help
// screen, sizes, focus and messages all go through it, so that a screen is
// one entry here.
func (m *Model) newScreens() []screen {
	screens := []screen{
		Browse:    {name: "browse", pane: m.browse},
		Tail:      {name: "tail", pane: m.tail},
		History:   {name: "history", pane: m.history},
		Cluster:   {name: "cluster", pane: m.cluster},
		WritePath: {name: "write path", pane: writepath.New(m.common, m.opts.WritePath)},
		Space:     {name: "space", about: "space (what fills etcd)", pane: m.space, open: m.openSpace},
		Timeline: {name: "timeline", about: "timeline (what changed)", pane: m.timeline,
			open: func() tea.Cmd { return m.openTimeline(nil, false) }},
	}
	for i, s := range screens {
		n, about := strconv.Itoa(i+1), s.name
		if s.about != "" {
			about = s.about
		}
		screens[i].key = key.NewBinding(key.WithKeys(n), key.WithHelp(n, about))
	}
	return screens
}

// show puts screen s in front.
func (m *Model) show(s Screen) {
	m.screen, m.clustersShown, m.restoreShown = s, false, false
	m.focus()
}

// screenKey performs the digit key of a screen; ok is false for any other key.
func (m *Model) screenKey(msg tea.KeyMsg) (cmd tea.Cmd, ok bool) {
	for i, s := range m.screens {
		if !key.Matches(msg, s.key) {
			continue
		}
		if s.open != nil {
			return s.open(), true
		}
		m.show(Screen(i))
		return nil, true
	}
	return nil, false
}

// active is the pane that has the keys: the screen in front.
func (m *Model) active() pane { return m.screens[m.screen].pane }

// capturing is true while a text field in the screen in front takes every key.
func (m *Model) capturing() bool {
	c, ok := m.active().(capturer)
	return ok && c.Capturing()
}

func (m *Model) focus() {
	for i, s := range m.screens {
		s.pane.Focus(Screen(i) == m.screen && !m.restoreShown)
	}
	m.restore.Focus(m.restoreShown)
}

func (m *Model) broadcast(msg tea.Msg) tea.Cmd {
	cmds := make([]tea.Cmd, len(m.screens))
	for i, s := range m.screens {
		cmds[i] = s.pane.Update(msg)
	}
	return tea.Batch(cmds...)
}

package ui

import (
	tea "github.com/charmbracelet/bubbletea"
	"github.com/etcdscope/etcdscope/ui/changes"
)

// The screens that read on demand, opened from a key or a command.

// openSpace shows the space screen; the first time, it reads the report.
func (m *Model) openSpace() tea.Cmd {
	m.screen = Space
	m.focus()
	return m.space.Open()
}

// openTimeline shows the timeline, reading the window args give (those of
// :changes); the first time it is shown, or when always, it reads.
func (m *Model) openTimeline(args []string, always bool) tea.Cmd {
	m.screen = Timeline
	m.focus()
	if m.timeline.Opened() && !always {
		return nil
	}
	r, err := changes.ParseWindow(args)
	if err != nil {
		return m.setFlash(err.Error(), true)
	}
	return m.timeline.Open(r)
}

// openOwners shows the owners pane for the object in browse: the tree's
// selected key, or the object pane's when that has the focus.
func (m *Model) openOwners() tea.Cmd {
	// While the tree moves to a key (:key, a jump from another screen),
	// its selection is the old one; the object pane already has the key.
	key := m.object.Key()
	if ch, ok := m.tree.Selected(); ok && !m.objectFocus && !m.tree.Moving() {
		key = ch.Prefix
		if ch.Dir {
			key = ""
		}
	}
	if key == "" {
		return m.setFlash("O shows the owners of an object: select a key, not a directory", true)
	}
	m.ownersShown = true
	m.focus()
	return m.owners.Open(key, m.rev)
}

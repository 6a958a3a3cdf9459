package ui

import (
	tea "github.com/charmbracelet/bubbletea"
	"github.com/etcdscope/etcdscope/ui/changes"
)

// The screens that read on demand, opened from a key or a command.

// openSpace shows the space screen; the first time, it reads the report.
func (m *Model) openSpace() tea.Cmd {
	m.show(Space)
	return m.space.Open()
}

// openTimeline shows the timeline, reading the window args give (those of
// :changes); the first time it is shown, or when always, it reads.
func (m *Model) openTimeline(args []string, always bool) tea.Cmd {
	m.show(Timeline)
	if m.timeline.Opened() && !always {
		return nil
	}
	r, err := changes.ParseWindow(args)
	if err != nil {
		return m.setFlash(err.Error(), true)
	}
	return m.timeline.Open(r)
}

package ui

import (
	"fmt"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/etcdscope/etcdscope/ui/common"
)

// Recording is a recorder the explorer runs beside the UI (--record): the
// header says so while it runs.
type Recording struct {
	// File is the recording's path, as the header names it.
	File string
	// Done yields the recorder's end: its error, or nil when it ended
	// with the explorer.
	Done <-chan error
}

// recordEndedMsg says the recorder of Options.Recording ended with err.
type recordEndedMsg struct{ err error }

// awaitRecording waits for the recorder's end.
func (m *Model) awaitRecording() tea.Cmd {
	r, done := m.opts.Recording, m.common.Ctx.Done()
	if r == nil {
		return nil
	}
	return func() tea.Msg {
		select {
		case err := <-r.Done:
			return recordEndedMsg{err}
		case <-done:
			return nil
		}
	}
}

func (m *Model) onRecordEnded(msg recordEndedMsg) tea.Cmd {
	if msg.err == nil {
		msg.err = fmt.Errorf("it ended")
	}
	m.recordStopped = true
	return m.setFlash(fmt.Sprintf("record %s stopped: %v", m.opts.Recording.File, msg.err), true)
}

// recordState is the header's word on the recorder, "" when none runs.
func (m *Model) recordState() string {
	r := m.opts.Recording
	switch {
	case r == nil:
		return ""
	case m.recordStopped:
		return m.common.Styles.Down.Render("record " + common.Text(r.File) + " stopped")
	}
	return "record " + common.Text(r.File)
}

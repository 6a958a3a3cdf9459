package ui

import (
	"fmt"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/etcdscope/etcdscope/ui/common"
)

// Recording is a recorder the explorer runs beside the UI (--record). It
// records the cluster the explorer opened first until the explorer ends,
// whichever cluster :ctx shows meanwhile, as a recorder started for one
// cluster keeps to it: a recording holds one etcd's revisions, and a look
// at another cluster is no reason to lose what it records. The header
// says what it records, and of which cluster once another is shown.
type Recording struct {
	// File is the recording's path, as the header names it.
	File string
	// Cluster is the name :ctx gives the cluster it records.
	Cluster string
	// Done yields the recorder's end: its error, or nil when it ended
	// with the explorer.
	Done <-chan error
}

// recorder is the header's state of the explorer's Recording, kept across
// switches of cluster.
type recorder struct {
	*Recording
	stopped bool
}

// recordEndedMsg says the recorder ended with err. It carries no epoch:
// the recorder outlives the switches.
type recordEndedMsg struct{ err error }

// awaitRecording waits for the recorder's end, once for the UI's life.
func (m *Model) awaitRecording() tea.Cmd {
	if m.recorder == nil {
		return nil
	}
	r, done := m.recorder.Recording, m.parent.Done()
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
	m.recorder.stopped = true
	return m.setFlash(fmt.Sprintf("record %s stopped: %v", m.recorder.File, msg.err), true)
}

// recordsAnother says whether the recorder records a cluster other than
// the one shown.
func (m *Model) recordsAnother() bool {
	return m.recorder != nil && m.shown != "" && m.shown != m.recorder.Cluster
}

// recordState is the header's word on the recorder, "" when none runs.
func (m *Model) recordState() string {
	r := m.recorder
	if r == nil {
		return ""
	}
	s := "record " + common.Text(r.File)
	if m.recordsAnother() {
		s += " of " + common.Text(r.Cluster)
	}
	if r.stopped {
		return m.common.Styles.Down.Render(s + " stopped")
	}
	return s
}

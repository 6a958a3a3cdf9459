package ui

import (
	tea "github.com/charmbracelet/bubbletea"
	"github.com/etcdscope/etcdscope/ui/common"
)

// openRestore shows the restore pane over the screen in front (history, or
// browse as of a past revision), reading the manifest msg asks for.
func (m *Model) openRestore(msg common.RestoreMsg) tea.Cmd {
	m.restoreShown, m.clustersShown, m.helpShown = true, false, false
	m.focus()
	return m.restore.Open(msg.Key, msg.Rev)
}

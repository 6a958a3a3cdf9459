package tree

import (
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/etcdscope/etcdscope/ui/common"
	"github.com/etcdscope/etcdscope/ui/uitest"
	"github.com/muesli/termenv"
)

func init() { lipgloss.SetColorProfile(termenv.Ascii) }

// harness runs a tree as the app would, keeping the intents it sends.
type harness struct {
	*Model
	msgs []tea.Msg
}

func (h *harness) update(msg tea.Msg) tea.Cmd {
	switch msg.(type) {
	case common.OpenObjectMsg, common.OpenHistoryMsg, common.TailPrefixMsg, common.FlashMsg:
		h.msgs = append(h.msgs, msg)
		return nil
	}
	return h.Model.Update(msg)
}

func (h *harness) drive(cmd tea.Cmd)    { uitest.Drive(h.update, cmd) }
func (h *harness) press(keys ...string) { uitest.Press(h.update, keys...) }

package contexts

import (
	"github.com/charmbracelet/bubbles/key"
	"github.com/etcdscope/etcdscope/ui/common"
)

// KeyMap are the keys of the clusters list.
type KeyMap struct {
	common.NavKeyMap
	Switch, Close key.Binding
}

// DefaultKeyMap is k9s' contexts view: enter switches, esc goes back.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		NavKeyMap: common.DefaultNavKeyMap(),
		Switch:    key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "switch to the cluster")),
		Close:     key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back")),
	}
}

// ShortHelp is what the footer shows.
func (k KeyMap) ShortHelp() []key.Binding { return []key.Binding{k.Switch, k.Close} }

// FullHelp is what the help screen shows; the movement keys every list
// shares are listed once, by the app.
func (k KeyMap) FullHelp() [][]key.Binding { return [][]key.Binding{k.ShortHelp()} }

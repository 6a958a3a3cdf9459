package manifest

import (
	"github.com/charmbracelet/bubbles/key"
	"github.com/etcdscope/etcdscope/ui/common"
)

// KeyMap are the keys of the restore pane.
type KeyMap struct {
	common.NavKeyMap
	Secrets, Close key.Binding
}

// DefaultKeyMap is the restore pane's keys: x as in the object pane.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		NavKeyMap: common.DefaultNavKeyMap(),
		Secrets:   key.NewBinding(key.WithKeys("x"), key.WithHelp("x", "reveal Secrets")),
		Close:     key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "close")),
	}
}

// ShortHelp is what the footer shows.
func (k KeyMap) ShortHelp() []key.Binding { return []key.Binding{k.Secrets, k.Close} }

// FullHelp is what the help screen shows; the movement keys every list
// shares are listed once, by the app.
func (k KeyMap) FullHelp() [][]key.Binding { return [][]key.Binding{k.ShortHelp()} }

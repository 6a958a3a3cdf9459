package members

import (
	"github.com/charmbracelet/bubbles/key"
	"github.com/etcdscope/etcdscope/ui/common"
)

// KeyMap are the keys of the members' values view.
type KeyMap struct {
	common.NavKeyMap
	Close, Reload key.Binding
}

// DefaultKeyMap is the members' values view's keys.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		NavKeyMap: common.DefaultNavKeyMap(),
		Close:     key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "close")),
		Reload:    key.NewBinding(key.WithKeys("R"), key.WithHelp("R", "reload")),
	}
}

// ShortHelp is what the footer shows.
func (k KeyMap) ShortHelp() []key.Binding { return []key.Binding{k.Close, k.Reload} }

// FullHelp is what the help screen shows; the movement keys every list
// shares are listed once, by the app.
func (k KeyMap) FullHelp() [][]key.Binding { return [][]key.Binding{k.ShortHelp()} }

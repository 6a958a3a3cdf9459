package changes

import (
	"github.com/charmbracelet/bubbles/key"
	"github.com/etcdscope/etcdscope/ui/common"
)

// KeyMap are the keys of the timeline screen.
type KeyMap struct {
	common.NavKeyMap
	Open, Reload key.Binding
}

// DefaultKeyMap is the timeline's keys.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		NavKeyMap: common.DefaultNavKeyMap(),
		Open:      key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "history at that revision")),
		Reload:    key.NewBinding(key.WithKeys("R"), key.WithHelp("R", "read the window again, up to the head")),
	}
}

// ShortHelp is what the footer shows.
func (k KeyMap) ShortHelp() []key.Binding { return []key.Binding{k.Up, k.Down, k.Open, k.Reload} }

// FullHelp is what the help screen shows.
func (k KeyMap) FullHelp() [][]key.Binding { return [][]key.Binding{k.ShortHelp()} }

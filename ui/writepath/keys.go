package writepath

import (
	"github.com/charmbracelet/bubbles/key"
	"github.com/etcdscope/etcdscope/ui/common"
)

// KeyMap are the keys of the write-path pane.
type KeyMap struct {
	common.NavKeyMap
	Open, Pause key.Binding
}

// DefaultKeyMap is the write-path pane's keys.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		NavKeyMap: common.DefaultNavKeyMap(),
		Open:      key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "open the object at its revision")),
		Pause:     key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "pause/resume")),
	}
}

// ShortHelp is what the footer shows.
func (k KeyMap) ShortHelp() []key.Binding { return []key.Binding{k.Up, k.Down, k.Open, k.Pause} }

// FullHelp is what the help screen shows.
func (k KeyMap) FullHelp() [][]key.Binding { return [][]key.Binding{k.ShortHelp()} }

package space

import (
	"github.com/charmbracelet/bubbles/key"
	"github.com/etcdscope/etcdscope/ui/common"
)

// KeyMap are the keys of the space screen.
type KeyMap struct {
	common.NavKeyMap
	Open, History, Up, Sort, Refresh, Cancel, Pane key.Binding
}

// DefaultKeyMap is the space screen's keys. esc cancels a read under way,
// and goes up a level otherwise.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		NavKeyMap: common.DefaultNavKeyMap(),
		Open:      key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "down / open")),
		History:   key.NewBinding(key.WithKeys("h"), key.WithHelp("h", "history")),
		Up:        key.NewBinding(key.WithKeys("esc", "backspace"), key.WithHelp("esc", "up a level")),
		Sort:      key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "sort by bytes, keys, revisions, rate")),
		Refresh:   key.NewBinding(key.WithKeys("R"), key.WithHelp("R", "read again")),
		Cancel:    key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel the read")),
		Pane:      key.NewBinding(key.WithKeys("tab", "shift+tab"), key.WithHelp("tab", "next list")),
	}
}

// ShortHelp is what the footer shows.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Open, k.History, k.Up, k.Sort, k.Pane, k.Refresh}
}

// FullHelp is what the help screen shows.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Open, k.History, k.Up, k.Sort, k.Pane, k.Refresh, k.Cancel}}
}

package tree

import (
	"github.com/charmbracelet/bubbles/key"
	"github.com/etcdscope/etcdscope/ui/common"
)

// KeyMap are the keys of the tree pane.
type KeyMap struct {
	common.NavKeyMap
	Open, Back, Filter, History, Tail, Reload, Wide key.Binding
}

// DefaultKeyMap is k9s's: enter opens, esc goes back, / filters.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		NavKeyMap: common.DefaultNavKeyMap(),
		Open:      key.NewBinding(key.WithKeys("enter", "right", "l"), key.WithHelp("enter", "open")),
		Back:      key.NewBinding(key.WithKeys("esc", "left", "backspace"), key.WithHelp("esc", "back")),
		Filter:    key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
		History:   key.NewBinding(key.WithKeys("h"), key.WithHelp("h", "history")),
		Tail:      key.NewBinding(key.WithKeys("t"), key.WithHelp("t", "tail this prefix")),
		Reload:    key.NewBinding(key.WithKeys("ctrl+r"), key.WithHelp("ctrl-r", "reload")),
		// w is free on every screen; k9s widens a table with its own
		// view, here the level takes the object pane's place.
		Wide: key.NewBinding(key.WithKeys("w"), key.WithHelp("w", "wide table")),
	}
}

// ShortHelp is what the footer shows.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Open, k.Back, k.Filter, k.History, k.Tail, k.Wide}
}

// FullHelp is what the help screen shows; the movement keys every list
// shares are listed once, by the app.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{append(k.ShortHelp(), k.Reload)}
}

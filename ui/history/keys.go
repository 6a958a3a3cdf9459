package history

import (
	"github.com/charmbracelet/bubbles/key"
	"github.com/etcdscope/etcdscope/ui/common"
)

// KeyMap are the keys of the history pane.
type KeyMap struct {
	common.NavKeyMap
	Detail, Back, Reload key.Binding
	// Restore shows the manifest that brings the selected revision back.
	Restore key.Binding
	// Earlier reads the incarnations before the current one.
	Earlier key.Binding
}

// DefaultKeyMap is the history pane's keys.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		NavKeyMap: common.DefaultNavKeyMap(),
		Detail:    key.NewBinding(key.WithKeys("enter", "right", "l"), key.WithHelp("enter", "scroll diff")),
		Back:      key.NewBinding(key.WithKeys("esc", "left"), key.WithHelp("esc", "back to revisions")),
		Reload:    key.NewBinding(key.WithKeys("R"), key.WithHelp("R", "reload")),
		Earlier:   key.NewBinding(key.WithKeys("E"), key.WithHelp("E", "all incarnations")),
		Restore:   key.NewBinding(key.WithKeys("u"), key.WithHelp("u", "restore")),
	}
}

// ShortHelp is what the footer shows.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Detail, k.Back, k.Reload, k.Restore}
}

// FullHelp is what the help screen shows; the movement keys every list
// shares are listed once, by the app.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{append(k.ShortHelp(), k.Earlier)}
}

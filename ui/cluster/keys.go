package cluster

import (
	"github.com/charmbracelet/bubbles/key"
	"github.com/etcdscope/etcdscope/ui/common"
)

// KeyMap are the keys of the cluster pane. k stops a member here, so up is
// the arrow alone.
type KeyMap struct {
	common.NavKeyMap
	Stop, Restart key.Binding
	// Check runs check members; in its view, Open opens a differing key
	// and Back stops the check or goes back to the members.
	Check, Open, Back key.Binding
}

// DefaultKeyMap is the cluster pane's keys.
func DefaultKeyMap() KeyMap {
	nav := common.DefaultNavKeyMap()
	nav.Up = key.NewBinding(key.WithKeys("up"), key.WithHelp("↑", "up"))
	return KeyMap{
		NavKeyMap: nav,
		Stop:      key.NewBinding(key.WithKeys("k"), key.WithHelp("k", "stop member")),
		Restart:   key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "restart member")),
		Check:     key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "check members")),
		Open:      key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "values of a key")),
		Back:      key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "stop check, back")),
	}
}

// ShortHelp is what the footer shows.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Up, k.Down, k.Stop, k.Restart, k.Check}
}

// checkHelp is what the footer shows over the check view.
func (k KeyMap) checkHelp() []key.Binding {
	return []key.Binding{k.Up, k.Down, k.Open, k.Back, k.Check}
}

// FullHelp is what the help screen shows.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{k.ShortHelp(), {k.Open, k.Back}}
}

package tail

import (
	"github.com/charmbracelet/bubbles/key"
	"github.com/etcdscope/etcdscope/ui/common"
)

// KeyMap are the keys of the tail pane.
type KeyMap struct {
	common.NavKeyMap
	Follow, Pause, Filter, Diff, History, Back key.Binding
	// Play and Speed work on a recording, which the tail replays; there
	// space plays and pauses the replay rather than the list's follow.
	Play, Speed key.Binding
}

// DefaultKeyMap is the tail pane's keys.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		NavKeyMap: common.DefaultNavKeyMap(),
		Follow:    key.NewBinding(key.WithKeys("f"), key.WithHelp("f", "follow")),
		Pause:     key.NewBinding(key.WithKeys(" ", "p"), key.WithHelp("space", "pause")),
		Filter:    key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
		Diff:      key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "diff")),
		History:   key.NewBinding(key.WithKeys("h"), key.WithHelp("h", "history")),
		Back:      key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back")),
		Play:      key.NewBinding(key.WithKeys(" "), key.WithHelp("space", "play/pause a recording")),
		Speed:     key.NewBinding(key.WithKeys(">"), key.WithHelp(">", "replay speed 1×, 10×, max")),
	}
}

// ShortHelp is what the footer shows.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Diff, k.History, k.Follow, k.Pause, k.Filter, k.Back}
}

// FullHelp is what the help screen shows; the movement keys every list
// shares are listed once, by the app.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{k.ShortHelp()}
}

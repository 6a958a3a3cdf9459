package ui

import "github.com/charmbracelet/bubbles/key"

// KeyMap are the keys that work on every screen, and browse's own. The
// digits that show the screens come from the table of screens
// (screens.go); each pane names its own keys in its package's KeyMap; the
// help screen lists them all from there.
type KeyMap struct {
	Quit, Help, Command, Tab, Back key.Binding
	Owners                         key.Binding // in browse
	Restore                        key.Binding // in browse, as of a past revision
	// The time line of a recording: a revision the recording holds, or
	// a minute of its recorded times, back or forward.
	StepBack, StepForward, MinuteBack, MinuteForward key.Binding
}

// DefaultKeyMap is k9s's layout: q quits, ? helps, : commands, the digits
// show the screens.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		Quit:    key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
		Help:    key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Command: key.NewBinding(key.WithKeys(":"), key.WithHelp(":", "command")),
		Tab:     key.NewBinding(key.WithKeys("tab", "shift+tab"), key.WithHelp("tab", "switch pane")),
		Back:    key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back")),
		Owners:  key.NewBinding(key.WithKeys("O"), key.WithHelp("O", "owners and dependents")),
		Restore: key.NewBinding(key.WithKeys("u"), key.WithHelp("u", "restore at :rev")),

		StepBack:      key.NewBinding(key.WithKeys("["), key.WithHelp("[", "a revision back")),
		StepForward:   key.NewBinding(key.WithKeys("]"), key.WithHelp("]", "a revision forward")),
		MinuteBack:    key.NewBinding(key.WithKeys("{"), key.WithHelp("{", "a minute back")),
		MinuteForward: key.NewBinding(key.WithKeys("}"), key.WithHelp("}", "a minute forward")),
	}
}

// ShortHelp is the global part of the footer.
func (k KeyMap) ShortHelp() []key.Binding { return []key.Binding{k.Command, k.Help, k.Quit} }

// FullHelp is the global part of the help screen, after the screens' digits.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Tab, k.Back, k.Command, k.Help, k.Quit}}
}

// timeLineHelp is the time line's keys, which the help screen lists on a
// recording, where they work.
func (k KeyMap) timeLineHelp() []key.Binding {
	return []key.Binding{k.StepBack, k.StepForward, k.MinuteBack, k.MinuteForward}
}

// commandHelp documents the command line, for the help screen.
var commandHelp = []key.Binding{
	key.NewBinding(key.WithKeys(":pods"), key.WithHelp(":pods", "open a resource (kubectl names)")),
	key.NewBinding(key.WithKeys(":deploy ns"), key.WithHelp(":deploy ns", "… in one namespace")),
	key.NewBinding(key.WithKeys(":key"), key.WithHelp(":key /registry/…", "open a key or prefix")),
	key.NewBinding(key.WithKeys(":rev"), key.WithHelp(":rev 1234", "browse as of a revision")),
	key.NewBinding(key.WithKeys(":rev head"), key.WithHelp(":rev head", "back to the newest")),
	key.NewBinding(key.WithKeys(":at"), key.WithHelp(":at 03:12", "a recording as of a time")),
	key.NewBinding(key.WithKeys(":tail"), key.WithHelp(":tail [prefix]", "tail a prefix")),
	key.NewBinding(key.WithKeys(":du"), key.WithHelp(":du", "space: where the bytes and writes go")),
	key.NewBinding(key.WithKeys(":where"), key.WithHelp(":where EXPR", "filter a level or the tail by CEL; none clears")),
	key.NewBinding(key.WithKeys(":changes"), key.WithHelp(":changes [30m|rev] [prefix]", "what changed since then")),
	key.NewBinding(key.WithKeys(":ctx"), key.WithHelp(":ctx [NAME]", "list the clusters, or switch to one")),
	key.NewBinding(key.WithKeys(":q"), key.WithHelp(":q", "quit")),
}

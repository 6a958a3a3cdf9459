package common

import (
	"sync/atomic"

	tea "github.com/charmbracelet/bubbletea"
)

// Intents: a pane asks the app for something outside itself with one of
// these; the app performs it. Panes never reach into each other.

// OpenObjectMsg asks to show the object at Key as of Rev (0: the app's revision).
type OpenObjectMsg struct {
	Key   string
	Rev   int64
	Focus bool // move the focus to the object pane
}

// OpenHistoryMsg asks for the history screen of Key, its cursor at Rev (0: newest).
type OpenHistoryMsg struct {
	Key string
	Rev int64
}

// RestoreMsg asks for the restore pane: the manifest that brings back the
// object at Key as it was at Rev, and the command line that applies it.
type RestoreMsg struct {
	Key string
	Rev int64
}

// OpenMemberValuesMsg asks browse to show each member's value of Key at Rev
// beside the others' (a key check members found differing).
type OpenMemberValuesMsg struct {
	Key string
	Rev int64
}

// TailPrefixMsg asks the tail to show only keys below Prefix ("" for all),
// or, when Exact, the one key Prefix.
type TailPrefixMsg struct {
	Prefix string
	Exact  bool
}

// FlashMsg puts a message in the flash line.
type FlashMsg struct {
	Text string
	Err  bool
	// Seq orders the flashes Flash and FlashErr make: their commands run
	// at once and may arrive in any order, and one asked for before the
	// flash line last changed is not shown (two quick > keys end on the
	// second's speed). A FlashMsg made without it is shown when it comes.
	Seq uint64
}

// flashSeq numbers the flashes asked for, in the order Update asks.
var flashSeq atomic.Uint64

// NextFlashSeq is the number of a flash asked for now.
func NextFlashSeq() uint64 { return flashSeq.Add(1) }

// StopMemberMsg asks to stop member Index of the bundled cluster.
type StopMemberMsg struct {
	Index int
	Name  string
}

// RestartMemberMsg asks to restart member Index of the bundled cluster.
type RestartMemberMsg struct {
	Index int
	Name  string
}

// Flash is a command that flashes text.
func Flash(text string) tea.Cmd {
	msg := FlashMsg{Text: text, Seq: NextFlashSeq()}
	return func() tea.Msg { return msg }
}

// FlashErr is a command that flashes err.
func FlashErr(err error) tea.Cmd {
	msg := FlashMsg{Text: err.Error(), Err: true, Seq: NextFlashSeq()}
	return func() tea.Msg { return msg }
}

// Send is a command that returns msg.
func Send(msg tea.Msg) tea.Cmd { return func() tea.Msg { return msg } }

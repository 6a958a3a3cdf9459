package uitest

import (
	"context"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/etcdscope/etcdscope/ui/common"
)

// timerCutoff is how long Drive waits for one command. Reads of the
// in-memory store return at once; what is still running after this is a
// timer (a cursor blink, a refresh, a flash's end), which Drive drops.
const timerCutoff = 400 * time.Millisecond

// Drive runs cmd, feeds its message to update, and goes on with the
// commands that returns, until none is left: the bubbletea loop without a
// terminal, for model tests.
func Drive(update func(tea.Msg) tea.Cmd, cmd tea.Cmd) {
	queue := []tea.Cmd{cmd}
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		if c == nil {
			continue
		}
		msg, ok := run(c)
		if !ok {
			continue
		}
		if batch, isBatch := msg.(tea.BatchMsg); isBatch {
			queue = append(queue, batch...)
			continue
		}
		queue = append(queue, update(msg))
	}
}

func run(c tea.Cmd) (tea.Msg, bool) {
	done := make(chan tea.Msg, 1)
	go func() { done <- c() }()
	select {
	case msg := <-done:
		return msg, msg != nil
	case <-time.After(timerCutoff):
		return nil, false
	}
}

// Common is the Common value of a pane under test on src.
func Common(src *Source) common.Common {
	return common.Common{Ctx: context.Background(), Src: src, Styles: common.DefaultStyles()}
}

// Key is the message of one key, named as bubbletea names it ("j", "enter",
// "esc", "up", "ctrl+d", " ").
func Key(name string) tea.KeyMsg {
	for t, n := range keyNames {
		if n == name {
			if t == tea.KeySpace {
				return tea.KeyMsg{Type: t, Runes: []rune{' '}}
			}
			return tea.KeyMsg{Type: t}
		}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(name)}
}

var keyNames = map[tea.KeyType]string{
	tea.KeyEnter: "enter", tea.KeyEsc: "esc", tea.KeyUp: "up", tea.KeyDown: "down", tea.KeyTab: "tab",
	tea.KeyCtrlD: "ctrl+d", tea.KeyCtrlU: "ctrl+u", tea.KeyCtrlR: "ctrl+r", tea.KeyBackspace: "backspace", tea.KeySpace: " ",
}

// Press feeds each key to update, driving the commands each returns.
func Press(update func(tea.Msg) tea.Cmd, keys ...string) {
	for _, k := range keys {
		Drive(update, func() tea.Msg { return Key(k) })
	}
}

// Type feeds text one rune at a time.
func Type(update func(tea.Msg) tea.Cmd, text string) {
	for _, r := range text {
		Press(update, string(r))
	}
}

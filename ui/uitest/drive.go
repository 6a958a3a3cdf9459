package uitest

import (
	"context"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/etcdscope/etcdscope/ui/common"
)

// Deadline is how long Drive waits for one command: a read of the store in
// memory, a decode, a layout. Timers made through a Clock return at once,
// so a command that takes longer is stuck.
const Deadline = 10 * time.Second

// maxSteps bounds the messages of one Drive: models whose commands answer
// each other forever fail instead of hanging.
const maxSteps = 100_000

// Drive runs cmd, feeds its message to update, and goes on with the
// commands that returns, one at a time in the order they were made, until
// none is left: the bubbletea loop without a terminal, for model tests. A
// command that yields nothing within Deadline, or panics, fails tb. Drive
// only what ends: a model's timers through a Clock, and not a watch's
// reader, whose next batch the test hands over itself.
func Drive(tb testing.TB, update func(tea.Msg) tea.Cmd, cmd tea.Cmd) {
	tb.Helper()
	queue := []tea.Cmd{cmd}
	for steps := 0; len(queue) > 0; steps++ {
		if steps == maxSteps {
			tb.Fatalf("the commands did not settle after %d messages", maxSteps)
		}
		c := queue[0]
		queue = queue[1:]
		if c == nil {
			continue
		}
		switch msg := run(tb, c).(type) {
		case nil:
		case tea.BatchMsg:
			queue = append(queue, msg...)
		default:
			queue = append(queue, update(msg))
		}
	}
}

// run runs c on a goroutine of its own, as bubbletea does, and returns its
// message.
func run(tb testing.TB, c tea.Cmd) tea.Msg {
	tb.Helper()
	type result struct {
		msg   tea.Msg
		panic any
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- result{panic: p}
			}
		}()
		done <- result{msg: c()}
	}()
	select {
	case r := <-done:
		if r.panic != nil {
			tb.Fatalf("a command panicked: %v", r.panic)
		}
		return r.msg
	case <-time.After(Deadline):
		tb.Fatalf("a command yielded no message within %v", Deadline)
		return nil
	}
}

// Common is the Common value of a pane under test on src. Its timers are
// on a Clock of their own that never moves: they never fire. A test that
// fires them sets Tick to the Tick of a Clock it Advances.
func Common(src *Source) common.Common {
	return common.Common{Ctx: context.Background(), Src: src, Styles: common.DefaultStyles(), Tick: new(Clock).Tick}
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
func Press(tb testing.TB, update func(tea.Msg) tea.Cmd, keys ...string) {
	tb.Helper()
	for _, k := range keys {
		Drive(tb, update, common.Send(Key(k)))
	}
}

// Type feeds text one rune at a time.
func Type(tb testing.TB, update func(tea.Msg) tea.Cmd, text string) {
	tb.Helper()
	for _, r := range text {
		Press(tb, update, string(r))
	}
}

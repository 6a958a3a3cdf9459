package uitest

import (
	"cmp"
	"slices"
	"sync"
	"time"

	tea "github.com/charmbracelet/bubbletea"
)

// Clock runs the timers of models under test: time passes only when the
// test Advances it, so a timer fires when the test says, never by chance
// of how fast a machine is. Its zero value is at time zero.
type Clock struct {
	mu     sync.Mutex
	now    time.Duration
	timers []timer
}

type timer struct {
	at   time.Duration
	fire func(time.Time) tea.Msg
}

// Epoch is the clock's time zero, the time Advance hands to timers.
var Epoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// Tick is a common.Tick on the clock. As with tea.Tick, a timer counts
// only once its command runs: the command starts it and yields nothing;
// Advance yields its message.
func (c *Clock) Tick(d time.Duration, fn func(time.Time) tea.Msg) tea.Cmd {
	return func() tea.Msg {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.timers = append(c.timers, timer{at: c.now + d, fire: fn})
		return nil
	}
}

// Advance moves the clock on by d and returns a command that yields the
// messages of the timers due by then, for Drive, which runs them in the
// order they fall due.
func (c *Clock) Advance(d time.Duration) tea.Cmd {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now += d
	slices.SortStableFunc(c.timers, func(a, b timer) int { return cmp.Compare(a.at, b.at) })
	var due []tea.Cmd
	for len(c.timers) > 0 && c.timers[0].at <= c.now {
		t := c.timers[0]
		c.timers = c.timers[1:]
		at := Epoch.Add(t.at)
		due = append(due, func() tea.Msg { return t.fire(at) })
	}
	return tea.Batch(due...)
}

package uitest

import (
	"slices"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
)

func TestClockFiresTimersWhenAdvancedPastThemInOrder(t *testing.T) {
	var clk Clock
	var fired []string
	update := func(msg tea.Msg) tea.Cmd {
		fired = append(fired, msg.(string))
		return nil
	}
	after := func(d time.Duration, name string) tea.Cmd {
		return clk.Tick(d, func(at time.Time) tea.Msg {
			if got := at.Sub(Epoch); got != d {
				t.Errorf("%s fired at %v, want %v", name, got, d)
			}
			return name
		})
	}
	Drive(t, update, tea.Batch(after(time.Second, "1s"), after(80*time.Millisecond, "80ms"), after(time.Hour, "1h")))
	if len(fired) != 0 {
		t.Fatalf("timers fired before the clock moved: %v", fired)
	}
	Drive(t, update, clk.Advance(time.Second))
	if !slices.Equal(fired, []string{"80ms", "1s"}) {
		t.Errorf("after 1s fired %v, want 80ms then 1s", fired)
	}
	Drive(t, update, clk.Advance(time.Hour))
	if !slices.Equal(fired, []string{"80ms", "1s", "1h"}) {
		t.Errorf("after an hour more fired %v", fired)
	}
}

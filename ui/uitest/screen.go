package uitest

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/teatest"
)

// WaitScreen waits, for at most within, until the terminal a teatest model
// draws has shown every one of want.
func WaitScreen(t testing.TB, tm *teatest.TestModel, within time.Duration, want ...string) {
	t.Helper()
	var seen []byte
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		seen = append(seen, b...)
		for _, w := range want {
			if !strings.Contains(string(seen), w) {
				return false
			}
		}
		return true
	}, teatest.WithDuration(within), teatest.WithCheckInterval(10*time.Millisecond))
}

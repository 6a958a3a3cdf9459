package cli

import (
	"strings"
	"testing"
	"time"
)

// TestTUISpaceScreenEndToEnd drives the real binary on the bundled cluster:
// screen 6 reads the store and lists the Events the control plane writes,
// s sorts, and a largest object opens in the object pane.
func TestTUISpaceScreenEndToEnd(t *testing.T) {
	s := startTUI(t, "--data-dir", t.TempDir())
	s.waitText("3/3 members up", "control plane ready")
	s.keys("6")
	s.waitText("space  /registry/", "LARGEST", "MEMBER")
	// The first Events may come after the first read: R reads again.
	deadline := time.Now().Add(2 * screenDeadline)
	for !strings.Contains(s.screen(), "events/") {
		if time.Now().After(deadline) {
			t.Fatalf("no events/ row within %v; the screen shows:\n%s", 2*screenDeadline, s.screen())
		}
		s.keys("R")
		s.waitText("R reads again")
		time.Sleep(time.Second)
	}
	s.keys("s")
	t.Logf("screen 6, sorted by keys:\n%s", s.waitText("sorted by keys"))
	// tab moves to the largest objects; enter opens the first.
	s.keys("Tab", "g", "Enter")
	screen := s.waitText("[1 browse]", "  rev ", "kind: ")
	t.Logf("the largest object:\n%s", screen)
}

package tree

import (
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/etcdscope/etcdscope/ui/common"
	"github.com/etcdscope/etcdscope/ui/uitest"
	"github.com/muesli/termenv"
)

func init() { lipgloss.SetColorProfile(termenv.Ascii) }

// testNow is the pane's clock in tests: 90 minutes after the fixture's
// objects were created.
var testNow = uitest.Epoch.Add(90 * time.Minute)

// harness runs a tree as the app would, keeping the intents it sends.
type harness struct {
	*Model
	t     testing.TB
	clock *uitest.Clock // the tree's timers
	msgs  []tea.Msg
	// hold keeps the counts back in held instead of handing them to the
	// tree, to look at a level before its counts arrive.
	hold bool
	held []CountMsg
	// holdRows keeps the rows read back in heldRows, to look at a level
	// before they arrive.
	holdRows bool
	heldRows []RowsMsg
	// mostCounts is the most Count reads the tree had in flight.
	mostCounts int
}

// newHarness is a tree of 60x20 on c, its timers on the harness's clock,
// with its root read; hold holds the counts back from the first.
func newHarness(t testing.TB, c common.Common, hold bool) *harness {
	t.Helper()
	h := &harness{t: t, clock: new(uitest.Clock), hold: hold}
	c.Tick = h.clock.Tick
	h.Model = New(c, Options{Now: func() time.Time { return testNow }})
	h.SetSize(60, 20)
	h.drive(h.Init())
	return h
}

func (h *harness) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case common.OpenObjectMsg, common.OpenHistoryMsg, common.TailPrefixMsg, common.FlashMsg, WideMsg:
		h.msgs = append(h.msgs, msg)
		return nil
	case CountMsg:
		if h.hold {
			h.held = append(h.held, msg)
			return nil
		}
	case RowsMsg:
		if h.holdRows {
			h.heldRows = append(h.heldRows, msg)
			return nil
		}
	}
	return h.hand(msg)
}

func (h *harness) hand(msg tea.Msg) tea.Cmd {
	cmd := h.Model.Update(msg)
	h.mostCounts = max(h.mostCounts, h.countsInFlight)
	return cmd
}

// release hands the held counts to the tree; the counts they start are held
// in turn while hold is set.
func (h *harness) release() {
	held := h.held
	h.held = nil
	for _, msg := range held {
		h.drive(h.hand(msg))
	}
}

func (h *harness) drive(cmd tea.Cmd) {
	h.t.Helper()
	uitest.Drive(h.t, h.update, cmd)
}

func (h *harness) press(keys ...string) {
	h.t.Helper()
	uitest.Press(h.t, h.update, keys...)
}

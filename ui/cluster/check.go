package cluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/etcdscope/etcdscope/etcdview/check"
	"github.com/etcdscope/etcdscope/ui/common"
)

// CheckProgressMsg says how far the members check that runs has come.
type CheckProgressMsg struct {
	gen     int
	p       check.Progress
	elapsed time.Duration
}

// CheckedMsg carries the members check's report, or why there is none.
type CheckedMsg struct {
	gen    int
	report *check.Report
	err    error
	took   time.Duration
}

// checkRun is the members check of the pane: the one that runs, or the
// last one's report.
type checkRun struct {
	gen      int
	shown    bool // the check view is in front of the members table
	stop     context.CancelFunc
	progress *CheckProgressMsg
	updates  chan CheckProgressMsg
	report   *check.Report
	err      error
	took     time.Duration
	// lines are the report laid out, keys the differing key of each line
	// ("" for a line that is none).
	lines  []common.Line
	keys   []string
	cursor common.Cursor
}

func (r *checkRun) running() bool { return r.stop != nil }

// startCheck runs check members in a command, stopping the one that runs:
// it has no timeout but the pane's context, since narrowing a large store
// down to its keys takes as long as it takes; esc or leaving the screen
// stops it.
func (m *Model) startCheck() tea.Cmd {
	m.stopCheck()
	ctx, cancel := context.WithCancel(m.common.Ctx)
	updates := make(chan CheckProgressMsg, 1)
	m.check.gen++
	m.check.shown, m.check.stop, m.check.updates = true, cancel, updates
	m.check.progress, m.check.report, m.check.err, m.check.lines, m.check.keys = nil, nil, nil, nil, nil
	gen, src := m.check.gen, m.common.Src
	start := time.Now()
	run := func() tea.Msg {
		defer cancel()
		defer close(updates)
		rep, err := check.Members(ctx, src, check.Options{Progress: func(p check.Progress) {
			latest(updates, CheckProgressMsg{gen: gen, p: p, elapsed: time.Since(start)})
		}})
		return CheckedMsg{gen: gen, report: rep, err: err, took: time.Since(start)}
	}
	return tea.Batch(run, awaitProgress(updates))
}

// latest puts msg on ch in place of the one the reader has not taken yet:
// the screen wants where the check is now, not every step. Only the
// check's goroutine sends, so the send never waits.
func latest(ch chan CheckProgressMsg, msg CheckProgressMsg) {
	select {
	case <-ch:
	default:
	}
	ch <- msg
}

func awaitProgress(ch <-chan CheckProgressMsg) tea.Cmd {
	return func() tea.Msg {
		if msg, ok := <-ch; ok {
			return msg
		}
		return nil
	}
}

// stopCheck stops the check that runs, if one does; its answer is dropped.
func (m *Model) stopCheck() {
	if m.check.stop != nil {
		m.check.stop()
		m.check.stop, m.check.progress, m.check.updates = nil, nil, nil
		m.check.gen++
		m.check.err = context.Canceled
	}
}

func (m *Model) onCheckProgress(msg CheckProgressMsg) tea.Cmd {
	if msg.gen != m.check.gen || !m.check.running() {
		return nil
	}
	m.check.progress = &msg
	return awaitProgress(m.check.updates)
}

func (m *Model) onChecked(msg CheckedMsg) tea.Cmd {
	if msg.gen != m.check.gen {
		return nil
	}
	m.check.stop, m.check.progress, m.check.updates = nil, nil, nil
	m.check.report, m.check.err, m.check.took = msg.report, msg.err, msg.took
	if msg.err != nil {
		m.check.lines, m.check.keys = nil, nil
		return nil
	}
	m.check.lines, m.check.keys = m.reportLines(msg.report)
	m.check.cursor.Pos, m.check.cursor.Offset = 0, 0
	for i, k := range m.check.keys {
		if k != "" {
			m.check.cursor.Pos = i
			break
		}
	}
	m.check.cursor.Clamp(len(m.check.lines))
	return nil
}

// onCheckKey takes the keys of the check view: esc stops the check that
// runs, or goes back to the members; enter opens a differing key.
func (m *Model) onCheckKey(msg tea.KeyMsg) tea.Cmd {
	c := &m.check
	if c.cursor.Move(m.keys.NavKeyMap, msg, len(c.lines)) {
		return nil
	}
	switch {
	case key.Matches(msg, m.keys.Check):
		return m.startCheck()
	case key.Matches(msg, m.keys.Back) && c.running():
		m.stopCheck()
	case key.Matches(msg, m.keys.Back):
		c.shown = false
	case key.Matches(msg, m.keys.Open) && c.cursor.Pos < len(c.keys) && c.keys[c.cursor.Pos] != "":
		return common.Send(common.OpenMemberValuesMsg{Key: c.keys[c.cursor.Pos], Rev: c.report.Rev})
	}
	return nil
}

// checkStatus is the check view's first row: what runs, or what was found.
func (m *Model) checkStatus() string {
	s, c := m.common.Styles, &m.check
	switch {
	case c.running() && c.progress == nil:
		return s.Faint.Render("check members: pinning a revision… (esc stops)")
	case c.running():
		return s.Faint.Render(fmt.Sprintf("check members: %s, %.1fs (esc stops)", progressText(c.progress.p), c.progress.elapsed.Seconds()))
	case errors.Is(c.err, context.Canceled):
		return s.Faint.Render("check members stopped: c runs it again")
	case c.err != nil:
		return common.Render(s.FlashErr, "check members: "+c.err.Error())
	case c.report != nil:
		return summary(s, c.report, c.took)
	}
	return ""
}

// progressText is where a check is: its phase, and in the comparison of
// keys, how many of about how many.
func progressText(p check.Progress) string {
	if p.Phase != check.PhaseCompare {
		return p.Phase + " each member's store"
	}
	if p.Total > 0 {
		return fmt.Sprintf("%s, %d of about %d", p.Phase, p.Done, p.Total)
	}
	return fmt.Sprintf("%s, %d", p.Phase, p.Done)
}

// checkView draws the check view: its status, then the report.
func (m *Model) checkView(title string) string {
	head := common.Fit(title, m.width) + "\n" + common.Fit(m.checkStatus(), m.width)
	c := m.check
	// The cursor shows only where there are keys to open.
	mark := m.focused && c.report != nil && len(c.report.Differences) > 0
	return head + "\n" + common.RenderWindow(c.lines, c.cursor, m.width, m.common.Styles.Selection(mark), mark)
}

package ui

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/ui/common"
	"github.com/etcdscope/etcdscope/ui/tail"
	"github.com/etcdscope/etcdscope/ui/tree"
)

// notRecording is what a key of the time line says on a source that
// records no times.
const notRecording = "[ ] { } and :at move through a recording (etcdscope record, opened with --db); this source records no times"

// recording is the time line of a recording: its span, by the times its
// revisions arrived (etcdview.RecordedTimes), and the position every screen
// shows. The methods that look for a revision run on a copy, off the
// Update goroutine.
type recording struct {
	times etcdview.RecordedTimes
	prev  etcdview.PrevRevisions
	// start is the revision of the recording's first snapshot, the oldest
	// state it holds (the file's compaction revision); head its newest.
	start, head int64
	first, last time.Time // the first and the last recorded time
	rev         int64     // the position
	at          time.Time // when rev arrived; zero before the first time
}

// recordingMsg carries the time line of the source; nil when it records
// no times.
type recordingMsg struct {
	rec *recording
	err error
}

// readRecording reads the span of a source that records times, with the
// position it opens at (Options.Rev, or the head).
func (m *Model) readRecording() tea.Cmd {
	times, ok := m.opts.Source.(etcdview.RecordedTimes)
	prev, stepsBack := m.opts.Source.(etcdview.PrevRevisions)
	if !ok || !stepsBack {
		return nil
	}
	c, rev := m.common, m.opts.Rev
	return func() tea.Msg {
		ctx, cancel := c.Context()
		defer cancel()
		r := &recording{times: times, prev: prev}
		var ok bool
		var err error
		if r.last, ok, err = times.NewestTime(ctx); err != nil || !ok {
			return recordingMsg{err: err}
		}
		st, err := c.Src.Status(ctx)
		if err != nil {
			return recordingMsg{err: err}
		}
		r.start, r.head, r.rev, r.at = st.CompactRevision, st.Revision, st.Revision, r.last
		// Every recorded time is after the Unix epoch: the first revision
		// since then is the first that has one.
		firstRev, _, err := times.RevisionSince(ctx, time.Unix(0, 0))
		if err == nil {
			r.first, _, err = times.TimeOf(ctx, firstRev)
		}
		if err == nil && rev > 0 {
			r.rev = rev
			r.at, _, err = times.TimeOf(ctx, rev)
		}
		return recordingMsg{rec: r, err: err}
	}
}

func (m *Model) onRecording(msg recordingMsg) tea.Cmd {
	if msg.err != nil {
		return m.setFlash("cannot read the recording's times: "+msg.err.Error(), true)
	}
	if msg.rec == nil {
		return nil
	}
	m.rec = msg.rec
	m.layout() // the time line takes a row of the body's
	m.tail.Replay(m.rec.times, m.rec.rev, m.rec.at)
	return nil
}

// moveKey performs a key of the time line: a revision or a minute back or
// forward.
func (m *Model) moveKey(msg tea.KeyMsg) tea.Cmd {
	if m.rec == nil {
		return m.setFlash(notRecording, true)
	}
	r, src := *m.rec, m.common.Src
	find := r.minuteForward
	switch {
	case key.Matches(msg, m.keys.StepBack):
		find = func(ctx context.Context) (int64, error) { return r.before(ctx, r.rev) }
	case key.Matches(msg, m.keys.StepForward):
		find = func(ctx context.Context) (int64, error) { return r.after(ctx, src) }
	case key.Matches(msg, m.keys.MinuteBack):
		find = func(ctx context.Context) (int64, error) {
			if r.at.IsZero() {
				return 0, r.atStart()
			}
			return r.asOf(ctx, r.at.Add(-time.Minute))
		}
	}
	return m.moveTo(find)
}

// moveTo shows every screen as of the revision find gives; an error of
// find is a flash.
func (m *Model) moveTo(find func(context.Context) (int64, error)) tea.Cmd {
	c, times := m.common, m.rec.times
	return func() tea.Msg {
		ctx, cancel := c.Context()
		defer cancel()
		rev, err := find(ctx)
		if err != nil {
			return common.FlashMsg{Text: err.Error(), Err: true}
		}
		msg := checkRev(ctx, c, times, rev)
		msg.stay = true
		return msg
	}
}

// checkRev reads whether rev can be read, and when it arrived on a
// recording (times nil for another source).
func checkRev(ctx context.Context, c common.Common, times etcdview.RecordedTimes, rev int64) revCheckedMsg {
	msg := revCheckedMsg{rev: rev}
	if _, msg.err = c.Src.Children(ctx, tree.Root, rev); msg.err != nil || times == nil {
		return msg
	}
	if rev == 0 {
		msg.at, _, msg.err = times.NewestTime(ctx)
	} else {
		msg.at, _, msg.err = times.TimeOf(ctx, rev)
	}
	return msg
}

// setPosition is the time line's new position, which revCheckedMsg or
// a play (tail.PlayedMsg) gives.
func (m *Model) setPosition(rev int64, at time.Time) tea.Cmd {
	if m.rec == nil {
		return nil
	}
	if rev == 0 {
		rev = m.rec.head
	}
	m.rec.rev, m.rec.at = rev, at
	return m.tail.SetPosition(rev, at)
}

// onPlayed follows a replay on the time line; where it stopped, every
// screen shows.
func (m *Model) onPlayed(msg tail.PlayedMsg) tea.Cmd {
	if m.rec == nil {
		return nil
	}
	m.rec.rev, m.rec.at = msg.Rev, msg.At
	if !msg.Stopped {
		return nil
	}
	return m.browse.setRev(msg.Rev)
}

func (r recording) atStart() error {
	return fmt.Errorf("at the start of the recording: revision %d, its first snapshot", r.start)
}

// after is the first revision after the position the recording holds.
// A replay (Source.Watch from a revision) gives the revisions in order;
// the first is the next one.
func (r recording) after(ctx context.Context, src etcdview.Source) (int64, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for b := range src.Watch(ctx, "", etcdview.WatchOptions{Rev: r.rev + 1}) {
		switch {
		case b.Err != nil:
			return 0, fmt.Errorf("the revision after %d: %w", r.rev, b.Err)
		case len(b.Events) > 0 && b.Revision <= r.head:
			return b.Revision, nil
		case len(b.Events) > 0:
			return 0, r.atEnd()
		}
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	return 0, r.atEnd()
}

func (r recording) atEnd() error {
	return fmt.Errorf("at the end of the recording: revision %d", r.head)
}

// before is the last revision before rev the recording holds, or its
// start: the newest of its rows before rev, in one read of the file.
func (r recording) before(ctx context.Context, rev int64) (int64, error) {
	if rev <= r.start {
		return 0, r.atStart()
	}
	prev, ok, err := r.prev.PrevRevision(ctx, "", rev)
	switch {
	case err != nil:
		return 0, fmt.Errorf("the revision before %d: %w", rev, err)
	case !ok:
		return r.start, nil
	}
	return prev, nil
}

// minuteForward is the first revision that arrived a minute or more after
// the position.
func (r recording) minuteForward(ctx context.Context) (int64, error) {
	base := r.at
	if base.IsZero() {
		base = r.first
	}
	t := base.Add(time.Minute)
	rev, ok, err := r.times.RevisionSince(ctx, t)
	switch {
	case err != nil:
		return 0, err
	case !ok || rev > r.head:
		return 0, fmt.Errorf("nothing arrived a minute after the position: the recording ends at %s", r.last.Format(time.TimeOnly))
	}
	return rev, nil
}

// asOf is the revision the cluster was at, at t: the last one that
// arrived at or before t, or the start before the first recorded time.
func (r recording) asOf(ctx context.Context, t time.Time) (int64, error) {
	if t.Before(r.first) {
		return r.start, nil
	}
	next, ok, err := r.times.RevisionSince(ctx, t.Add(time.Nanosecond))
	switch {
	case err != nil:
		return 0, err
	case !ok || next > r.head:
		return r.head, nil
	}
	return r.before(ctx, next)
}

// atCommand is :at TIME: every screen as of that moment of the recording.
func (m *Model) atCommand(args []string) tea.Cmd {
	if len(args) != 1 {
		return m.setFlash(":at takes a time of the recording: :at 03:12, :at 03:12:30, :at 2026-12-02T03:12:00", true)
	}
	if m.rec == nil {
		return m.setFlash(notRecording, true)
	}
	r := *m.rec
	t, err := r.parseAt(args[0], m.location())
	if err != nil {
		return m.setFlash(":at "+err.Error(), true)
	}
	return m.moveTo(func(ctx context.Context) (int64, error) { return r.asOf(ctx, t) })
}

// clockLayouts are the times of day :at takes, with the step each names;
// dateLayouts the full ones, in the user's zone unless they give one.
var (
	clockLayouts = []struct {
		layout string
		step   time.Duration
	}{{"15:04", time.Minute}, {"15:04:05", time.Second}}
	dateLayouts = []struct {
		layout string
		step   time.Duration
	}{{time.RFC3339, time.Second}, {"2006-01-02T15:04:05", time.Second}, {"2006-01-02T15:04", time.Minute}}
)

// parseAt is the moment s names in the recording's span: a time of day is
// that of the last day of the span it falls in. A time names the whole
// minute (or second) it writes: 03:12 is in a span that starts at
// 03:12:40, as of its start.
func (r recording) parseAt(s string, loc *time.Location) (time.Time, error) {
	var cands []time.Time
	var step time.Duration
	for _, l := range clockLayouts {
		c, err := time.ParseInLocation(l.layout, s, loc)
		if err != nil {
			continue
		}
		step = l.step
		first, last := r.first.In(loc), r.last.In(loc)
		for d := last; !d.Before(first.AddDate(0, 0, -1)); d = d.AddDate(0, 0, -1) {
			cands = append(cands, time.Date(d.Year(), d.Month(), d.Day(), c.Hour(), c.Minute(), c.Second(), 0, loc))
		}
	}
	for _, l := range dateLayouts {
		if c, err := time.ParseInLocation(l.layout, s, loc); err == nil {
			cands, step = []time.Time{c}, l.step
		}
	}
	if cands == nil {
		return time.Time{}, fmt.Errorf("%s: a time is 03:12, 03:12:30 or 2026-12-02T03:12:00", s)
	}
	for _, c := range cands {
		if c.Add(step).After(r.first) && !c.After(r.last) {
			return maxTime(c, r.first), nil
		}
	}
	return time.Time{}, fmt.Errorf("%s is outside the recording, which spans %s to %s", s,
		r.first.In(loc).Format(time.DateTime), r.last.In(loc).Format(time.DateTime))
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// location is the zone times are shown and typed in.
func (m *Model) location() *time.Location {
	if m.opts.Location != nil {
		return m.opts.Location
	}
	return time.Local
}

// timeLine is the header's row on a recording: its span, where the
// position sits on it, its revision and time, and the replay's state.
func (m *Model) timeLine() string {
	r, s, loc := m.rec, m.common.Styles, m.location()
	when := ", before the first recorded time"
	if !r.at.IsZero() {
		when = " at " + r.at.In(loc).Format(time.DateTime)
	}
	left := "replay " + r.first.In(loc).Format(time.TimeOnly) + " "
	right := fmt.Sprintf(" %s · rev %d%s", r.last.In(loc).Format(time.TimeOnly), r.rev, when)
	if st := m.tail.PlayState(); st != "" {
		right += " · " + st
	}
	width := m.width - ansi.StringWidth(left) - ansi.StringWidth(right)
	if width < 3 {
		return common.Fit(strings.TrimSpace(right), m.width)
	}
	frac := 1.0
	if span := r.last.Sub(r.first); span > 0 {
		frac = min(max(float64(r.at.Sub(r.first))/float64(span), 0), 1)
	}
	if r.at.IsZero() {
		frac = 0
	}
	i := int(frac*float64(width-1) + 0.5)
	bar := strings.Repeat("─", i) + s.Note.Render("●") + strings.Repeat("─", width-1-i)
	return s.Faint.Render(left) + bar + right
}

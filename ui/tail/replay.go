package tail

import (
	"context"
	"fmt"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/ui/common"
)

// speeds are the replay's speeds, in the order the speed key cycles them:
// the recorded gaps in time, ten times faster, and 0, as fast as the rows
// are read.
var speeds = []int{1, 10, 0}

// playState is where a replay stands.
type playState int

const (
	stopped playState = iota // no play since the position last moved
	playing
	paused
	finished // the recording's last revision was played
)

// player replays a recording from the position the app shows, paced by the
// times the recorder wrote down (etcdview.RecordedTimes): the tail's rows
// arrive as they arrived then.
type player struct {
	times etcdview.RecordedTimes
	// pos is the app's position, which a play starts after, and posAt
	// its time (zero when the recording has none for it).
	pos   int64
	posAt time.Time
	// played is the last revision the play delivered; pos before any.
	played int64
	speed  int // index in speeds
	state  playState
	// gen counts the plays: a message of an earlier one is dropped.
	gen    int
	cancel context.CancelFunc
	ch     <-chan etcdview.Batch
	// lastAt is the recorded time of the last batch delivered, from which
	// the next one's gap is counted.
	lastAt time.Time
	// held is a read that came due while paused, delivered on resume.
	held *playReadMsg
}

// playReadMsg carries the next batches of a play, the recorded time of
// the last of them, and their verdicts under the :where in force.
type playReadMsg struct {
	gen     int
	batches BatchesMsg
	at      time.Time
	closed  bool
	err     error
}

// playDueMsg says a read's recorded gap, at the play's speed, has passed.
type playDueMsg struct{ read playReadMsg }

// PlayedMsg tells the app how far a replay got: the last revision played
// and when it was recorded. Stopped says the play paused or reached the
// end there, so that every screen can show that revision.
type PlayedMsg struct {
	Rev     int64
	At      time.Time // zero when the recording has no time for Rev
	Stopped bool
}

// Replay makes the tail a player of a recording, at rev (recorded at at):
// the live watch of a file has nothing to tail.
func (m *Model) Replay(times etcdview.RecordedTimes, rev int64, at time.Time) {
	m.play = &player{times: times, pos: -1}
	m.watch, m.ended = nil, false
	m.SetPosition(rev, at)
}

// PlayState is the replay's state for the header: "" while no play runs,
// else the state and the speed.
func (m *Model) PlayState() string {
	if m.play == nil || m.play.state == stopped {
		return ""
	}
	return m.play.stateName()
}

func (p *player) stateName() string {
	switch p.state {
	case playing:
		return "▶ " + p.speedName()
	case paused:
		return "⏸ " + p.speedName()
	case finished:
		return "■ end"
	}
	return "ready, " + p.speedName()
}

func (p *player) speedName() string {
	if speeds[p.speed] == 0 {
		return "max"
	}
	return fmt.Sprintf("%d×", speeds[p.speed])
}

// SetPosition moves the replay to rev, where the app now shows every
// screen: a play under way goes on from there, one paused or ended starts
// over. The position a play reported itself (PlayedMsg) changes nothing.
func (m *Model) SetPosition(rev int64, at time.Time) tea.Cmd {
	p := m.play
	if p == nil || rev == p.played && p.state != stopped || rev == p.pos && p.state == stopped {
		return nil
	}
	wasPlaying := p.state == playing
	p.stop()
	p.pos, p.posAt, p.played = rev, at, rev
	if wasPlaying {
		return m.startPlay()
	}
	m.clearRows(fmt.Sprintf("a recording: space plays it from revision %d, > sets the speed", rev))
	return nil
}

// stop ends the play's reads; the next start opens a new one.
func (p *player) stop() {
	if p.cancel != nil {
		p.cancel()
	}
	p.gen++
	p.state, p.cancel, p.ch, p.held = stopped, nil, nil, nil
}

// clearRows empties the ring for a new play, with note as its first row.
func (m *Model) clearRows(note string) {
	m.ring = NewRing(m.ring.Cap())
	m.values = newValueCache()
	m.where.counts, m.where.late, m.where.sweepAt, m.where.lastErr = [4]int{}, nil, 0, ""
	m.index, m.detail, m.follow = nil, nil, true
	m.cursor = common.Cursor{Height: m.listHeight()}
	m.push(Row{Note: note, Rev: m.play.pos})
	m.reindex()
}

// startPlay replays the revisions after the position: again from there
// when the last play ended.
func (m *Model) startPlay() tea.Cmd {
	p := m.play
	p.stop()
	m.clearRows(fmt.Sprintf("replay from revision %d at %s speed", p.pos, p.speedName()))
	ctx, cancel := context.WithCancel(m.common.Ctx)
	p.cancel, p.state, p.lastAt, p.played = cancel, playing, p.posAt, p.pos
	p.ch = m.common.Src.Watch(ctx, Prefix, etcdview.WatchOptions{Rev: p.pos + 1})
	return m.readPlay()
}

// readPlay reads the play's next batch, or at full speed every batch
// waiting, and the time the last of them was recorded at.
func (m *Model) readPlay() tea.Cmd {
	p, c := m.play, m.common
	gen, ch, times, limit := p.gen, p.ch, p.times, 1
	if speeds[p.speed] == 0 {
		limit = maxBatchesPerMsg
	}
	return func() tea.Msg {
		bs, closed := common.Drain(ch, limit)
		read := playReadMsg{gen: gen, closed: closed}
		read.batches.Batches = bs
		read.batches.rule, read.batches.verdicts, read.batches.errs = judgeEvents(c, &m.current, bs)
		if len(bs) > 0 {
			ctx, cancel := c.Context()
			defer cancel()
			at, ok, err := times.TimeOf(ctx, bs[len(bs)-1].Revision)
			if ok {
				read.at = at
			}
			read.err = err
		}
		return read
	}
}

// onPlayRead waits the recorded gap before the batches, divided by the
// speed, on the UI's timer: never a sleep in Update.
func (m *Model) onPlayRead(read playReadMsg) tea.Cmd {
	p := m.play
	if p == nil || read.gen != p.gen {
		return nil
	}
	var wait time.Duration
	if s := speeds[p.speed]; s > 0 && !read.at.IsZero() && !p.lastAt.IsZero() {
		wait = max(read.at.Sub(p.lastAt)/time.Duration(s), 0)
	}
	if !read.at.IsZero() {
		p.lastAt = read.at
	}
	if wait == 0 {
		return m.onPlayDue(read)
	}
	return m.common.After(wait, func(time.Time) tea.Msg { return playDueMsg{read} })
}

// onPlayDue shows the batches, unless paused, and reads the next.
func (m *Model) onPlayDue(read playReadMsg) tea.Cmd {
	p := m.play
	if p == nil || read.gen != p.gen {
		return nil
	}
	if p.state == paused {
		p.held = &read
		return nil
	}
	cmds := []tea.Cmd{m.ingest(read.batches)}
	if read.err != nil {
		cmds = append(cmds, common.FlashErr(fmt.Errorf("replay: the times of the recording: %w", read.err)))
	}
	if n := len(read.batches.Batches); n > 0 {
		p.played = read.batches.Batches[n-1].Revision
	}
	played := PlayedMsg{Rev: p.played, At: p.lastAt}
	if read.closed {
		p.stop()
		p.state = finished
		m.push(Row{Note: fmt.Sprintf("end of the recording, at revision %d", p.played), Rev: p.played})
		m.clamp()
		played.Stopped = true
	} else {
		cmds = append(cmds, m.readPlay())
	}
	return tea.Batch(append(cmds, common.Send(played))...)
}

// playKey takes the replay's keys: play or pause, and the speed.
func (m *Model) playKey(msg tea.KeyMsg) (tea.Cmd, bool) {
	p := m.play
	switch {
	case p == nil && key.Matches(msg, m.keys.Speed):
		return common.Flash("> sets the speed a recording replays at; this source is no recording"), true
	case p == nil:
		return nil, false
	case key.Matches(msg, m.keys.Speed):
		p.speed = (p.speed + 1) % len(speeds)
		return common.Flash("replay at " + p.speedName() + " speed"), true
	case !key.Matches(msg, m.keys.Play):
		return nil, false
	}
	switch p.state {
	case playing:
		p.state = paused
		return common.Send(PlayedMsg{Rev: p.played, At: p.lastAt, Stopped: true}), true
	case paused:
		p.state = playing
		if held := p.held; held != nil {
			p.held = nil
			return m.onPlayDue(*held), true
		}
		return nil, true
	}
	return m.startPlay(), true
}

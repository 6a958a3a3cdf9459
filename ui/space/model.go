// Package space is the space screen (6): where etcd's bytes and writes go,
// a level of the /registry tree at a time, over etcdview/space's report,
// with the live rate of writes from the tail's watch, the largest and
// hottest keys, each member's DB against its quota, the forecast and the
// guidance.
package space

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/progress"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/etcdview/space"
	"github.com/etcdscope/etcdscope/ui/common"
)

// Root is the prefix the screen reads: everything kube-apiserver stores.
const Root = decode.DefaultPrefix + "/"

// Timing of the screen's ticks: the progress bar is redrawn, and the job
// polled, at readingEvery while a read is under way; the rates at rateEvery.
const (
	readingEvery = 100 * time.Millisecond
	rateEvery    = time.Second
)

// firstDepth is the depth read when the screen opens: resources and
// namespaces, as du's default.
const firstDepth = space.DefaultDepth

// meterDepth is how deep the live rates are kept: a custom resource's
// objects are at 4 (GROUP/PLURAL/NS/NAME). The meter bounds its nodes.
const meterDepth = 4

// liveKeys is how many of the hottest keys by live rate are asked of the
// meter, before those outside the level are left out.
const liveKeys = 50

// tickMsg polls the job and measures the rates.
type tickMsg struct {
	gen int
	at  time.Time
}

// findingsMsg carries the guidance of report gen.
type findingsMsg struct {
	gen      int
	findings []space.Finding
}

// pane is the list of the screen that has the cursor.
type pane int

const (
	levelPane pane = iota
	largestPane
	hottestPane
	livePane
	panes
)

// Model is the space screen.
type Model struct {
	common common.Common
	keys   KeyMap
	bar    progress.Model

	job      *space.Job
	gen      int // the job, and the report it made
	tickGen  int // the tick loop running; one at a time
	ticking  bool
	progress space.Progress
	report   *space.Report
	err      error
	// pending is the level to show once the job under way is read (a
	// level below the depth read so far).
	pending string
	// cancelled says the last read was cancelled, and how far it was.
	cancelled *space.Progress

	level  string
	by     space.Measure
	meter  *space.Meter
	rates  space.Rates
	trend  space.SizeTrend
	status *etcdview.Cluster
	// forecast is the one forecast of the moment, made at each reading
	// and tick: the header, the forecast line and the guidance all show it.
	forecast *space.Forecast
	findings []space.Finding

	pane    pane
	cursors [panes]common.Cursor
	rows    []*space.Node

	width, height int
	focused       bool
}

// New is a space screen that has read nothing yet; its meter counts the
// batches Observe hands it from now on.
func New(c common.Common) *Model {
	return &Model{common: c, keys: DefaultKeyMap(), bar: progress.New(progress.WithDefaultGradient(), progress.WithoutPercentage()),
		level: Root, by: space.ByBytes, meter: space.NewMeter(Root, meterDepth, 0)}
}

// Focus gives or takes the keyboard focus.
func (m *Model) Focus(on bool) { m.focused = on }

// SetSize sets the screen's size.
func (m *Model) SetSize(w, h int) {
	m.width, m.height = w, h
	m.bar.Width = max(10, min(60, w/2))
	m.layoutCursors()
}

// ShortHelp lists the screen's main keys.
func (m *Model) ShortHelp() []key.Binding { return m.keys.ShortHelp() }

// FullHelp lists all the screen's keys.
func (m *Model) FullHelp() [][]key.Binding { return m.keys.FullHelp() }

// Open shows the screen: the first time it reads the report, and the
// ticks start again if they stopped while it was hidden.
func (m *Model) Open() tea.Cmd {
	if m.report == nil && m.job == nil && m.err == nil {
		return m.read(firstDepth, Root)
	}
	return m.tick()
}

// Observe counts the tail's batches in the live rates, at now. The app
// hands over every batch of the tail's watch: the screen opens none.
func (m *Model) Observe(bs []etcdview.Batch, now time.Time) {
	for _, b := range bs {
		m.meter.Observe(b, now)
	}
}

// SetStatus takes a reading of the members' status: their DB size against
// the quota, and its slope for the forecast.
func (m *Model) SetStatus(cl etcdview.Cluster, err error, at time.Time) {
	if err != nil {
		return
	}
	m.status = &cl
	m.trend.Observe(cl, at)
	m.updateForecast()
}

// read starts a report down to depth, to show level once read; a read
// under way is cancelled.
func (m *Model) read(depth int, level string) tea.Cmd {
	src, ok := m.common.Src.(space.Source)
	if !ok {
		m.err = fmt.Errorf("%T cannot be scanned for its space", m.common.Src)
		return nil
	}
	if m.job != nil {
		m.job.Cancel()
	}
	m.gen++
	m.err, m.cancelled, m.pending, m.progress = nil, nil, level, space.Progress{}
	m.job = space.Start(m.common.Ctx, src, space.Options{Prefix: Root, Depth: depth})
	// A new loop at the pace of the progress bar; the one at the rates'
	// pace ends at its next tick, whose generation is gone.
	m.ticking = false
	return m.tick()
}

// tick starts the tick loop unless one runs.
func (m *Model) tick() tea.Cmd {
	if m.ticking {
		return nil
	}
	m.ticking = true
	m.tickGen++
	return m.nextTick()
}

func (m *Model) nextTick() tea.Cmd {
	every, gen := rateEvery, m.tickGen
	if m.job != nil {
		every = readingEvery
	}
	return m.common.After(every, func(at time.Time) tea.Msg { return tickMsg{gen: gen, at: at} })
}

// Update handles the screen's keys, its ticks and its guidance.
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tickMsg:
		if msg.gen != m.tickGen {
			return nil
		}
		return m.onTick(msg.at)
	case findingsMsg:
		if msg.gen == m.gen {
			m.findings = msg.findings
		}
	case tea.KeyMsg:
		return m.onKey(msg)
	case tea.MouseMsg:
		m.cursors[m.pane].Move(m.keys.NavKeyMap, msg, m.paneLen(m.pane))
	}
	return nil
}

// onTick polls the job, measures the rates, and ticks again while the
// screen is shown or a read is under way.
func (m *Model) onTick(at time.Time) tea.Cmd {
	var cmds []tea.Cmd
	if m.job != nil {
		m.progress = m.job.Progress()
		select {
		case <-m.job.Done():
			cmds = append(cmds, m.finish())
		default:
		}
	}
	m.rates = m.meter.Rates(at, liveKeys)
	m.updateForecast()
	m.refreshRows()
	if !m.focused && m.job == nil {
		m.ticking = false
		return tea.Batch(cmds...)
	}
	return tea.Batch(append(cmds, m.nextTick())...)
}

// finish takes the ended job's report, or why there is none: a cancelled
// read keeps the report shown before it.
func (m *Model) finish() tea.Cmd {
	r, err := m.job.Result()
	m.job = nil
	switch {
	case errors.Is(err, context.Canceled):
		p := m.progress
		m.cancelled = &p
		return nil
	case err != nil:
		m.err = err
		return nil
	}
	m.report, m.level = r, m.pending
	if r.Find(m.level) == nil {
		m.level = Root
	}
	m.cursors = [panes]common.Cursor{}
	m.pane = levelPane
	m.layoutCursors()
	m.refreshRows()
	m.updateForecast()
	return m.guide()
}

// guide works out the report's findings off the UI goroutine: naming a
// hot key's writer reads its value.
func (m *Model) guide() tea.Cmd {
	r, rates, gen, c := m.report, m.rates, m.gen, m.common
	namer := func(ctx context.Context, key string, rev int64) (string, error) {
		kv, err := c.Src.Get(ctx, key, rev)
		if err != nil {
			return "", err
		}
		return decode.LastWriter(key, kv.Value)
	}
	return func() tea.Msg {
		ctx, cancel := c.Context()
		defer cancel()
		// The forecast's finding is not among them: it is made from the
		// forecast of the moment when drawn (guideLines), not frozen here.
		return findingsMsg{gen: gen, findings: space.Guide(ctx, r, &rates, nil, namer)}
	}
}

// members are the members' space: from the last status reading on a live
// etcd, from the report's read otherwise (a data file's are its pages).
func (m *Model) members() []space.Member {
	if m.report != nil && (m.report.Layout != nil || m.status == nil) {
		return m.report.Members
	}
	if m.status == nil {
		return nil
	}
	var ms []space.Member
	for _, mb := range m.status.Members {
		ms = append(ms, space.Member{Name: mb.Name, Endpoint: mb.Endpoint, Leader: mb.Leader, DBSize: mb.DBSize, InUse: mb.DBInUse,
			Quota: space.DefaultQuota, Alarms: mb.Alarms, Err: mb.Err})
	}
	return ms
}

// updateForecast forecasts each member's quota from its size after each
// compaction when two were seen, else from the bytes written, and keeps
// the member that reaches it first.
func (m *Model) updateForecast() {
	growth := func(member string) space.Growth {
		if g, ok := m.trend.Growth(member); ok {
			return g
		}
		if m.rates.Over >= time.Second {
			return space.WriteGrowth(m.rates)
		}
		return space.Growth{}
	}
	m.forecast = nil
	if f, found := space.ForecastQuota(m.members(), growth); found {
		m.forecast = &f
	}
}

// Warning is what the header warns of: the DB at its quota, or reaching it
// within a day at the DB size's own growth across compactions
// (Forecast.Urgent); "" otherwise.
func (m *Model) Warning() string {
	f := m.forecast
	switch {
	case f == nil || !f.Urgent():
		return ""
	case f.Full:
		return fmt.Sprintf("⚠ %s at its quota: NOSPACE", f.Member)
	}
	return fmt.Sprintf("⚠ %s reaches its quota in %s", f.Member, roughly(f.Left))
}

// roughly is d to the minute, or to the second under a minute.
func roughly(d time.Duration) string {
	if d < time.Minute {
		return d.Round(time.Second).String()
	}
	s := d.Round(time.Minute).String()
	return s[:len(s)-2] // "5h2m0s" → "5h2m"
}

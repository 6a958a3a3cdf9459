package changes

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/etcdview/changes"
	"github.com/etcdscope/etcdscope/ui/common"
)

// DefaultSince is the window the screen reads when it is first shown.
const DefaultSince = 10 * time.Minute

// state is where the screen's read stands.
type state int

const (
	idle state = iota // nothing asked yet
	loading
	ready
	failed
)

// WindowMsg carries a window read for the screen, or why it could not be.
type WindowMsg struct {
	gen int
	win changes.Window
	err error
}

// progressMsg asks the screen to redraw how far read number gen has come.
type progressMsg struct{ gen int }

// progressEvery is how often a read's progress is redrawn.
const progressEvery = 250 * time.Millisecond

// row is one row of the screen: a group's counts, or one object of it.
type row struct {
	line common.Line
	key  string // the object's key; "" for a group's row
	rev  int64  // the object's last change in the window
}

// Model is the timeline screen.
type Model struct {
	common common.Common
	keys   KeyMap
	asked  changes.Range
	gen    int                // the read whose answer the screen waits for
	cancel context.CancelFunc // ends the read that runs
	read   *changes.Progress  // how far the read that runs has come
	state  state
	win    changes.Window
	err    error
	rows   []row
	cursor common.Cursor

	width, height int
	focused       bool
}

// New is a timeline screen that has read nothing yet.
func New(c common.Common) *Model { return &Model{common: c, keys: DefaultKeyMap()} }

// Opened says whether a window was asked for.
func (m *Model) Opened() bool { return m.state != idle }

// ParseWindow reads the arguments of :changes: a duration ("30m") for the
// changes since then, or a revision to start from (DefaultSince when
// neither), and a prefix to read below ("/registry/deployments/").
func ParseWindow(args []string) (changes.Range, error) {
	r := changes.Range{Since: DefaultSince}
	window := false
	for _, a := range args {
		rev, revErr := strconv.ParseInt(a, 10, 64)
		d, durErr := time.ParseDuration(a)
		switch {
		case strings.HasPrefix(a, "/") && r.Prefix == "":
			r.Prefix = a
		case !window && revErr == nil && rev > 0:
			r, window = changes.Range{Prefix: r.Prefix, From: rev}, true
		case !window && durErr == nil && d > 0:
			r.Since, window = d, true
		default:
			return changes.Range{}, fmt.Errorf(":changes %s: want a duration (30m) or a revision (1200), and a prefix (/registry/pods/)", strings.Join(args, " "))
		}
	}
	return r, nil
}

// Open reads the window r in the background; the screen shows it when the
// read ends. A window since a time counts back from now on a live etcd, and
// from the newest recorded time in a data file, whose head is in the past.
// A read still running is stopped: a live watch over a long window reads
// every revision of it, for nothing once another window is asked.
func (m *Model) Open(r changes.Range) tea.Cmd {
	if _, file := m.common.Src.(etcdview.Offline); r.Since > 0 && r.Now.IsZero() && !file {
		r.Now = time.Now()
	}
	m.stop()
	ctx, cancel := context.WithCancel(m.common.Ctx)
	m.asked, m.state, m.err = r, loading, nil
	m.gen++
	m.cancel, m.read = cancel, new(changes.Progress)
	gen, c, p := m.gen, m.common, m.read
	return tea.Batch(func() tea.Msg {
		w, err := changes.Read(ctx, c.Src, c.Decoder, r, p)
		return WindowMsg{gen: gen, win: w, err: err}
	}, m.tick(gen))
}

// stop ends the read that runs, if one does.
func (m *Model) stop() {
	if m.cancel != nil {
		m.cancel()
		m.cancel = nil
	}
}

func (m *Model) tick(gen int) tea.Cmd {
	return m.common.After(progressEvery, func(time.Time) tea.Msg { return progressMsg{gen} })
}

// Update handles the screen's keys and its reads' answers.
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case WindowMsg:
		if msg.gen != m.gen {
			return nil
		}
		m.stop()
		m.win, m.err, m.state = msg.win, msg.err, ready
		if msg.err != nil {
			m.state = failed
		}
		m.rows = rowsOf(m.common.Styles, msg.win)
		m.cursor = common.Cursor{Height: m.cursor.Height}
		m.cursor.Clamp(len(m.rows))
		return nil
	case progressMsg:
		if msg.gen == m.gen && m.state == loading {
			return m.tick(msg.gen)
		}
		return nil
	case tea.KeyMsg:
		switch {
		case key.Matches(msg, m.keys.Open):
			if m.cursor.Pos < len(m.rows) && m.rows[m.cursor.Pos].key != "" {
				r := m.rows[m.cursor.Pos]
				return common.Send(common.OpenHistoryMsg{Key: r.key, Rev: r.rev})
			}
			return nil
		case key.Matches(msg, m.keys.Reload) && m.state != idle:
			r := m.asked
			r.To, r.Now = 0, time.Time{}
			return m.Open(r)
		}
	}
	m.cursor.Move(m.keys.NavKeyMap, msg, len(m.rows))
	return nil
}

// maxNameWidth bounds the column of names: a longer name is cut.
const maxNameWidth = 40

// rowsOf lays the window out: each group's counts, then its objects, their
// names in a column.
func rowsOf(s *common.Styles, w changes.Window) []row {
	width := 0
	for _, g := range w.Groups {
		for _, o := range g.Objects {
			width = max(width, ansi.StringWidth(common.Text(o.Name)))
		}
	}
	width = min(width, maxNameWidth)
	st := stampsOf(w)
	var rows []row
	for _, g := range w.Groups {
		head := common.StyledLine(s.Bold, g.ResourceName()+"  "+g.Namespace+"  ").Append(counts(s, g.Counts))
		rows = append(rows, row{line: head})
		for _, o := range g.Objects {
			at := w.Times.At(o.LastRevision)
			line := common.NewLine("  "+common.Cell(o.Name, width)+"  ").Append(counts(s, o.Counts),
				common.StyledLine(s.Faint, fmt.Sprintf("  rev %s  %s  ", o.Revisions(), st.short(at.String(), at.Time))))
			// Writers before the summary, and the newest first: the
			// writer of the last change is the one asked for, and a
			// long list or summary runs past the screen's edge.
			if n := len(o.Writers); n > 0 {
				names := make([]string, n)
				for i, wr := range o.Writers {
					names[n-1-i] = st.short(wr.String(), wr.Time)
				}
				line = line.Append(common.StyledLine(s.Faint, "by "), common.NewLine(strings.Join(names, ", ")+"  "))
			}
			line = line.Append(common.NewLine(o.Summary))
			rows = append(rows, row{line: line, key: o.Key, rev: o.LastRevision})
		}
	}
	return rows
}

// stamps formats the times of rows: a time of day alone when the window's
// first and last revisions fall on one day, which the header gives whole,
// so that the writers fit beside them.
type stamps struct{ day string } // "2006-01-02"; "" when the window spans days

func stampsOf(w changes.Window) stamps {
	from, to := w.Times.At(w.From), w.Times.At(w.To)
	day := to.Time.UTC().Format(time.DateOnly)
	if to.Bound == changes.Unknown || from.Bound != changes.Unknown && from.Time.UTC().Format(time.DateOnly) != day {
		return stamps{}
	}
	return stamps{day: day}
}

// short is s, which holds t in RFC 3339, with t as a time of day when t
// falls on the window's day.
func (st stamps) short(s string, t time.Time) string {
	full := t.UTC().Format(time.RFC3339)
	if st.day == "" || !strings.HasPrefix(full, st.day) {
		return s
	}
	return strings.Replace(s, full, t.UTC().Format(time.TimeOnly), 1)
}

func counts(s *common.Styles, c changes.Counts) common.Line {
	return common.StyledLine(s.Added, fmt.Sprintf("+%d ", c.Added)).Append(
		common.StyledLine(s.Modified, fmt.Sprintf("~%d ", c.Modified)),
		common.StyledLine(s.Deleted, fmt.Sprintf("-%d", c.Deleted)))
}

// headerRows is the two rows above the list.
const headerRows = 2

// SetSize sizes the screen.
func (m *Model) SetSize(width, height int) {
	m.width, m.height = width, height
	m.cursor.Height = max(height-headerRows, 1)
	m.cursor.Clamp(len(m.rows))
}

// Focus gives or takes the keys.
func (m *Model) Focus(on bool) { m.focused = on }

// ShortHelp is the footer's part of the keys.
func (m *Model) ShortHelp() []key.Binding { return m.keys.ShortHelp() }

// FullHelp is the help screen's part of the keys.
func (m *Model) FullHelp() [][]key.Binding { return m.keys.FullHelp() }

// View draws the window's revisions and times, then the rows in view.
func (m *Model) View() string {
	s := m.common.Styles
	var top, second string
	switch m.state {
	case idle:
		top = ":changes 30m reads what changed in the last 30 minutes; :changes 1200 from revision 1200"
	case loading:
		top = m.progressLine()
	case failed:
		top = common.Render(s.FlashErr, m.err.Error())
	default:
		top, second = m.windowLines()
	}
	body := common.RenderRows(len(m.rows), m.cursor, func(i int) common.Line { return m.rows[i].line }, m.width, s.Selection(m.focused), m.focused)
	if m.state == ready && len(m.rows) == 0 {
		body = common.FillHeight([]string{"  no changes in the window"}, m.cursor.Height)
	}
	return common.Fit(top, m.width) + "\n" + common.Fit(second, m.width) + "\n" + body
}

// progressLine says how far the read that runs has come.
func (m *Model) progressLine() string {
	from, to, at := m.read.Load()
	if from == 0 || from > to {
		return "reading the window: a watch from its first revision…"
	}
	done := max(at-from+1, 0)
	return fmt.Sprintf("reading revisions %d-%d: at %d, %d%% (a watch from the first revision)…", from, to, max(at, from), done*100/(to-from+1))
}

// windowLines say which revisions the window covers and when, as
// estimates, and how its start was found.
func (m *Model) windowLines() (string, string) {
	s, w := m.common.Styles, m.win
	below := "every key"
	if m.asked.Prefix != "" {
		below = m.asked.Prefix
	}
	top := common.Render(s.Title, w.Span()) + common.Text(fmt.Sprintf(" of %s (head %d) · %s · %s → %s", below, w.Head, common.Count(w.Events, "change"), w.Times.At(w.From), w.Times.At(w.To))) +
		common.Render(s.Faint, " (estimated from the times objects record)")
	var notes []string
	if w.CompactedAt != 0 {
		notes = append(notes, fmt.Sprintf("history before revision %d was compacted: the window starts there", w.CompactedAt))
	}
	if w.Since != "" {
		notes = append(notes, w.Since)
	}
	notes = append(notes, w.Notes...)
	return top, common.Render(s.Faint, strings.Join(notes, " · "))
}

// Package cluster is the cluster pane: the etcd members as a table,
// refreshed every second, with stop and restart in bundled mode.
package cluster

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/dustin/go-humanize"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/ui/common"
)

// DefaultRefresh is how often the pane asks for the members' status.
const DefaultRefresh = time.Second

// StatusMsg carries one reading of the cluster's status.
type StatusMsg struct {
	Cluster etcdview.Cluster
	Err     error
	At      time.Time
}

// tickMsg asks for the next reading.
type tickMsg struct{}

// Model is the cluster pane.
type Model struct {
	common common.Common
	keys   KeyMap

	every time.Duration
	// export are the assignments of the export line; exportRows that line
	// as drawn at the pane's width.
	export     []string
	exportRows []string
	status     StatusMsg
	seen       bool
	cursor     common.Cursor

	check checkRun // check members (check.go)

	width, height int
	focused       bool
}

// New is a cluster pane refreshed every interval (0: DefaultRefresh),
// with an export line of the assignments export (none when nil); Init
// starts the refreshes.
func New(c common.Common, every time.Duration, export []string) *Model {
	if every == 0 {
		every = DefaultRefresh
	}
	return &Model{common: c, keys: DefaultKeyMap(), every: every, export: export}
}

// Init reads the status for the first time.
func (m *Model) Init() tea.Cmd { return m.refresh }

func (m *Model) refresh() tea.Msg {
	ctx, cancel := m.common.Context()
	defer cancel()
	cl, err := m.common.Src.Status(ctx)
	return StatusMsg{Cluster: cl, Err: err, At: time.Now()}
}

// Status is the last reading, and whether there was one.
func (m *Model) Status() (StatusMsg, bool) { return m.status, m.seen }

// Focus gives or takes the keyboard focus; a check that runs stops when
// the screen is left.
func (m *Model) Focus(on bool) {
	m.focused = on
	if !on {
		m.stopCheck()
	}
}

// SetSize sets the pane's size.
func (m *Model) SetSize(w, h int) {
	m.width, m.height = w, h
	m.exportRows = nil
	if len(m.export) > 0 {
		m.exportRows = append([]string{""}, exportRows(m.export, w)...)
	}
	m.cursor.Height = max(h-2-len(m.exportRows), 1)
	m.cursor.Clamp(len(m.status.Cluster.Members))
	// The check view's title and status rows.
	m.check.cursor.Height = max(h-2, 1)
	m.check.cursor.Clamp(len(m.check.lines))
}

// ShortHelp lists the pane's main keys.
func (m *Model) ShortHelp() []key.Binding {
	if m.check.shown {
		return m.keys.checkHelp()
	}
	return m.keys.ShortHelp()
}

// FullHelp lists all the pane's keys.
func (m *Model) FullHelp() [][]key.Binding { return m.keys.FullHelp() }

// Update handles the pane's keys and the refreshes.
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case StatusMsg:
		m.status, m.seen = msg, true
		m.cursor.Clamp(len(msg.Cluster.Members))
		return m.common.After(m.every, func(time.Time) tea.Msg { return tickMsg{} })
	case tickMsg:
		return m.refresh
	case CheckProgressMsg:
		return m.onCheckProgress(msg)
	case CheckedMsg:
		return m.onChecked(msg)
	case tea.KeyMsg:
		if m.check.shown {
			return m.onCheckKey(msg)
		}
		if key.Matches(msg, m.keys.Check) {
			return m.startCheck()
		}
		members := m.status.Cluster.Members
		if m.cursor.Move(m.keys.NavKeyMap, msg, len(members)) || len(members) == 0 {
			return nil
		}
		sel := members[m.cursor.Pos]
		switch {
		case key.Matches(msg, m.keys.Stop):
			return common.Send(common.StopMemberMsg{Index: m.cursor.Pos, Name: sel.Name})
		case key.Matches(msg, m.keys.Restart):
			return common.Send(common.RestartMemberMsg{Index: m.cursor.Pos, Name: sel.Name})
		}
	case tea.MouseMsg:
		if m.check.shown {
			m.check.cursor.Move(m.keys.NavKeyMap, msg, len(m.check.lines))
			return nil
		}
		m.cursor.Move(m.keys.NavKeyMap, msg, len(m.status.Cluster.Members))
	}
	return nil
}

// Leader is the name of the leader, "" when no member says it leads.
func Leader(cl etcdview.Cluster) string {
	for _, mb := range cl.Members {
		if mb.Leader && mb.Err == nil {
			return memberName(mb)
		}
	}
	return ""
}

// Up counts the members that answered.
func Up(cl etcdview.Cluster) int {
	n := 0
	for _, mb := range cl.Members {
		if mb.Err == nil {
			n++
		}
	}
	return n
}

func memberName(mb etcdview.Member) string {
	if mb.Name != "" {
		return mb.Name
	}
	return mb.Endpoint
}

const rowFormat = "%-12s %-8s %-11s %6s %9s %9s %9s %9s  %s"

// View draws the members table.
func (m *Model) View() string {
	s := m.common.Styles
	if !m.seen {
		return common.FillHeight([]string{s.Faint.Render("asking the members for their status…")}, m.height)
	}
	cl := m.status.Cluster
	desc := cl.Description
	if cl.Kine {
		// kine has no member table worth the name: what it is and what it
		// emulates is the news.
		desc = cl.Server()
	}
	title := s.Title.Render("cluster") + common.Render(s.Faint, fmt.Sprintf("  %s  revision %d  compacted at %d  %d/%d members up",
		desc, cl.Revision, cl.CompactRevision, Up(cl), len(cl.Members)))
	if m.status.Err != nil {
		title += "  " + common.Render(s.FlashErr, m.status.Err.Error())
	}
	if m.check.shown {
		return m.checkView(title)
	}
	head := s.Bold.Render("  " + fmt.Sprintf(rowFormat, "NAME", "ROLE", "STATE", "TERM", "INDEX", "APPLIED", "REVISION", "DB SIZE", "ENDPOINT"))
	lines := make([]common.Line, 0, len(cl.Members))
	for _, mb := range cl.Members {
		lines = append(lines, m.row(mb, cl.Kine))
	}
	out := common.Fit(title, m.width) + "\n" + common.Fit(head, m.width) + "\n" + common.RenderWindow(lines, m.cursor, m.width, s.Selection(m.focused), true)
	if len(m.exportRows) > 0 {
		out += "\n" + strings.Join(m.exportRows, "\n")
	}
	return out
}

// row is one member; kine's, which has no Raft, shows no term or index.
func (m *Model) row(mb etcdview.Member, kine bool) common.Line {
	s := m.common.Styles
	role := "follower"
	switch {
	case kine:
		role = "kine"
	case mb.Leader:
		role = "leader ★"
	case mb.Learner:
		role = "learner"
	}
	// A name and the alarms are made Text before they are padded, so that
	// an escaped one pads to its width on screen; the row is made Text whole.
	name := common.Text(memberName(mb))
	if mb.Err != nil {
		return common.StyledLine(s.Down, fmt.Sprintf(rowFormat, name, "-", "unreachable", "-", "-", "-", "-", "-", mb.Endpoint)+"  "+firstLine(mb.Err.Error()))
	}
	state := "running"
	if len(mb.Alarms) > 0 {
		state = common.Text(strings.Join(mb.Alarms, ","))
	}
	term, index, applied := fmt.Sprint(mb.RaftTerm), fmt.Sprint(mb.RaftIndex), fmt.Sprint(mb.Applied)
	if kine {
		term, index, applied = "-", "-", "-"
	}
	plain := fmt.Sprintf(rowFormat, name, role, state, term, index, applied, fmt.Sprint(mb.Revision), humanize.IBytes(uint64(mb.DBSize)), mb.Endpoint)
	if mb.Leader && !kine {
		return common.StyledLine(s.Leader, plain)
	}
	return common.NewLine(plain)
}

func firstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}

// exportRows lays the export line of vars out in width cells for a mouse
// to copy: unstyled and never cut short, broken between assignments with a
// shell's line continuation, so that the rows pasted together still run
// as one command.
func exportRows(vars []string, width int) []string {
	line := "export " + common.Text(strings.Join(vars, " "))
	if ansi.StringWidth(line) <= width {
		return []string{line}
	}
	cur := "export"
	var rows []string
	for i, v := range vars {
		v = common.Text(v)
		if i > 0 && ansi.StringWidth(cur)+1+ansi.StringWidth(v)+2 > width {
			rows = append(rows, cur+" \\")
			cur = "  " + v
			continue
		}
		cur += " " + v
	}
	return append(rows, cur)
}

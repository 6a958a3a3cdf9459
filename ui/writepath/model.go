// Package writepath is screen 5, the write path: the newest writes the API
// server reports, each as the pipeline it went through (authentication,
// authorization, mutating admission, validation, encoding, the etcd
// transaction that the leader commits through Raft at a revision), beside
// every member's applied index catching up, and the watchers that reacted.
package writepath

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/etcdscope/etcdscope/ui/common"
)

// Write is one write request as the API server traced it.
type Write struct {
	Start                      time.Time
	Verb, Resource             string // "update", "pods/status"
	Namespace, Name, User, Key string
	Stages                     []Stage
	Revision                   int64 // the etcd revision it committed at; 0 if it failed
	Code                       int   // the HTTP status
}

// Stage is one step of a write and how long it took.
type Stage struct {
	Name     string
	Duration time.Duration
}

// Reaction is a watcher that received the write at Revision.
type Reaction struct {
	Revision                           int64
	Component, Event, Resource, Detail string
}

// Member is one etcd member's progress.
type Member struct {
	Name    string
	Leader  bool
	Running bool
	Applied uint64
}

// Feed is what the pane reads. Writes and Reactions close when their
// source stops; Members is called on every refresh and must be cheap.
type Feed struct {
	Writes    <-chan Write
	Reactions <-chan Reaction
	Members   func() []Member
	// Note is shown when there is no feed (no API server), or beside it
	// (where the kubeconfig is).
	Note string
}

// Off reports whether there is anything to show.
func (f Feed) Off() bool { return f.Writes == nil }

// Sizes of the pane's memory.
const (
	keepWrites    = 500
	keepReactions = 4000
	refresh       = 200 * time.Millisecond
)

// WritesMsg carries the writes that arrived since the last one.
type WritesMsg struct{ Writes []Write }

// ReactionsMsg carries the reactions that arrived since the last one.
type ReactionsMsg struct{ Reactions []Reaction }

// MembersMsg carries a reading of the members.
type MembersMsg struct{ Members []Member }

// Model is the write-path pane.
type Model struct {
	common common.Common
	keys   KeyMap
	feed   Feed

	writes    []Write // newest first
	reactions map[int64][]Reaction
	revs      []int64 // the revisions in reactions, oldest first
	members   []Member
	total     uint64
	paused    bool
	cursor    common.Cursor

	width, height int
	focused       bool
}

// New is a write-path pane on feed.
func New(c common.Common, feed Feed) *Model {
	return &Model{common: c, keys: DefaultKeyMap(), feed: feed, reactions: map[int64][]Reaction{}}
}

// Init starts reading the feed.
func (m *Model) Init() tea.Cmd {
	if m.feed.Off() {
		return nil
	}
	return tea.Batch(m.nextWrites, m.nextReactions, m.readMembers)
}

func (m *Model) nextWrites() tea.Msg {
	return drained(m.feed.Writes, keepWrites, func(ws []Write) tea.Msg { return WritesMsg{ws} })
}

func (m *Model) nextReactions() tea.Msg {
	return drained(m.feed.Reactions, keepReactions, func(rs []Reaction) tea.Msg { return ReactionsMsg{rs} })
}

// drained is the burst waiting on ch, up to limit, as msg makes it; nil once
// ch is closed, or when there is no ch (a nil channel would block forever).
func drained[T any](ch <-chan T, limit int, msg func([]T) tea.Msg) tea.Msg {
	if ch == nil {
		return nil
	}
	vs, _ := common.Drain(ch, limit)
	if len(vs) == 0 {
		return nil
	}
	return msg(vs)
}

func (m *Model) readMembers() tea.Msg {
	if m.feed.Members == nil {
		return nil
	}
	return MembersMsg{m.feed.Members()}
}

// Focus gives or takes the keyboard focus.
func (m *Model) Focus(on bool) { m.focused = on }

// SetSize sets the pane's size.
func (m *Model) SetSize(w, h int) {
	m.width, m.height = w, h
	m.cursor.Height = m.listHeight()
	m.cursor.Clamp(len(m.writes))
}

// detailRows is the height of the selected write's detail below the list.
const detailRows = 9

// listHeight is the rows of the list: the pane less the members line, the
// column header and the detail.
func (m *Model) listHeight() int { return max(m.height-2-detailRows, 1) }

// ShortHelp lists the pane's main keys.
func (m *Model) ShortHelp() []key.Binding { return m.keys.ShortHelp() }

// FullHelp lists all the pane's keys.
func (m *Model) FullHelp() [][]key.Binding { return m.keys.FullHelp() }

// Update handles the feed and the pane's keys.
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case WritesMsg:
		m.addWrites(msg.Writes)
		return m.nextWrites
	case ReactionsMsg:
		m.addReactions(msg.Reactions)
		return m.nextReactions
	case MembersMsg:
		m.members = msg.Members
		return m.common.After(refresh, func(time.Time) tea.Msg { return m.readMembers() })
	case tea.KeyMsg, tea.MouseMsg:
		if !m.focused {
			return nil
		}
		if k, ok := msg.(tea.KeyMsg); ok {
			switch {
			case key.Matches(k, m.keys.Pause):
				m.paused = !m.paused
				return nil
			case key.Matches(k, m.keys.Open):
				if w, ok := m.selected(); ok && w.Key != "" {
					return common.Send(common.OpenObjectMsg{Key: w.Key, Rev: w.Revision, Focus: true})
				}
				return nil
			}
		}
		m.cursor.Move(m.keys.NavKeyMap, msg, len(m.writes))
	}
	return nil
}

func (m *Model) addWrites(ws []Write) {
	m.total += uint64(len(ws))
	if m.paused {
		return
	}
	added := make([]Write, 0, len(ws)+len(m.writes))
	for i := len(ws) - 1; i >= 0; i-- {
		added = append(added, ws[i])
	}
	m.writes = append(added, m.writes...)
	if len(m.writes) > keepWrites {
		m.writes = m.writes[:keepWrites]
	}
	// The cursor stays on the write it was on, unless at the top.
	if m.cursor.Pos > 0 {
		m.cursor.Pos += len(ws)
		m.cursor.Offset += len(ws)
	}
	m.cursor.Clamp(len(m.writes))
}

func (m *Model) addReactions(rs []Reaction) {
	for _, r := range rs {
		if _, ok := m.reactions[r.Revision]; !ok {
			m.revs = append(m.revs, r.Revision)
		}
		// Kept in the order the detail lists them, so View only reads.
		held := m.reactions[r.Revision]
		at := sort.Search(len(held), func(i int) bool { return held[i].Component > r.Component })
		m.reactions[r.Revision] = slices.Insert(held, at, r)
	}
	for len(m.revs) > keepReactions {
		delete(m.reactions, m.revs[0])
		m.revs = m.revs[1:]
	}
}

func (m *Model) selected() (Write, bool) {
	if m.cursor.Pos < 0 || m.cursor.Pos >= len(m.writes) {
		return Write{}, false
	}
	return m.writes[m.cursor.Pos], true
}

// Total is how many writes the pane has received, those it shows and
// those it did not keep or was paused for.
func (m *Model) Total() uint64 { return m.total }

// View draws the members, the list of writes and the selected write.
func (m *Model) View() string {
	s := m.common.Styles
	if m.feed.Off() {
		note := m.feed.Note
		if note == "" {
			note = "no API server: the write path shows in bundled mode, where etcdscope runs one"
		}
		return common.Render(s.Faint, note)
	}
	rows := []string{common.Fit(m.membersLine(), m.width), s.Bold.Render(common.Fit("  "+m.row("REV", "VERB", "RESOURCE", "OBJECT", "BY", "µs: authn  authz mutate valid. encode   etcd"), m.width))}
	list := common.RenderRows(len(m.writes), m.cursor, func(i int) common.Line {
		w := m.writes[i]
		rev := fmt.Sprint(w.Revision)
		if w.Revision == 0 {
			rev = "-" // refused: nothing was committed
		}
		plain := m.row(rev, w.Verb, w.Resource, objectName(w), w.User, stageColumns(w))
		if w.Code >= 400 {
			return common.StyledLine(s.Deleted, plain)
		}
		return common.NewLine(plain)
	}, m.width, s.Selection(m.focused), true)
	rows = append(rows, list)
	if len(m.writes) == 0 {
		rows[2] = common.FillHeight([]string{s.Faint.Render("  waiting for a write…")}, m.cursor.Height)
	}
	detail := m.detail()
	rows = append(rows, detail[:min(len(detail), detailRows)]...)
	return strings.Join(rows, "\n")
}

func (m *Model) row(rev, verb, resource, object, user, stages string) string {
	return fmt.Sprintf("%-8s %s %s %s %s %s", rev, common.Cell(verb, 10), common.Cell(resource, 26), common.Cell(object, 33), common.Cell(user, 28), stages)
}

func objectName(w Write) string {
	if w.Namespace != "" {
		return w.Namespace + "/" + w.Name
	}
	return w.Name
}

func stageColumns(w Write) string {
	parts := []string{"   "}
	for _, st := range w.Stages {
		parts = append(parts, fmt.Sprintf("%6d", st.Duration.Microseconds()))
	}
	return strings.Join(parts, " ")
}

// membersLine is each member's applied index against the leader's: the
// followers catch up as Raft replicates.
func (m *Model) membersLine() string {
	s := m.common.Styles
	var lead uint64
	for _, mb := range m.members {
		lead = max(lead, mb.Applied)
	}
	parts := []string{s.Title.Render("write path") + fmt.Sprintf(" · %d writes", m.total)}
	if m.paused {
		parts = append(parts, s.Note.Render("paused"))
	}
	for _, mb := range m.members {
		name := common.Text(mb.Name)
		p := fmt.Sprintf("%s applied %d", name, mb.Applied)
		switch {
		case !mb.Running:
			p = s.Down.Render(name + " down")
		case mb.Leader:
			p = s.Leader.Render(p + " ★")
		case mb.Applied < lead:
			p += s.Modified.Render(fmt.Sprintf(" (−%d)", lead-mb.Applied))
		}
		parts = append(parts, p)
	}
	if m.feed.Note != "" {
		parts = append(parts, common.Render(s.Faint, m.feed.Note))
	}
	return strings.Join(parts, " · ")
}

// detail is the selected write's way from the client to the watchers: the
// API server's stages, the etcd transaction on the leader, the revision it
// committed at, and the watchers that received that revision.
func (m *Model) detail() []string {
	s := m.common.Styles
	sep := s.Separator.Render(strings.Repeat("─", max(m.width, 1)))
	w, ok := m.selected()
	if !ok {
		return []string{sep}
	}
	leader := "the leader"
	for _, mb := range m.members {
		if mb.Leader {
			leader = mb.Name
		}
	}
	var total time.Duration
	steps := []string{common.Render(s.Bold, w.User)}
	for _, st := range w.Stages {
		total += st.Duration
		name := st.Name
		if st.Name == "etcd txn" {
			name = "etcd txn on " + leader + " (Raft to a majority)"
		}
		steps = append(steps, fmt.Sprintf("%s %s", common.Render(s.Key, name), fmtDuration(st.Duration)))
	}
	outcome := s.Added.Render(fmt.Sprintf("committed at revision %d", w.Revision))
	if w.Revision == 0 {
		outcome = s.Deleted.Render(fmt.Sprintf("not committed (HTTP %d)", w.Code))
	}
	steps = append(steps, outcome)
	out := []string{sep,
		common.Fit(fmt.Sprintf("%s %s  %s  in %s", common.Render(s.Bold, w.Verb), common.Text(w.Resource+" "+objectName(w)), common.Render(s.Faint, w.Key), fmtDuration(total)), m.width),
	}
	out = append(out, wrap(steps, " → ", m.width)...)
	rs := m.reactions[w.Revision]
	if len(rs) == 0 {
		return append(out, s.Faint.Render("no watcher reacted yet"))
	}
	out = append(out, "watchers that received revision "+fmt.Sprint(w.Revision)+":")
	var names []string
	seen := map[string]bool{}
	for _, r := range rs {
		label := r.Component
		if r.Detail != "" {
			label += " (" + r.Detail + ")"
		}
		if !seen[label] {
			seen[label] = true
			names = append(names, common.Text(label))
		}
	}
	return append(out, wrap(names, " · ", m.width)...)
}

// wrap joins parts with sep into lines of at most width cells.
func wrap(parts []string, sep string, width int) []string {
	var lines []string
	line := " "
	for i, p := range parts {
		piece := p
		if i > 0 {
			piece = sep + p
		}
		if len(line) > 1 && ansi.StringWidth(line+piece) > width {
			lines = append(lines, line)
			line = "  " + strings.TrimPrefix(piece, " ")
			continue
		}
		line += piece
	}
	return append(lines, common.Fit(line, width))
}

func fmtDuration(d time.Duration) string {
	if d < time.Millisecond {
		return fmt.Sprintf("%dµs", d.Microseconds())
	}
	return fmt.Sprintf("%.1fms", float64(d.Microseconds())/1000)
}

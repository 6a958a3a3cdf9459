// Package writepath is screen 5, the write path: the newest writes as
// kube-apiserver's own hooks saw them (its audit events, an admission
// decorator, the object it answered with). The list gives each write's
// result: the HTTP status and its duration, or the stage that refused it.
// The selected write reads stage by stage as the server ran it: who sent
// it and how they proved it, the authorizer's decision and reason, every
// admission plugin that ran (which changed the object, which refused it),
// the webhooks' annotations, the encoding and the etcd transaction that the
// leader commits through Raft at a revision, and the watchers that received
// that revision; beside it, every member's applied index catching up.
package writepath

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/etcdscope/etcdscope/ui/common"
)

// Write is one write request as kube-apiserver's own hooks saw it.
type Write struct {
	Received        time.Time
	Duration        time.Duration // request received to response complete
	Verb            string        // create, update, patch, delete, deletecollection
	Resource        string        // plural, with "/subresource": "pods/status"
	Namespace, Name string        // Name is "" when a refused create never had its body read
	User            string
	Groups          []string
	Authentication  string      // "x509 client certificate", "service account token", or ""
	Decision        string      // the authorizer's: "allow" or "forbid"
	Reason          string      // e.g. `RBAC: allowed by ClusterRoleBinding "x" of ClusterRole "y" to ServiceAccount "z/ns"`; "" for system:masters
	Admission       []Admission // in the order they ran, mutating then validating
	Webhooks        []string    // what admission webhooks and policies recorded, a line each
	Key             string      // the etcd key, "" when not known
	Encoding        string      // "protobuf" or "json"
	Revision        int64       // etcd revision committed; 0 if it was not
	Code            int         // HTTP status
	// RefusedAt and Why name the stage that refused the write ("authorization",
	// "validating admission (ValidatingAdmissionWebhook)", "validation", ...) and
	// its reason; both "" when it succeeded.
	RefusedAt, Why string
}

// Admission is one admission plugin's part in a write.
type Admission struct {
	Plugin   string
	Phase    string // "mutating" or "validating"
	Duration time.Duration
	Mutated  bool
	Refusal  string // "" when it let the write through
}

// refused says the write did not go through: a stage refused it, or the
// client got an error status without one being named.
func (w Write) refused() bool { return w.RefusedAt != "" || w.Code >= 400 }

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
	// reached is the newest revision any watcher received, past which a
	// write no watcher reacted to is not merely waiting for one.
	reached int64
	members []Member
	total   uint64
	paused  bool
	cursor  common.Cursor

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
const detailRows = 10

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
		m.reached = max(m.reached, r.Revision)
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
	cols := m.columns()
	rows := []string{common.Fit(m.membersLine(), m.width), s.Bold.Render(common.Fit("  "+cols.row("REV", "VERB", "RESOURCE", "OBJECT", "BY", "RESULT"), m.width))}
	list := common.RenderRows(len(m.writes), m.cursor, func(i int) common.Line {
		w := m.writes[i]
		rev := fmt.Sprint(w.Revision)
		if w.Revision == 0 {
			rev = "-" // nothing was committed, or the answer did not say
		}
		plain := cols.row(rev, w.Verb, w.Resource, objectName(w), w.User, result(w))
		if w.refused() {
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

// The widths of RESOURCE, OBJECT and BY: wide where the pane has room for
// them beside a RESULT of minResult cells, else narrow, which fits 100
// cells with room for "403 authorization" and "default/(name not read)".
var (
	wideColumns   = columns{resource: 26, object: 33, by: 28}
	narrowColumns = columns{resource: 15, object: 24, by: 17}
)

const (
	revWidth, verbWidth = 8, 10
	minResult           = 24
	// fixedCells are the cursor's gutter, REV, VERB and the five spaces
	// between the columns.
	fixedCells = 2 + revWidth + verbWidth + 5
)

// columns are the list's column widths.
type columns struct{ resource, object, by, result int }

// columns are the widths for the pane's width; RESULT takes what is left.
func (m *Model) columns() columns {
	c := wideColumns
	if m.width-fixedCells-c.resource-c.object-c.by < minResult {
		c = narrowColumns
	}
	c.result = max(m.width-fixedCells-c.resource-c.object-c.by, 0)
	return c
}

func (c columns) row(rev, verb, resource, object, user, result string) string {
	return fmt.Sprintf("%-*s %s %s %s %s %s", revWidth, rev, common.Cell(verb, verbWidth), common.Cell(resource, c.resource),
		common.Cell(object, c.object), common.Cell(user, c.by), common.Cell(result, c.result))
}

// result is the HTTP status and how long the request took, or for a
// refusal the stage that refused it.
func result(w Write) string {
	switch {
	case w.refused() && w.RefusedAt != "":
		return fmt.Sprintf("%d %s", w.Code, w.RefusedAt)
	case w.refused():
		return fmt.Sprint(w.Code)
	}
	return fmt.Sprintf("%d %s", w.Code, fmtDuration(w.Duration))
}

// objectName is namespace/name; a refused create may never have had its
// body read, and a deletecollection names no object.
func objectName(w Write) string {
	name := w.Name
	switch {
	case name == "" && w.Verb == "deletecollection":
		name = "*"
	case name == "":
		name = "(name not read)"
	}
	if w.Namespace != "" {
		return w.Namespace + "/" + name
	}
	return name
}

// membersLine is each member's applied index against the leader's: the
// followers catch up as Raft replicates.
func (m *Model) membersLine() string {
	s := m.common.Styles
	var lead uint64
	for _, mb := range m.members {
		lead = max(lead, mb.Applied)
	}
	parts := []string{s.Title.Render("write path") + " · " + common.Count(m.total, "write")}
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

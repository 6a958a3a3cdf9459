// Package history is the history pane: every revision etcd retains of one
// key, and for the one selected the diff from the revision before and the
// object as it was.
package history

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/ui/common"
)

// LoadedMsg carries a key's history with the changes of each revision.
type LoadedMsg struct {
	gen      int
	h        etcdview.History
	summary  []string // per entry: changed paths from the entry before it
	selected int64
	err      error
	earlier  bool // the replay for the earlier incarnations read it
}

// DetailMsg carries the diff and object of one entry, laid out.
type DetailMsg struct {
	gen, index int
	lines      []common.Line
}

// Model is the history pane.
type Model struct {
	common common.Common
	keys   KeyMap

	key     string
	gen     int
	loading bool
	err     error
	h       etcdview.History
	summary []string
	cursor  common.Cursor

	details      map[int][]common.Line
	detailCursor common.Cursor
	detailFocus  bool

	// The replay for the earlier incarnations, while it runs (earlier.go).
	stopReplay context.CancelFunc
	progress   *ProgressMsg
	progressCh chan ProgressMsg

	width, height int
	focused       bool
}

// New is an empty history pane.
func New(c common.Common) *Model {
	return &Model{common: c, keys: DefaultKeyMap()}
}

// Open reads the history of key, putting the cursor on revision rev (0:
// newest). It reads the current incarnation; the earlier ones are read
// when asked (the Earlier key), or at once when the key has no current
// incarnation or rev is older than it.
func (m *Model) Open(key string, rev int64) tea.Cmd {
	m.stopEarlier()
	m.key, m.loading, m.err = key, true, nil
	m.gen++
	gen, c := m.gen, m.common
	return func() tea.Msg {
		ctx, cancel := c.Context()
		defer cancel()
		h, err := c.Src.History(ctx, key, etcdview.HistoryOptions{})
		return loaded(gen, c, key, h, err, rev, false)
	}
}

// loaded is the message of a read of key's history, for the pane of
// generation gen.
func loaded(gen int, c common.Common, key string, h etcdview.History, err error, selected int64, earlier bool) LoadedMsg {
	msg := LoadedMsg{gen: gen, earlier: earlier, selected: selected}
	switch {
	case err != nil:
		msg.err = fmt.Errorf("history of %s: %w", key, err)
	case len(h.Entries) == 0 && h.Complete():
		// Nothing was left unread: the message has no read to suggest.
		msg.err = h.NoRevision("")
	default:
		msg.h, msg.summary = h, summaries(c.Decoder, h)
	}
	return msg
}

// summaries says what each entry changed from the one before it.
func summaries(d decode.Decoder, h etcdview.History) []string {
	sum := make([]string, len(h.Entries))
	h.EachRevision(d, func(i int, e etcdview.Entry, before *decode.Object, after decode.Object) error {
		sum[i] = etcdview.Summary(e.Type(), before, after)
		return nil
	})
	return sum
}

// Key is the key shown.
func (m *Model) Key() string { return m.key }

// Focus gives or takes the keyboard focus.
func (m *Model) Focus(on bool) { m.focused = on }

// SetSize sets the pane's size.
func (m *Model) SetSize(w, h int) {
	m.width, m.height = w, h
	m.cursor.Height = max(h-2, 1)
	m.cursor.Clamp(m.rows())
	m.detailCursor.Height = max(h-1, 1)
}

func (m *Model) listWidth() int { return max(30, m.width*2/5) }

// rows counts the entries and, when compaction cut the history, the row
// that says so.
func (m *Model) rows() int {
	n := len(m.h.Entries)
	if m.h.CompactedAt > 0 {
		n++
	}
	return n
}

// ShortHelp lists the pane's main keys.
func (m *Model) ShortHelp() []key.Binding { return m.keys.ShortHelp() }

// FullHelp lists all the pane's keys.
func (m *Model) FullHelp() [][]key.Binding { return m.keys.FullHelp() }

// Update handles the pane's keys and its reads.
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case LoadedMsg:
		return m.onLoaded(msg)
	case ProgressMsg:
		return m.onProgress(msg)
	case DetailMsg:
		if msg.gen == m.gen {
			m.details[msg.index] = msg.lines
			m.detailCursor.Clamp(len(msg.lines))
		}
	case tea.KeyMsg:
		return m.onKey(msg)
	case tea.MouseMsg:
		if m.cursor.Move(m.keys.NavKeyMap, msg, m.rows()) {
			return m.selectEntry()
		}
	}
	return nil
}

func (m *Model) onLoaded(msg LoadedMsg) tea.Cmd {
	if msg.gen != m.gen {
		return nil
	}
	m.loading = false
	if msg.earlier {
		m.stopEarlier()
		// A replay that failed leaves the current incarnation on screen.
		if msg.err != nil && !errors.Is(msg.err, etcdview.ErrNoRevision) && m.h.Key == m.key {
			return earlierFailed(msg.err)
		}
	}
	if msg.err != nil {
		m.err = msg.err
		return common.FlashErr(msg.err)
	}
	m.h, m.summary, m.details = msg.h, msg.summary, map[int][]common.Line{}
	m.cursor.Pos, m.cursor.Offset = 0, 0
	for i, e := range m.h.Entries {
		if msg.selected > 0 && e.KV.ModRevision <= msg.selected {
			m.cursor.Pos = i
			break
		}
	}
	m.cursor.Clamp(m.rows())
	if !m.h.Complete() && (len(m.h.Entries) == 0 || msg.selected > 0 && msg.selected < m.h.Entries[len(m.h.Entries)-1].KV.ModRevision) {
		// What was asked for is in no revision of the current
		// incarnation: that is a demand for the earlier ones.
		return tea.Batch(m.selectEntry(), m.loadEarlier(msg.selected))
	}
	return m.selectEntry()
}

func (m *Model) onKey(msg tea.KeyMsg) tea.Cmd {
	if m.detailFocus {
		if key.Matches(msg, m.keys.Back) {
			m.detailFocus = false
			return nil
		}
		m.detailCursor.Move(m.keys.NavKeyMap, msg, len(m.details[m.cursor.Pos]))
		return nil
	}
	if m.cursor.Move(m.keys.NavKeyMap, msg, m.rows()) {
		return m.selectEntry()
	}
	switch {
	case key.Matches(msg, m.keys.Detail):
		m.detailFocus = m.cursor.Pos < len(m.h.Entries)
	case key.Matches(msg, m.keys.Back) && m.progress != nil:
		m.stopReplay()
	case key.Matches(msg, m.keys.Earlier):
		if m.h.Key == m.key && m.key != "" && !m.loading && !m.h.Complete() && m.progress == nil {
			return m.loadEarlier(m.selectedRev())
		}
	case key.Matches(msg, m.keys.Restore):
		if rev := m.selectedRev(); rev > 0 {
			return common.Send(common.RestoreMsg{Key: m.key, Rev: rev})
		}
	case key.Matches(msg, m.keys.Reload):
		if m.key != "" {
			return m.Open(m.key, m.selectedRev())
		}
	}
	return nil
}

func (m *Model) selectedRev() int64 {
	if m.cursor.Pos < len(m.h.Entries) {
		return m.h.Entries[m.cursor.Pos].KV.ModRevision
	}
	return 0
}

// selectEntry lays out the selected entry's diff and object in a command,
// once per entry.
func (m *Model) selectEntry() tea.Cmd {
	m.detailCursor.Pos, m.detailCursor.Offset = 0, 0
	i := m.cursor.Pos
	if i >= len(m.h.Entries) {
		return nil
	}
	if _, ok := m.details[i]; ok {
		return nil
	}
	gen, s, d, entries := m.gen, m.common.Styles, m.common.Decoder, m.h.Entries
	return func() tea.Msg { return DetailMsg{gen: gen, index: i, lines: detailLines(s, d, entries, i)} }
}

// detailLines lays out entry i: what it changed from the entry before, and
// the object it wrote. Only these two entries are decoded.
func detailLines(s *common.Styles, d decode.Decoder, entries []etcdview.Entry, i int) []common.Line {
	e := entries[i]
	after := e.Object(d)
	heading := func(t string) common.Line { return common.StyledLine(s.Title, t) }
	var out []common.Line
	var before *etcdview.Entry
	if i+1 < len(entries) {
		before = &entries[i+1]
	}
	switch {
	case e.Deleted && before != nil:
		out = append(out, heading(fmt.Sprintf("deleted at revision %d; the value before:", e.KV.ModRevision)))
		return append(out, s.YAMLLines(before.Object(d).Text())...)
	case e.Deleted:
		return append(out, heading(fmt.Sprintf("deleted at revision %d", e.KV.ModRevision)))
	case e.Type() == etcdview.Added:
		out = append(out, heading(fmt.Sprintf("created at revision %d", e.KV.ModRevision)))
	case before == nil || before.Deleted:
		out = append(out, heading(fmt.Sprintf("revision %d, the oldest etcd still holds: the ones before were compacted", e.KV.ModRevision)))
	default:
		out = append(out, heading(fmt.Sprintf("diff revision %d → %d", before.KV.ModRevision, e.KV.ModRevision)))
		if diff := decode.Diff(before.Object(d), after); diff.Unified != "" {
			out = append(out, s.DiffLines(diff.Unified)...)
		} else {
			out = append(out, common.PlainLines("(no change in the decoded object)")...)
		}
	}
	out = append(out, common.Line{}, heading(fmt.Sprintf("object at revision %d", e.KV.ModRevision)))
	return append(out, s.YAMLLines(after.Text())...)
}

// View draws the revisions beside the selected one's diff and object.
func (m *Model) View() string {
	s := m.common.Styles
	switch {
	case m.key == "":
		return common.FillHeight([]string{s.Faint.Render("no history yet: press h on a key in browse or on a tail row")}, m.height)
	case m.err != nil:
		return common.FillHeight([]string{common.Fit(common.Render(s.Title, m.key), m.width), common.Fit(common.Render(s.FlashErr, m.err.Error()), m.width)}, m.height)
	case m.loading && m.h.Key != m.key:
		return common.FillHeight([]string{common.Fit(common.Render(s.Title, m.key), m.width), s.Faint.Render("reading history…")}, m.height)
	}
	lw := m.listWidth()
	title := common.Render(s.Title, "history "+decode.EscapeKey(m.key)) + s.Faint.Render("  "+m.titleStatus())
	left := common.Fit(s.Bold.Render("  "+fmt.Sprintf("%-9s %-4s %7s %s", "REV", "VER", "SIZE", "CHANGES")), lw) + "\n" + m.listView(lw)
	detail := m.details[m.cursor.Pos]
	right := common.RenderWindow(detail, m.detailCursor, m.width-lw-1, s.Selection(m.detailFocus && m.focused), m.detailFocus && m.focused)
	sep := strings.TrimSuffix(strings.Repeat(s.Separator.Render("│")+"\n", m.height-1), "\n")
	body := lipgloss.JoinHorizontal(lipgloss.Top, common.Box(left, lw, m.height-1), sep, right)
	return common.Fit(title, m.width) + "\n" + body
}

// titleStatus says what the list holds, what is left unread first: a
// narrow title cuts its end.
func (m *Model) titleStatus() string {
	held := fmt.Sprintf("%s retained, store at %d", common.Count(len(m.h.Entries), "revision"), m.h.Revision)
	switch {
	case len(m.h.Entries) == 0:
		held = fmt.Sprintf("does not exist at revision %d", m.h.Revision)
	case !m.h.Complete():
		held = fmt.Sprintf("%s of the current incarnation, store at %d", common.Count(len(m.h.Entries), "revision"), m.h.Revision)
	}
	if status := m.earlierStatus(); status != "" {
		return status + " · " + held
	}
	return held
}

func (m *Model) listView(width int) string {
	s := m.common.Styles
	row := func(i int) common.Line {
		if i == len(m.h.Entries) {
			return common.StyledLine(s.Note, "── "+m.h.Truncated()+" ──")
		}
		e := m.h.Entries[i]
		if e.Deleted {
			return common.StyledLine(s.Deleted, fmt.Sprintf("%-9d %-4s %7s %s", e.KV.ModRevision, "-", "-", "DELETED"))
		}
		return common.NewLine(fmt.Sprintf("%-9d %-4d %7d %s", e.KV.ModRevision, e.KV.Version, len(e.KV.Value), m.summary[i]))
	}
	return common.RenderRows(m.rows(), m.cursor, row, width, s.Selection(m.focused && !m.detailFocus), true)
}

// Package tail is the live watch stream of /registry: one row per event in
// a bounded ring, with follow, pause, filter, and a diff per row.
package tail

import (
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/decode/table"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/ui/common"
)

// Prefix is what the tail watches: everything kube-apiserver stores.
const Prefix = decode.DefaultPrefix + "/"

// maxBatchesPerMsg bounds how many waiting batches one message drains, so a
// burst is ingested in few updates and the screen is drawn once for them.
const maxBatchesPerMsg = 64

// BatchesMsg carries the batches read from the watch since the last one.
type BatchesMsg struct {
	Batches []etcdview.Batch
	Closed  bool // the watch ended after these
	// rule is the :where the events were judged by as they were read,
	// verdicts and errs theirs, batch by batch; nil without one.
	rule     *rule
	verdicts [][]verdict
	errs     [][]error
}

// watchStartedMsg carries the watch's channel.
type watchStartedMsg struct{ ch <-chan etcdview.Batch }

// detail is the diff of one row, shown over the list.
type detail struct {
	seq     uint64
	title   string
	lines   []common.Line
	err     error
	loading bool
	cursor  common.Cursor
}

// Model is the tail pane.
type Model struct {
	common common.Common
	keys   KeyMap

	ring   *Ring
	values valueCache
	watch  <-chan etcdview.Batch
	head   int64
	ended  bool
	// play replays a recording in place of the watch; nil on a live
	// source.
	play *player

	scope     string   // only keys below this prefix; "" for all
	exact     bool     // scope is one key, not a prefix
	tokens    []string // filter words, each a substring of key or type
	filter    string
	index     []uint64 // seqs of the rows shown when scope or filter is set
	cursor    common.Cursor
	follow    bool
	pausedAt  uint64 // the ring's total when following stopped
	filtering bool
	// unfiltered is the filter as it was when / was pressed: esc puts it
	// back.
	unfiltered string
	input      textinput.Model

	summarising bool
	detail      *detail

	where whereState
	// resolve finds the resources a :where serves objects of.
	resolve table.Resolver
	// current is where.rule, for the command that reads the watch.
	current atomic.Pointer[rule]

	width, height int
	focused       bool
}

// New is a tail keeping the last capacity events; resolve finds the
// resources whose objects a :where judges as served (nil is
// table.BuiltinResolver).
func New(c common.Common, capacity int, resolve table.Resolver) *Model {
	in := common.NewInput("filter: ")
	if resolve == nil {
		resolve = table.BuiltinResolver
	}
	return &Model{common: c, keys: DefaultKeyMap(), ring: NewRing(capacity), values: newValueCache(), follow: true, input: in, resolve: resolve}
}

// Start opens the watch; call it once.
func (m *Model) Start() tea.Cmd {
	c := m.common
	return func() tea.Msg {
		return watchStartedMsg{c.Src.Watch(c.Ctx, Prefix, etcdview.WatchOptions{})}
	}
}

// next reads the watch's next batches.
func (m *Model) next() tea.Cmd { return readBatches(m.common, m.watch, &m.current) }

// readBatches reads the next batches of ch, and judges their events by the
// :where in force, if any.
func readBatches(c common.Common, ch <-chan etcdview.Batch, current *atomic.Pointer[rule]) tea.Cmd {
	return func() tea.Msg {
		bs, closed := common.Drain(ch, maxBatchesPerMsg)
		msg := BatchesMsg{Batches: bs, Closed: closed}
		msg.rule, msg.verdicts, msg.errs = judgeEvents(c, current, bs)
		return msg
	}
}

// Ring is the buffer, for the header's counts.
func (m *Model) Ring() *Ring { return m.ring }

// Head is the revision the watch last reported.
func (m *Model) Head() int64 { return m.head }

// Focus gives or takes the keyboard focus.
func (m *Model) Focus(on bool) { m.focused = on }

// Capturing is true while the filter takes every key typed.
func (m *Model) Capturing() bool { return m.filtering }

// SetSize sets the pane's size.
func (m *Model) SetSize(w, h int) {
	m.width, m.height = w, h
	m.cursor.Height = m.listHeight()
	m.clamp()
	if m.detail != nil {
		m.detail.cursor.Height = max(h-1, 1)
		m.detail.cursor.Clamp(len(m.detail.lines))
	}
}

func (m *Model) listHeight() int {
	h := m.height - 2
	if m.filtering || m.narrowed() {
		h--
	}
	return max(h, 1)
}

// narrowed says whether a scope, a filter or a :where hides rows.
func (m *Model) narrowed() bool { return m.filter != "" || m.scope != "" || m.where.rule != nil }

// ShortHelp lists the pane's main keys, a replay's first on a recording.
func (m *Model) ShortHelp() []key.Binding {
	if m.play != nil {
		k := m.keys
		return []key.Binding{k.Play, k.Speed, k.Diff, k.History, k.Follow, k.Filter, k.Back}
	}
	return m.keys.ShortHelp()
}

// FullHelp lists all the pane's keys, a replay's on a recording.
func (m *Model) FullHelp() [][]key.Binding {
	if m.play != nil {
		return append(m.keys.FullHelp(), []key.Binding{m.keys.Play, m.keys.Speed})
	}
	return m.keys.FullHelp()
}

// n is the number of rows shown.
func (m *Model) n() int {
	if m.index != nil {
		return len(m.index)
	}
	return m.ring.Len()
}

func (m *Model) seqAt(i int) uint64 {
	if m.index != nil {
		return m.index[i]
	}
	return m.ring.First() + uint64(i)
}

func (m *Model) clamp() {
	if m.follow {
		m.cursor.Pos = m.n() - 1
	}
	m.cursor.Clamp(m.n())
}

// Update handles the pane's keys, the watch's batches and the summaries.
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case watchStartedMsg:
		if m.play != nil {
			return nil // a recording's rows come from the player
		}
		m.watch = msg.ch
		return m.next()
	case BatchesMsg:
		if m.play != nil {
			return nil
		}
		return m.ingest(msg)
	case playReadMsg:
		return m.onPlayRead(msg)
	case playDueMsg:
		return m.onPlayDue(msg.read)
	case verdictsMsg:
		return m.onVerdicts(msg)
	case SummariesMsg:
		m.summarising = false
		for seq, s := range msg.sums {
			if m.ring.Holds(seq) {
				r := m.ring.At(seq)
				r.Summary, r.summarised, r.pending = s, true, false
			}
		}
		return m.summariseVisible()
	case DiffMsg:
		if m.detail != nil && m.detail.seq == msg.seq {
			m.detail.loading, m.detail.title, m.detail.lines, m.detail.err = false, msg.title, msg.lines, msg.err
			m.detail.cursor.Clamp(len(msg.lines))
		}
	case common.TailPrefixMsg:
		m.scope, m.exact = msg.Prefix, msg.Exact
		m.reindex()
	case tea.KeyMsg:
		return m.onKey(msg)
	case tea.MouseMsg:
		if m.detail != nil {
			m.detail.cursor.Move(m.keys.NavKeyMap, msg, len(m.detail.lines))
			return nil
		}
		if m.cursor.Move(m.keys.NavKeyMap, msg, m.n()) {
			m.unfollow()
			return m.summariseVisible()
		}
	}
	return nil
}

// ingest adds the batches' events to the ring. It does per event only what
// the list needs (parse the key, match the filter); values are not kept.
func (m *Model) ingest(msg BatchesMsg) tea.Cmd {
	oldFirst := m.ring.First()
	var cmds []tea.Cmd
	for i, b := range msg.Batches {
		for j, ev := range b.Events {
			r := rowOf(ev)
			late := false
			if m.where.rule != nil {
				if msg.rule == m.where.rule {
					r.verdict = msg.verdicts[i][j]
					m.where.noteErr(&r, msg.errs[i][j])
				} else {
					late = true // read before this :where was set
				}
			}
			m.push(r)
			if late {
				m.where.late = append(m.where.late, m.ring.Total()-1)
			}
		}
		m.values.add(b.Events)
		if b.Note != "" {
			m.push(Row{Note: b.Note, Rev: b.Revision})
		}
		if b.Err != nil {
			m.push(Row{Note: "watch error: " + b.Err.Error(), Rev: b.Revision})
			cmds = append(cmds, common.FlashErr(fmt.Errorf("watch: %w", b.Err)))
		}
		m.head = max(m.head, b.Revision)
	}
	if msg.Closed {
		m.ended = true
		m.push(Row{Note: "the watch ended", Rev: m.head})
	} else if m.watch != nil {
		cmds = append(cmds, m.next())
	}
	// Rows that fell out of the ring shift what stays on screen up.
	dropped := 0
	if m.index != nil {
		first := m.ring.First()
		for dropped < len(m.index) && m.index[dropped] < first {
			dropped++
		}
		m.index = m.index[dropped:]
	} else {
		dropped = int(m.ring.First() - oldFirst)
	}
	if !m.follow {
		m.cursor.Pos -= dropped
		m.cursor.Offset -= dropped
	}
	m.clamp()
	cmds = append(cmds, m.summariseVisible(), m.sweep())
	return tea.Batch(cmds...)
}

func (m *Model) push(r Row) {
	if m.ring.Len() == m.ring.Cap() {
		m.where.count(m.ring.At(m.ring.First()).verdict, -1)
	}
	m.ring.Push(r)
	m.where.count(r.verdict, 1)
	if m.index != nil && m.matches(&r) {
		m.index = append(m.index, m.ring.Total()-1)
	}
}

func (m *Model) matches(r *Row) bool {
	if r.Type == "" {
		return true // notes show through every filter
	}
	if m.scope != "" && (m.exact && r.Key != m.scope || !strings.HasPrefix(r.Key, m.scope)) {
		return false
	}
	if m.where.rule != nil && r.verdict != kept {
		return false
	}
	for _, t := range m.tokens {
		if !strings.Contains(strings.ToLower(r.Key), t) && !strings.EqualFold(string(r.Type), t) {
			return false
		}
	}
	return true
}

// reindex rebuilds the rows shown after the scope or the filter changed.
func (m *Model) reindex() {
	m.tokens = strings.Fields(strings.ToLower(m.filter))
	if m.scope == "" && len(m.tokens) == 0 && m.where.rule == nil {
		m.index = nil
	} else {
		m.index = make([]uint64, 0, 1024)
		for seq := m.ring.First(); seq < m.ring.Total(); seq++ {
			if m.matches(m.ring.At(seq)) {
				m.index = append(m.index, seq)
			}
		}
	}
	m.cursor.Height = m.listHeight()
	m.clamp()
}

func (m *Model) unfollow() {
	if m.follow {
		m.follow = false
		m.pausedAt = m.ring.Total()
	}
}

func (m *Model) onKey(msg tea.KeyMsg) tea.Cmd {
	if m.filtering {
		return m.filterKey(msg)
	}
	if m.detail != nil {
		if key.Matches(msg, m.keys.Back) {
			m.detail = nil
			return nil
		}
		if key.Matches(msg, m.keys.History) {
			return m.openHistory(m.detail.seq)
		}
		m.detail.cursor.Move(m.keys.NavKeyMap, msg, len(m.detail.lines))
		return nil
	}
	if cmd, ok := m.playKey(msg); ok {
		return cmd
	}
	if key.Matches(msg, m.keys.Bottom) {
		m.follow = true
		m.clamp()
		return m.summariseVisible()
	}
	if m.cursor.Move(m.keys.NavKeyMap, msg, m.n()) {
		m.unfollow()
		return m.summariseVisible()
	}
	switch {
	case key.Matches(msg, m.keys.Follow):
		m.follow = true
		m.clamp()
		return m.summariseVisible()
	case key.Matches(msg, m.keys.Pause):
		if m.follow {
			m.unfollow()
			return nil
		}
		m.follow = true
		m.clamp()
		return m.summariseVisible()
	case key.Matches(msg, m.keys.Filter):
		// A fresh filter, as k9s starts one: typing after the old words
		// would only narrow them.
		m.filtering, m.unfiltered = true, m.filter
		m.input.SetValue("")
		m.cursor.Height = m.listHeight()
		return m.input.Focus()
	case key.Matches(msg, m.keys.Back):
		if m.narrowed() {
			m.filter, m.scope, m.exact = "", "", false
			return m.SetWhere("", nil)
		}
	case key.Matches(msg, m.keys.Diff):
		return m.openDiff()
	case key.Matches(msg, m.keys.History):
		if m.n() > 0 {
			return m.openHistory(m.seqAt(m.cursor.Pos))
		}
	}
	return nil
}

func (m *Model) filterKey(msg tea.KeyMsg) tea.Cmd {
	switch msg.Type {
	case tea.KeyEnter, tea.KeyEsc:
		m.filtering = false
		m.input.Blur()
		m.filter = m.input.Value()
		if msg.Type == tea.KeyEsc {
			m.filter = m.unfiltered
		}
		m.reindex()
		return m.summariseVisible()
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(msg)
	if v := m.input.Value(); v != m.filter {
		m.filter = v
		m.reindex()
	}
	return cmd
}

func (m *Model) openHistory(seq uint64) tea.Cmd {
	if !m.ring.Holds(seq) {
		return nil
	}
	r := m.ring.At(seq)
	if r.Type == "" {
		return common.Flash("a note row has no key")
	}
	return common.Send(common.OpenHistoryMsg{Key: r.Key, Rev: r.Rev})
}

func (m *Model) openDiff() tea.Cmd {
	if m.n() == 0 {
		return nil
	}
	seq := m.seqAt(m.cursor.Pos)
	r := m.ring.At(seq)
	if r.Type == "" {
		return common.Flash(r.Note)
	}
	m.detail = &detail{seq: seq, loading: true, title: r.Key, cursor: common.Cursor{Height: max(m.height-1, 1)}}
	return diffCmd(m.common, m.changeOf(seq))
}

// summariseVisible asks for the summaries of the rows on screen that have
// none, one request at a time: never all events at ingest.
func (m *Model) summariseVisible() tea.Cmd {
	if m.summarising {
		return nil
	}
	from, to := m.cursor.Window(m.n())
	var changes []change
	for i := from; i < to; i++ {
		seq := m.seqAt(i)
		r := m.ring.At(seq)
		if r.summarised || r.pending {
			continue
		}
		r.pending = true
		changes = append(changes, m.changeOf(seq))
	}
	if len(changes) == 0 {
		return nil
	}
	m.summarising = true
	return summarise(m.common, changes)
}

// Package tree is the browse pane: the /registry key tree as a stack of
// levels, each read lazily with Source.Children, or paged with Source.List
// when it is a large level of objects. A level shows as soon as its names
// are read; the counts Children leaves to Source.Count fill in after.
package tree

import (
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/decode/table"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/ui/common"
	"k8s.io/utils/lru"
)

// Root is the prefix kube-apiserver keeps its objects under by default.
const Root = decode.DefaultPrefix + "/"

// previewDelay is how long the cursor rests on a key before the object pane
// reads it, so holding j does not issue a read per row.
const previewDelay = 80 * time.Millisecond

// nextPageMargin is how close to the last loaded row the cursor gets before
// the next page of a paged level is read.
const nextPageMargin = 100

// level is one open level of the tree.
type level struct {
	loaded
	counts      counts
	cols        columns
	where       *where // nil without a :where
	cursor      common.Cursor
	filter      string
	matches     []int // indexes of children matching filter, best first; nil without a filter
	loadingPage bool
	// chosen says the cursor is where the user, or a jump to a key, put
	// it: a reload keeps it on that entry. Until then it stays on the
	// first row, however the level grows above it.
	chosen bool
}

func (l *level) rows() int {
	if l.matches != nil {
		return len(l.matches)
	}
	return len(l.children)
}

func (l *level) child(i int) etcdview.Child {
	if l.matches != nil {
		return l.children[l.matches[i]]
	}
	return l.children[i]
}

// Options are what the pane needs beyond Common.
type Options struct {
	// Resolve finds the resource of a leaf level, for its columns; nil
	// is table.BuiltinResolver.
	Resolve table.Resolver
	// Now is the clock AGE counts to at the head; nil is time.Now.
	Now func() time.Time
}

// Model is the tree pane.
type Model struct {
	common common.Common
	opts   Options
	keys   KeyMap
	// rowCache is the decoded rows of leaf levels, by (key, mod_revision).
	rowCache *lru.Cache
	// wide: the pane has the whole width, the object pane is hidden.
	wide bool
	// whereGen numbers the :where reads; the pages of an older one are
	// dropped.
	whereGen int
	rev      int64
	levels   []*level
	gen      int // the request whose answer is awaited; older answers are dropped
	loading  bool
	moving   bool // loading for a GoTo: the selection is not the new one yet
	err      error
	// countsInFlight is how many Count reads are under way, for every
	// level: at most countLanes.
	countsInFlight int
	// loadedAt and took are when the open level was last read and how long
	// that took, to pace automatic reloads.
	loadedAt time.Time
	took     time.Duration

	width, height int
	focused       bool
	filtering     bool
	input         textinput.Model

	previewGen int
	previewed  string
	// absent is the key a jump asked for that the level has no row for (a
	// deleted object, opened with :key): h reads its history, and the
	// object pane keeps showing it, until the cursor moves.
	absent string
}

// previewMsg fires previewDelay after the cursor last moved.
type previewMsg struct{ gen int }

// New is a tree rooted at Root.
func New(c common.Common, opts Options) *Model {
	if opts.Resolve == nil {
		opts.Resolve = table.BuiltinResolver
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	in := common.NewInput("/")
	return &Model{common: c, opts: opts, keys: DefaultKeyMap(), input: in, focused: true, loading: true, rowCache: lru.New(rowCacheSize)}
}

func (m *Model) now() time.Time { return m.opts.Now() }

// Init reads the root level.
func (m *Model) Init() tea.Cmd { return m.GoTo(Root) }

// GoTo opens the levels down to path; a path naming a key puts the cursor on it.
func (m *Model) GoTo(path string) tea.Cmd {
	m.gen++
	// A preview waiting for the cursor to rest would open the key under
	// it before the jump lands, over the one the jump's caller opens.
	m.previewGen++
	m.loading, m.moving = true, true
	selected := ""
	if !strings.HasSuffix(path, "/") {
		selected = path
	}
	return loadPath(m.common, m.opts.Resolve, m.gen, Root, path, m.rev, selected)
}

// SetRev reads the open path again as of rev (0: the newest), the key
// under the cursor selected; on a directory it stays at the open level,
// so that stepping through a recording's revisions does not descend.
func (m *Model) SetRev(rev int64) tea.Cmd {
	m.rev = rev
	path := m.Prefix()
	if ch, ok := m.Selected(); ok && !ch.Dir {
		path = ch.Prefix
	}
	return m.GoTo(path)
}

// Prefix is the prefix of the open level.
func (m *Model) Prefix() string {
	if l := m.top(); l != nil {
		return l.prefix
	}
	return Root
}

// Selected is the entry under the cursor.
func (m *Model) Selected() (etcdview.Child, bool) {
	l := m.top()
	if l == nil || l.rows() == 0 {
		return etcdview.Child{}, false
	}
	return l.child(l.cursor.Pos), true
}

// SelectedKey is the key under the cursor, or the one a jump asked for
// that has no row (a deleted object) while the cursor has not moved; ""
// on a directory.
func (m *Model) SelectedKey() string {
	if m.absent != "" {
		return m.absent
	}
	if ch, ok := m.Selected(); ok && !ch.Dir {
		return ch.Prefix
	}
	return ""
}

// Moving says a GoTo is under way: Selected is still the entry before it.
func (m *Model) Moving() bool { return m.moving }

// Focus gives or takes the keyboard focus.
func (m *Model) Focus(on bool) { m.focused = on }

// Capturing is true while the filter takes every key typed.
func (m *Model) Capturing() bool { return m.filtering }

// SetSize sets the pane's size.
func (m *Model) SetSize(w, h int) {
	m.width, m.height = w, h
	for _, l := range m.levels {
		l.cursor.Height = m.listHeight()
		l.cursor.Clamp(l.rows())
	}
}

func (m *Model) listHeight() int {
	h := m.height - 1
	l := m.top()
	if m.filtering || (l != nil && l.filter != "") {
		h--
	}
	if l != nil && l.where != nil {
		h--
	}
	if l != nil && l.res != nil {
		h-- // the columns' names
	}
	return max(h, 1)
}

func (m *Model) top() *level {
	if len(m.levels) == 0 {
		return nil
	}
	return m.levels[len(m.levels)-1]
}

// ShortHelp lists the pane's main keys.
func (m *Model) ShortHelp() []key.Binding { return m.keys.ShortHelp() }

// FullHelp lists all the pane's keys.
func (m *Model) FullHelp() [][]key.Binding { return m.keys.FullHelp() }

// Update handles the pane's keys and its reads.
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case LevelsMsg:
		return m.onLevels(msg)
	case PageMsg:
		return m.onPage(msg)
	case CountMsg:
		return m.onCount(msg)
	case RowsMsg:
		return m.onRows(msg)
	case WhereMsg:
		return m.onWhere(msg)
	case previewMsg:
		if msg.gen == m.previewGen {
			return m.preview()
		}
	case tea.KeyMsg:
		if m.filtering {
			return m.filterKey(msg)
		}
		return m.key(msg)
	case tea.MouseMsg:
		if l := m.top(); l != nil && l.cursor.Move(m.keys.NavKeyMap, msg, l.rows()) {
			return m.chose(l)
		}
	}
	return nil
}

func (m *Model) onLevels(msg LevelsMsg) tea.Cmd {
	if msg.gen != m.gen {
		return nil
	}
	m.loading, m.moving = false, false
	m.loadedAt, m.took = time.Now(), msg.took
	if msg.err != nil {
		// The open level stays on screen; the error goes to the status
		// line, and into the pane only while no level is open.
		m.err = msg.err
		return common.FlashErr(msg.err)
	}
	m.err = nil
	if msg.reload {
		return m.onReload(msg)
	}
	if len(msg.levels) > 1 || msg.levels[0].prefix == Root {
		m.levels = m.levels[:0]
	}
	for _, ld := range msg.levels {
		l := &level{loaded: ld, counts: counts{gen: msg.gen}}
		l.cursor.Height = m.listHeight()
		m.levels = append(m.levels, l)
	}
	l := m.top()
	m.absent = ""
	if msg.selected != "" {
		m.absent = msg.selected
		for i, ch := range l.children {
			if ch.Prefix == msg.selected {
				l.cursor.Pos, l.chosen, m.absent = i, true, ""
			}
		}
		m.previewed = msg.selected
	}
	l.cursor.Clamp(l.rows())
	return tea.Batch(m.moved(), m.countMore())
}

// Reload reads the open level again, keeping the cursor on its entry.
func (m *Model) Reload() tea.Cmd {
	l := m.top()
	if l == nil || m.loading {
		return nil
	}
	m.gen++
	m.loading = true
	// A level read by Children is paged only once it is a leaf grown past
	// pageThreshold; one with uncounted directories is no leaf.
	return loadOne(m.common, nil, m.gen, l.prefix, l.size(), m.rev, l.paged || l.size() > pageThreshold, true)
}

// autoReloadEvery is the least time between automatic reloads; a level that
// is slow to read (counting a large prefix) waits ten times its reading time.
const autoReloadEvery = 2 * time.Second

// ReloadDue says whether an automatic reload of the open level may run now:
// not while one is under way or its counts are still read, not as of an old
// revision (it cannot change), not on a paged level (it would lose the pages
// read so far), and not more often than autoReloadEvery or 10× the last
// read's duration, counts included.
func (m *Model) ReloadDue(now time.Time) bool {
	l := m.top()
	if l == nil || m.loading || l.counting() || m.rev != 0 || l.next != nil || l.where != nil {
		return false
	}
	return now.Sub(m.loadedAt) >= max(autoReloadEvery, 10*m.took)
}

func (m *Model) onReload(msg LevelsMsg) tea.Cmd {
	ld := msg.levels[0]
	l := m.top()
	if l == nil || l.prefix != ld.prefix {
		return nil
	}
	selected, hadSelection := m.Selected()
	l.counts = counts{gen: msg.gen, stale: keepCounts(&ld, l.children)}
	l.cols.stale = ld.keepResource(&l.loaded)
	m.stopWhere(l)
	l.where = nil // its rows were of the level read before
	l.loaded = ld
	m.applyFilter(l)
	if hadSelection && l.chosen {
		for i := range l.rows() {
			if l.child(i).Prefix == selected.Prefix {
				l.cursor.Pos = i
			}
		}
	}
	l.cursor.Clamp(l.rows())
	cmds := []tea.Cmd{m.countMore(), m.readWindow()}
	if now, ok := m.Selected(); ok && now.Prefix != selected.Prefix {
		cmds = append(cmds, m.moved())
	}
	return tea.Batch(cmds...)
}

func (m *Model) onPage(msg PageMsg) tea.Cmd {
	l := m.top()
	if msg.gen != m.gen || l == nil || l.prefix != msg.prefix {
		return nil
	}
	l.loadingPage = false
	if msg.err != nil {
		return common.FlashErr(msg.err)
	}
	l.children = append(l.children, keyChildren(l.prefix, msg.page.Keys)...)
	l.mods = append(l.mods, keyMods(msg.page.Keys)...)
	l.next = msg.page.Next
	if l.filter != "" {
		m.applyFilter(l)
	}
	return m.readWindow()
}

func (m *Model) key(msg tea.KeyMsg) tea.Cmd {
	l := m.top()
	if l == nil {
		return nil
	}
	if l.cursor.Move(m.keys.NavKeyMap, msg, l.rows()) {
		return m.chose(l)
	}
	switch {
	case key.Matches(msg, m.keys.Open):
		return m.open()
	case key.Matches(msg, m.keys.Back):
		return m.back()
	case key.Matches(msg, m.keys.Filter):
		m.filtering = true
		m.input.SetValue(l.filter)
		m.input.CursorEnd()
		m.SetSize(m.width, m.height)
		return m.input.Focus()
	case key.Matches(msg, m.keys.History):
		if k := m.SelectedKey(); k != "" {
			return common.Send(common.OpenHistoryMsg{Key: k})
		}
		return common.Flash("history needs a key: put the cursor on an object")
	case key.Matches(msg, m.keys.Tail):
		return m.tail(l)
	case key.Matches(msg, m.keys.Reload):
		return m.Reload()
	case key.Matches(msg, m.keys.Wide):
		return m.SetWide(!m.wide)
	}
	return nil
}

// WideMsg says the pane took the whole width (On) or gave the object pane
// its share back: the app lays the screen out again.
type WideMsg struct{ On bool }

// SetWide gives the pane the whole width, its level drawn as a table, or
// takes it back.
func (m *Model) SetWide(on bool) tea.Cmd {
	if m.wide == on {
		return nil
	}
	m.wide = on
	return tea.Batch(common.Send(WideMsg{On: on}), m.readWindow())
}

// Wide says whether the pane has the whole width.
func (m *Model) Wide() bool { return m.wide }

func (m *Model) open() tea.Cmd {
	ch, ok := m.Selected()
	if !ok {
		return nil
	}
	if !ch.Dir {
		return common.Send(common.OpenObjectMsg{Key: ch.Prefix, Focus: true})
	}
	m.gen++
	m.loading = true
	return loadOne(m.common, m.opts.Resolve, m.gen, ch.Prefix, ch.Count, m.rev, listFirst(ch.Count), false)
}

func (m *Model) back() tea.Cmd {
	l := m.top()
	switch {
	case m.wide:
		return m.SetWide(false)
	case l.where != nil && l.where.running:
		m.stopWhere(l)
		l.where = nil
		m.applyFilter(l)
		m.SetSize(m.width, m.height)
		return tea.Batch(common.Flash("where cancelled"), m.moved())
	case l.filter != "":
		l.filter = ""
		m.applyFilter(l)
		m.SetSize(m.width, m.height)
		return m.moved()
	case l.where != nil:
		return m.SetWhere("", nil)
	}
	if len(m.levels) > 1 {
		m.gen++ // a level still loading is no longer wanted
		m.loading, m.absent = false, ""
		m.levels = m.levels[:len(m.levels)-1]
		return tea.Batch(m.moved(), m.countMore())
	}
	return nil
}

// chose follows a move of the cursor by the user: the level keeps the
// entry now under it, and a key a jump did not find is left behind.
func (m *Model) chose(l *level) tea.Cmd {
	l.chosen, m.absent = true, ""
	return m.moved()
}

// tail tails what the cursor is on: a directory's prefix, or one key;
// with no row, the level.
func (m *Model) tail(l *level) tea.Cmd {
	if k := m.SelectedKey(); k != "" {
		return common.Send(common.TailPrefixMsg{Prefix: k, Exact: true})
	}
	if ch, ok := m.Selected(); ok {
		return common.Send(common.TailPrefixMsg{Prefix: ch.Prefix})
	}
	return common.Send(common.TailPrefixMsg{Prefix: l.prefix})
}

// moved follows a cursor move: the next page when near the end of a paged
// level, and a preview of the key under the cursor once it rests.
func (m *Model) moved() tea.Cmd {
	l := m.top()
	var cmds []tea.Cmd
	if l.next != nil && !l.loadingPage && l.cursor.Pos+nextPageMargin >= len(l.children) {
		l.loadingPage = true
		cmds = append(cmds, loadPage(m.common, m.gen, l.prefix, l.rev, *l.next))
	}
	m.previewGen++
	gen := m.previewGen
	cmds = append(cmds, m.common.After(previewDelay, func(time.Time) tea.Msg { return previewMsg{gen} }), m.readWindow())
	return tea.Batch(cmds...)
}

func (m *Model) preview() tea.Cmd {
	ch, ok := m.Selected()
	if !ok || ch.Dir || ch.Prefix == m.previewed || m.absent != "" {
		return nil
	}
	m.previewed = ch.Prefix
	return common.Send(common.OpenObjectMsg{Key: ch.Prefix})
}

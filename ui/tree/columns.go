package tree

import (
	"errors"
	"slices"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/etcdview/changes"
	"github.com/etcdscope/etcdscope/ui/common"
)

// maxColumnWidth caps a column's width: a label or an image name may be
// long, and the other columns should still fit.
const maxColumnWidth = 40

// columnGap is the space between two columns.
const columnGap = 2

// ageWidth is AGE's width: its cells are counted when drawn, to a time
// that moves ("45s", "4m30s", "3h20m", "2y120d"), not as the printer made
// them when read.
const ageWidth = 6

// columns is what a leaf level of objects knows of its table: the
// columns' names and widths, the reads under way, the times its objects
// record (to estimate the revision's time for AGE).
type columns struct {
	headers []string // nil until the first rows arrive
	extra   []bool   // the columns only -o wide prints, shown when wide
	age     int      // index of AGE in headers, -1 without one
	widths  []int    // the widest cell seen in each column, capped
	reading map[string]bool
	failed  map[string]string // keys whose read failed, and why
	// stale are keys whose rows show the value before a reload, until
	// they are read again.
	stale map[string]bool
	times changes.TimeMap
}

// index is the position in children of row i.
func (l *level) index(i int) int {
	if l.matches != nil {
		return l.matches[i]
	}
	return i
}

// readWindow reads the rows in view, and a screen past them, that are
// neither cached nor read yet: one range per stretch of consecutive keys.
// It returns at once; the rows come in a RowsMsg.
func (m *Model) readWindow() tea.Cmd {
	l := m.top()
	if l == nil || l.res == nil {
		return nil
	}
	if l.cols.reading == nil {
		l.cols.reading, l.cols.failed = map[string]bool{}, map[string]string{}
	}
	from, to := l.cursor.Offset, min(l.rows(), l.cursor.Offset+2*max(1, l.cursor.Height))
	var runs []run
	prev := -2
	for i := from; i < to; i++ {
		idx := l.index(i)
		key := l.children[idx].Prefix
		if l.cols.reading[key] || l.cols.failed[key] != "" || (!l.cols.stale[key] && m.cachedRow(l, idx) != nil) {
			continue
		}
		l.cols.reading[key] = true
		if idx == prev+1 && len(runs) > 0 {
			runs[len(runs)-1].keys = append(runs[len(runs)-1].keys, key)
		} else {
			after := ""
			if idx > 0 {
				after = l.children[idx-1].Prefix
			}
			runs = append(runs, run{after: after, keys: []string{key}})
		}
		prev = idx
	}
	if len(runs) == 0 {
		return nil
	}
	return readRows(m.common, l.res, l.prefix, l.rev, runs)
}

// cachedRow is the decoded row of children[idx], nil when its
// mod_revision is not known yet or its row is not cached.
func (m *Model) cachedRow(l *level, idx int) *objectRow {
	mod := l.mods[idx]
	if mod == 0 {
		return nil
	}
	if r, ok := m.rowCache.Get(rowKey{l.children[idx].Prefix, mod}); ok {
		row := r.(objectRow)
		return &row
	}
	return nil
}

func (m *Model) onRows(msg RowsMsg) tea.Cmd {
	i := slices.IndexFunc(m.levels, func(l *level) bool { return l.prefix == msg.prefix && l.res != nil })
	if i < 0 {
		return nil
	}
	l := m.levels[i]
	for _, k := range msg.asked {
		delete(l.cols.reading, k)
	}
	if msg.err != nil && errors.Is(msg.err, etcdview.ErrCompacted) && m.rev == 0 && l == m.top() {
		// The head moved on and etcd compacted the revision the level
		// was listed at: list it again at the head, then its rows.
		return tea.Batch(common.Flash("the level's revision was compacted: reading it again at the head"), m.Reload())
	}
	if msg.err != nil {
		if msg.rev == l.rev {
			for _, k := range msg.asked {
				l.cols.failed[k] = msg.err.Error()
			}
		}
		return common.FlashErr(msg.err)
	}
	for _, p := range msg.points {
		l.cols.times.Add(p)
	}
	if l.cols.headers == nil && msg.headers != nil {
		l.cols.headers, l.cols.extra, l.cols.age = msg.headers, msg.extra, msg.age
		l.cols.widths = make([]int, len(msg.headers))
		for j, h := range msg.headers {
			l.cols.widths[j] = len(h)
		}
		if msg.age >= 0 {
			l.cols.widths[msg.age] = ageWidth
		}
	}
	for _, r := range msg.rows {
		m.rowCache.Add(rowKey{r.key, r.mod}, r.row)
		l.cols.widen(r)
		if msg.rev != l.rev {
			continue // read for an older load of the level: cached, not its
		}
		if idx, ok := l.find(r.key); ok {
			l.mods[idx] = r.mod
			delete(l.cols.stale, r.key)
		}
	}
	return nil
}

// widen grows the columns' widths to fit r's cells.
func (c *columns) widen(r readRow) {
	name := len(c.widths) > 0
	for j, cell := range r.row.cells {
		if j < len(c.widths) && j != c.age {
			c.widths[j] = min(maxColumnWidth, max(c.widths[j], ansi.StringWidth(decode.Inert(cell))))
		}
	}
	if name && r.row.cells == nil {
		c.widths[0] = min(maxColumnWidth, max(c.widths[0], ansi.StringWidth(decode.Inert(r.name))))
	}
}

// find is the index in children of key: a level's keys are in key order,
// as etcd ranges them.
func (l *level) find(key string) (int, bool) {
	return slices.BinarySearchFunc(l.children, key, func(ch etcdview.Child, k string) int { return strings.Compare(ch.Prefix, k) })
}

package tree

import (
	"context"
	"fmt"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/decode/table"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/ui/common"
)

// wherePage is how many objects one read of a :where takes: a page of
// List with values, a range of etcd's.
const wherePage = 500

// Predicate says whether to keep an object, given as kubectl is served
// it, unstructured; an error means it could not be evaluated on it.
type Predicate func(map[string]any) (bool, error)

// where is a :where filter of a level: the read of every object under
// way, then the rows that matched.
type where struct {
	expr    string
	keep    Predicate
	gen     int
	ctx     context.Context // the read's: esc or a new :where cancels it
	cancel  context.CancelFunc
	running bool
	// keys are every key read so far, in order, with their mod_revisions;
	// matched the indexes of those kept.
	keys    []etcdview.Child
	mods    []int64
	matched []int
	failed  int    // objects the predicate could not be evaluated on
	why     string // the first of their errors
}

// WhereMsg carries one page of a :where's read of a level.
type WhereMsg struct {
	gen     int
	prefix  string
	keys    []etcdview.KV // values dropped
	matched []bool
	failed  int
	why     string
	next    *etcdview.PageToken
	err     error
}

// SetWhere filters the open level, a level of objects of a known
// resource, to the objects keep keeps, each given as kubectl is served it.
// It reads the whole level, a page at a time off the Update loop, with its
// progress in the pane's header; esc cancels. expr is what the header
// quotes. SetWhere("", nil) clears the filter.
func (m *Model) SetWhere(expr string, keep func(map[string]any) (bool, error)) tea.Cmd {
	l := m.top()
	if l == nil {
		return nil
	}
	m.stopWhere(l)
	if expr == "" || keep == nil {
		l.where = nil
		m.applyFilter(l)
		l.cursor.Clamp(l.rows())
		m.SetSize(m.width, m.height)
		return m.moved()
	}
	if l.res == nil {
		return common.FlashErr(fmt.Errorf("where needs a level of objects of a known resource; %s is not one", l.prefix))
	}
	m.whereGen++
	ctx, cancel := context.WithCancel(m.common.Ctx)
	l.where = &where{expr: expr, keep: keep, gen: m.whereGen, ctx: ctx, cancel: cancel, running: true}
	m.applyFilter(l) // every row, until the read is done
	l.cursor.Clamp(l.rows())
	m.SetSize(m.width, m.height)
	c := m.common
	c.Ctx = ctx
	return readWhere(c, l.res, keep, m.whereGen, l.prefix, l.rev, etcdview.PageToken{Limit: wherePage, Values: true})
}

// stopWhere cancels the level's :where read, if one is under way.
func (m *Model) stopWhere(l *level) {
	if l.where != nil && l.where.running {
		l.where.cancel()
		l.where.running = false
	}
}

// readWhere reads one page of the level and runs keep on each object.
func readWhere(c common.Common, res *table.Resource, keep Predicate, gen int, prefix string, rev int64, token etcdview.PageToken) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := c.Context()
		defer cancel()
		msg := WhereMsg{gen: gen, prefix: prefix}
		p, err := c.Src.List(ctx, prefix, rev, token)
		if err != nil {
			msg.err = fmt.Errorf("where: list %s at revision %d: %w", prefix, rev, err)
			return msg
		}
		dec := c.Decoder
		dec.JSONOnly = true
		msg.keys, msg.matched, msg.next = p.Keys, make([]bool, len(p.Keys)), p.Next
		for i, kv := range p.Keys {
			ok, err := evaluate(dec, res, keep, kv)
			if err != nil {
				if msg.failed == 0 {
					msg.why = fmt.Sprintf("%s: %v", decode.EscapeKey(kv.Key), err)
				}
				msg.failed++
			}
			msg.matched[i] = ok && err == nil
			msg.keys[i].Value = nil
		}
		return msg
	}
}

// evaluate runs keep on the value kv holds, as kubectl is served it: the
// object in the resource's served version, unstructured, with what
// etcdscope hides hidden (Secret data, unless shown), as get's lister
// hands it to -o templates.
func evaluate(dec decode.Decoder, res *table.Resource, keep Predicate, kv etcdview.KV) (bool, error) {
	o := dec.DecodeAt(kv.Key, kv.Value, kv.ModRevision)
	if o.Object == nil {
		return false, fmt.Errorf("%s", o.Label())
	}
	content, err := res.ServedContentOf(dec, o, kv.ModRevision)
	if err != nil {
		return false, err
	}
	return keep(content)
}

func (m *Model) onWhere(msg WhereMsg) tea.Cmd {
	l := m.top()
	if l == nil || l.where == nil || l.where.gen != msg.gen || !l.where.running || l.prefix != msg.prefix {
		return nil
	}
	w := l.where
	if msg.err != nil {
		m.stopWhere(l)
		l.where = nil
		m.SetSize(m.width, m.height)
		return common.FlashErr(msg.err)
	}
	for i, kv := range msg.keys {
		if msg.matched[i] {
			w.matched = append(w.matched, len(w.keys))
		}
		w.keys = append(w.keys, etcdview.Child{Name: kv.Key[len(l.prefix):], Prefix: kv.Key, Count: 1})
		w.mods = append(w.mods, kv.ModRevision)
	}
	if w.why == "" {
		w.why = msg.why
	}
	w.failed += msg.failed
	if msg.next != nil {
		c := m.common
		c.Ctx = w.ctx
		return readWhere(c, l.res, w.keep, w.gen, l.prefix, l.rev, *msg.next)
	}
	// Read whole, the level is every key: the filter is over them all.
	w.running = false
	w.cancel()
	l.children, l.mods, l.next = w.keys, w.mods, nil
	l.count, l.uncounted = int64(len(w.keys)), 0
	w.keys, w.mods = nil, nil
	m.applyFilter(l)
	l.cursor.Pos, l.cursor.Offset = 0, 0
	l.cursor.Clamp(l.rows())
	return m.moved()
}

// whereNote is the :where line of the header: its progress, then what it
// found.
func (l *level) whereNote() string {
	w := l.where
	if w.running {
		total := "?"
		if n := l.size(); n != etcdview.CountUnknown {
			total = fmt.Sprint(n)
		}
		return fmt.Sprintf("where %s: reading %d of %s… (esc cancels)", w.expr, len(w.keys), total)
	}
	note := fmt.Sprintf("where %s: %d of %d match, %d could not be evaluated", w.expr, len(w.matched), len(l.children), w.failed)
	if w.why != "" {
		note += " (" + w.why + ")"
	}
	return note + "  (esc clears)"
}

package tree

import (
	tea "github.com/charmbracelet/bubbletea"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/sahilm/fuzzy"
)

// filterKey takes a key while the / filter has the keys.
func (m *Model) filterKey(msg tea.KeyMsg) tea.Cmd {
	l := m.top()
	switch msg.Type {
	case tea.KeyEnter:
		m.filtering = false
		m.input.Blur()
		m.SetSize(m.width, m.height)
		return m.moved()
	case tea.KeyEsc:
		m.filtering = false
		m.input.Blur()
		l.filter = ""
		m.applyFilter(l)
		m.SetSize(m.width, m.height)
		return m.moved()
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(msg)
	if l != nil && m.input.Value() != l.filter {
		l.filter = m.input.Value()
		m.applyFilter(l)
		l.cursor.Pos, l.cursor.Offset = 0, 0
		l.cursor.Clamp(l.rows())
		return tea.Batch(cmd, m.readWindow())
	}
	return cmd
}

// applyFilter ranks the loaded children the :where kept (all without one)
// against the filter; fuzzy returns the best match first.
func (m *Model) applyFilter(l *level) {
	var kept []int // nil: every child
	if l.where != nil && !l.where.running {
		kept = l.where.matched
		if kept == nil {
			kept = []int{}
		}
	}
	if l.filter == "" {
		l.matches = kept
		return
	}
	matches := fuzzy.FindFrom(l.filter, childNames{l.children, kept})
	l.matches = make([]int, len(matches))
	for i, mt := range matches {
		l.matches[i] = mt.Index
		if kept != nil {
			l.matches[i] = kept[mt.Index]
		}
	}
}

// childNames adapts children, or those of them at kept, to fuzzy.Source
// without copying names.
type childNames struct {
	children []etcdview.Child
	kept     []int // nil: every child
}

func (c childNames) String(i int) string {
	if c.kept != nil {
		return c.children[c.kept[i]].Name
	}
	return c.children[i].Name
}

func (c childNames) Len() int {
	if c.kept != nil {
		return len(c.kept)
	}
	return len(c.children)
}

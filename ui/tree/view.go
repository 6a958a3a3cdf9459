package tree

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/ui/common"
)

// View draws the open level: its prefix and size, the filter, the window
// of rows around the cursor.
func (m *Model) View() string {
	s := m.common.Styles
	l := m.top()
	var head []string
	switch {
	case l == nil && m.err != nil:
		return common.FillHeight([]string{common.Fit(common.Render(s.FlashErr, m.err.Error()), m.width)}, m.height)
	case l == nil:
		return common.FillHeight([]string{s.Faint.Render("loading " + Root + "…")}, m.height)
	}
	head = append(head, common.Fit(common.Render(s.Title, l.prefix)+"  "+common.Render(s.Faint, m.sizeNote(l)), m.width))
	if l.where != nil {
		head = append(head, common.Fit(common.Render(s.Note, l.whereNote()), m.width))
	}
	if m.filtering {
		head = append(head, common.Fit(m.input.View(), m.width))
	} else if l.filter != "" {
		head = append(head, common.Fit(common.Render(s.Faint, fmt.Sprintf("/%s  (%d of %d, esc clears)", l.filter, l.rows(), len(l.children))), m.width))
	}
	row := func(i int) common.Line { return m.row(l.child(i)) }
	if l.res != nil {
		t := m.layoutTable(l)
		head = append(head, m.headerLine(l, t))
		row = func(i int) common.Line { return m.objectLine(l, l.index(i), t) }
	}
	body := common.RenderRows(l.rows(), l.cursor, row, m.width, s.Selection(m.focused), true)
	if l.rows() == 0 {
		body = common.FillHeight([]string{s.Faint.Render("  (nothing here)")}, l.cursor.Height)
	}
	return strings.Join(head, "\n") + "\n" + body
}

// sizeNote is what is known of the level's size: "N keys", "N+ keys" while
// counts are missing, and how much of a paged level is loaded.
func (m *Model) sizeNote(l *level) string {
	var size, notes []string
	switch {
	case l.uncounted == 0:
		size = append(size, common.Count(l.count, "key"))
	case l.count > 0:
		size = append(size, fmt.Sprintf("%d+ keys", l.count))
	}
	if l.next != nil {
		size = append(size, fmt.Sprintf("%d loaded", len(l.children)))
	}
	if len(size) > 0 {
		notes = append(notes, strings.Join(size, ", "))
	}
	if l.counting() {
		notes = append(notes, "counting…")
	}
	if m.loading {
		notes = append(notes, "loading…")
	}
	if age := m.ageNote(l); age != "" {
		notes = append(notes, age)
	}
	if l.resErr != nil {
		notes = append(notes, "no columns: "+l.resErr.Error())
	}
	return strings.Join(notes, "  ")
}

func (m *Model) row(ch etcdview.Child) common.Line {
	s := m.common.Styles
	w := max(m.width-2, 10)
	if !ch.Dir {
		return common.NewLine(ch.Name)
	}
	count, style := fmt.Sprint(ch.Count), s.Count
	if ch.Count == etcdview.CountUnknown {
		count, style = "…", s.Faint // not counted yet
	}
	cw := lipgloss.Width(count)
	name := common.Fit(common.Text(ch.Name), w-cw-1)
	gap := strings.Repeat(" ", max(1, w-lipgloss.Width(name)-cw))
	return common.StyledLine(s.Dir, name).Append(common.NewLine(gap), common.StyledLine(style, count))
}

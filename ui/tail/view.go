package tail

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/ui/common"
)

// View draws the status line, the filter, the column heads and the rows in
// view; or the diff of one row.
func (m *Model) View() string {
	if m.detail != nil {
		return m.detailView()
	}
	s := m.common.Styles
	head := []string{common.Fit(m.status(), m.width)}
	switch {
	case m.filtering:
		head = append(head, common.Fit(m.input.View(), m.width))
	case m.narrowed():
		head = append(head, common.Fit(common.Render(s.Faint, m.narrowing()), m.width))
	}
	cols := m.columns()
	before, typ, after := cols.cells("REV", "TYPE", "RESOURCE", "NAMESPACE/NAME", "SIZE", "CHANGES")
	head = append(head, common.Fit(s.Bold.Render("  "+before+typ+after), m.width))

	row := func(i int) common.Line { return m.row(m.ring.At(m.seqAt(i)), cols) }
	body := common.RenderRows(m.n(), m.cursor, row, m.width, s.Selection(m.focused), true)
	if m.n() == 0 {
		body = common.FillHeight([]string{s.Faint.Render("  waiting for events below " + Prefix + "…")}, m.cursor.Height)
	}
	return strings.Join(head, "\n") + "\n" + body
}

// narrowing is the line that says what hides rows, and how many it hides.
func (m *Model) narrowing() string {
	var parts []string
	switch {
	case m.exact:
		parts = append(parts, "key "+m.scope)
	case m.scope != "":
		parts = append(parts, "scope "+m.scope)
	}
	if m.filter != "" {
		parts = append(parts, fmt.Sprintf("filter %q", m.filter))
	}
	if w := m.where; w.rule != nil {
		where := fmt.Sprintf("where %s: %d shown, %d hidden, %d could not evaluate", decode.Inert(w.rule.expr), w.counts[kept], w.counts[hidden], w.counts[failed])
		if todo := len(w.late) + int(max(w.sweepAt, m.ring.First())-m.ring.First()); todo > 0 {
			where += fmt.Sprintf(", %d to judge…", todo)
		}
		if w.lastErr != "" && w.counts[failed] > 0 {
			where += " (last: " + decode.Inert(w.lastErr) + ")"
		}
		parts = append(parts, where)
	}
	return strings.Join(append(parts, "("+common.Count(m.n(), "row")+", esc clears)"), "  ")
}

func orAll(p string) string {
	if p == "" {
		return Prefix
	}
	return p
}

func (m *Model) status() string {
	s := m.common.Styles
	b := m.ring
	mode := s.Added.Render("following")
	if !m.follow {
		mode = s.Modified.Render(fmt.Sprintf("PAUSED, %d new", b.Total()-m.pausedAt))
	}
	switch {
	case m.play != nil:
		mode = "replay " + m.play.stateName()
	case m.ended:
		mode = s.Deleted.Render("watch ended")
	}
	return fmt.Sprintf("%s  %s  %s, %d kept of %d, %d dropped", common.Render(s.Title, "tail "+orAll(m.scope)), mode, common.Count(b.Total(), "event"), b.Len(), b.Cap(), b.Dropped())
}

func (m *Model) detailView() string {
	s := m.common.Styles
	d := m.detail
	title := common.Fit(common.Render(s.Title, d.title)+s.Faint.Render("  esc back · h history"), m.width)
	switch {
	case d.loading:
		return common.FillHeight([]string{title, s.Faint.Render("reading…")}, m.height)
	case d.err != nil:
		return common.FillHeight([]string{title, common.Fit(common.Render(s.FlashErr, d.err.Error()), m.width)}, m.height)
	}
	return title + "\n" + common.RenderWindow(d.lines, d.cursor, m.width, s.Selected, true)
}

// columns are the widths of the row cells for the pane's width.
type columns struct{ rev, typ, res, name, size int }

func (m *Model) columns() columns {
	c := columns{rev: 9, typ: 9, res: 18, size: 7}
	rest := m.width - 2 - c.rev - c.typ - c.res - c.size - 5
	c.name = max(12, min(48, rest/2))
	return c
}

// cells lays out a row in three parts: the type, in the middle, is styled
// apart from the rest.
func (c columns) cells(rev, typ, res, name, size, changes string) (before, typCell, after string) {
	return fmt.Sprintf("%-*s ", c.rev, rev), fmt.Sprintf("%-*s", c.typ, typ),
		fmt.Sprintf(" %s %s %*s %s", common.Cell(res, c.res), common.Cell(name, c.name), c.size, size, changes)
}

func (m *Model) row(r *Row, cols columns) common.Line {
	s := m.common.Styles
	if r.Type == "" {
		return common.StyledLine(s.Note, fmt.Sprintf("%-*d ── %s ──", cols.rev, r.Rev, r.Note))
	}
	name := r.Name
	if r.Namespace != "" {
		name = r.Namespace + "/" + r.Name
	}
	summary := r.Summary
	if !r.summarised {
		summary = "…"
	}
	before, typ, after := cols.cells(fmt.Sprint(r.Rev), string(r.Type), r.Resource, name, fmt.Sprint(r.Size), summary)
	return common.NewLine(before).Append(common.StyledLine(m.typeStyle(r.Type), typ), common.NewLine(after))
}

func (m *Model) typeStyle(t etcdview.EventType) lipgloss.Style {
	s := m.common.Styles
	switch t {
	case etcdview.Added:
		return s.Added
	case etcdview.Deleted:
		return s.Deleted
	}
	return s.Modified
}

package owners

import (
	"fmt"
	"strconv"

	"github.com/charmbracelet/lipgloss"
	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/ui/common"
)

// createdLayout is how a row shows when its object was created: a time, not an
// age, so that what the screen shows depends on the store alone.
const createdLayout = "2006-01-02 15:04"

// View draws the title, the column heads and the rows in view.
func (m *Model) View() string {
	s := m.common.Styles
	title := common.Render(s.Title, "owners of "+decode.EscapeKey(m.key))
	switch {
	case m.key == "":
		return common.FillHeight([]string{s.Faint.Render("no object yet: press O on an object in browse")}, m.height)
	case m.err != nil:
		return common.FillHeight([]string{common.Fit(title, m.width), common.Fit(common.Render(s.FlashErr, m.err.Error()), m.width)}, m.height)
	case m.loading:
		status := fmt.Sprintf("reading every object for their ownerReferences… %d values read (esc stops)", m.read.Load())
		return common.FillHeight([]string{common.Fit(title, m.width), s.Faint.Render(status)}, m.height)
	}
	status := fmt.Sprintf("  at revision %d · %s", m.readRev, common.Count(len(m.rows), "row"))
	nameW := min(m.nameW, max(m.width/2, 20))
	head := fmt.Sprintf("%s  %-16s %9s  %-16s  %s", common.Pad("NAME", nameW), "NAMESPACE", "REVISION", "CREATED", "STATE")
	return common.Fit(title+s.Faint.Render(status), m.width) + "\n" +
		common.Fit(s.Bold.Render("  "+head), m.width) + "\n" +
		common.RenderRows(len(m.rows), m.cursor, func(i int) common.Line { return m.row(i, nameW) }, m.width, s.Selection(m.focused), true)
}

// row is the line of row i, its name cut to nameW cells.
func (m *Model) row(i, nameW int) common.Line {
	s := m.common.Styles
	r := m.rows[i]
	o := m.g.Object(r.ID)
	rev, when := "-", "-"
	if !m.g.Virtual(r.ID) {
		rev = strconv.FormatInt(o.Revision, 10)
	}
	if !o.Created.IsZero() {
		when = o.Created.UTC().Format(createdLayout)
	}
	style := lipgloss.NewStyle()
	switch {
	case m.g.Virtual(r.ID):
		style = s.Deleted
	case o.Deleting():
		style = s.Modified
	case r.Target:
		style = s.Bold
	}
	name := common.Cell(r.Indent+o.Ident(), nameW)
	rest := fmt.Sprintf("  %-16s %9s  %-16s  %s", o.Namespace, rev, when, m.g.State(r))
	return common.StyledLine(style, name+rest)
}

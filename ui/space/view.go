package space

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/dustin/go-humanize"
	"github.com/etcdscope/etcdscope/etcdview/space"
	"github.com/etcdscope/etcdscope/ui/common"
)

// heights share the screen's rows: the title and status lines, the
// level's table, the three lists side by side, the members and the
// forecast, and the guidance; the table takes what the others leave.
type heights struct{ table, lists, guide int }

func (m *Model) heights() heights {
	h := heights{lists: 5, guide: 3}
	if m.height >= 40 {
		h.lists, h.guide = 8, 6
	}
	fixed := 2 + 1 + 1 + h.lists + 1 + len(m.members()) + 1 + 1 + h.guide
	h.table = max(3, m.height-fixed)
	return h
}

func (m *Model) layoutCursors() {
	h := m.heights()
	for p := range panes {
		m.cursors[p].Height = h.lists
		if p == levelPane {
			m.cursors[p].Height = h.table
		}
		m.cursors[p].Clamp(m.paneLen(p))
	}
}

// View draws the screen from what the model holds.
func (m *Model) View() string {
	s := m.common.Styles
	n := m.levelNode()
	if n == nil {
		return common.FillHeight([]string{m.title(nil), m.statusLine()}, m.height)
	}
	h := m.heights()
	rows := []string{m.title(n), m.statusLine(), m.tableView(h.table), m.listsView(n, h.lists), m.membersView()}
	rows = append(rows, common.Fit(s.Title.Render("guidance"), m.width))
	rows = append(rows, m.guideLines(h.guide)...)
	return common.FillHeight(strings.Split(strings.Join(rows, "\n"), "\n"), m.height)
}

func (m *Model) title(n *space.Node) string {
	s := m.common.Styles
	if n == nil {
		return common.Fit(s.Title.Render("space")+"  "+common.Render(s.Faint, Root), m.width)
	}
	r := m.report
	_, ofAll := space.Share(n, space.ByBytes, nil, false)
	line := fmt.Sprintf("  %s  %s, %s (%s of %s)  revision %d  sorted by %s", n.Path, common.Count(n.Keys, "key"), humanize.IBytes(uint64(n.Bytes)),
		percent(ofAll), r.Root.Path, r.Revision, sortedBy(m.by, r.History))
	return common.Fit(s.Title.Render("space")+common.Render(s.Faint, line), m.width)
}

func sortedBy(by space.Measure, history bool) string {
	if by == space.ByRevisions && !history {
		return "writes since creation"
	}
	return string(by)
}

// statusLine is the read under way with its progress bar, the read's
// failure, or how to read again.
func (m *Model) statusLine() string {
	s := m.common.Styles
	switch {
	case m.job != nil:
		p := m.progress
		text := fmt.Sprintf(" reading %s: %s", p.Phase, humanize.Comma(p.Done))
		frac := 0.0
		if p.Total > 0 {
			frac = float64(p.Done) / float64(p.Total)
			text += " of " + humanize.Comma(p.Total)
		}
		if p.Phase == "" {
			text = " reading the members' status"
		}
		return common.Fit(m.bar.ViewAs(frac)+text+s.Faint.Render("  esc cancels"), m.width)
	case m.cancelled != nil:
		return common.Fit(s.Faint.Render(fmt.Sprintf("read cancelled (%s: %s read); R reads again", m.cancelled.Phase, humanize.Comma(m.cancelled.Done))), m.width)
	case m.err != nil:
		return common.Fit(common.Render(s.FlashErr, "✗ "+m.err.Error())+s.Faint.Render("  R reads again"), m.width)
	case m.report != nil:
		return common.Fit(s.Faint.Render(fmt.Sprintf("read at revision %d; R reads again at the head", m.report.Revision)), m.width)
	}
	return ""
}

// tableView is the level's nodes, one row each.
func (m *Model) tableView(height int) string {
	s := m.common.Styles
	name := m.nameWidth()
	head := fmt.Sprintf("%-*s %8s %10s %8s %8s %9s", name, "NAME", "KEYS", "SIZE", "%PARENT", "%TOTAL", "WRITES")
	if m.report.History {
		head += fmt.Sprintf(" %10s", "HISTORY")
	}
	head += fmt.Sprintf(" %8s %10s", "REV/S", "BYTES/S")
	body := common.RenderRows(len(m.rows), m.cursors[levelPane], func(i int) common.Line { return m.row(m.rows[i], name) },
		m.width, s.Selection(m.focused && m.pane == levelPane), m.focused && m.pane == levelPane)
	return common.Fit(s.Bold.Render("  "+head), m.width) + "\n" + body
}

func (m *Model) nameWidth() int {
	cols := 8 + 10 + 8 + 8 + 9 + 8 + 10 + 7
	if m.report.History {
		cols += 11
	}
	return max(16, m.width-2-cols)
}

func (m *Model) row(n *space.Node, name int) common.Line {
	parent, total := space.Share(n, m.by, &m.rates, m.report.History)
	label := n.Name
	if !n.IsKey() && len(n.Children) == 0 && n.Depth >= m.report.Options.Depth {
		label += " …" // not read below: enter reads deeper
	}
	text := fmt.Sprintf("%s %8d %10s %8s %8s %9s", common.Cell(label, name), n.Keys, humanize.IBytes(uint64(n.Bytes)), percent(parent), percent(total), n.WritesText())
	if m.report.History {
		text += fmt.Sprintf(" %10s", humanize.IBytes(uint64(n.HeldBytes())))
	}
	rev, bytes := "-", "-"
	if r, ok := m.rates.Nodes[n.Path]; ok {
		rev, bytes = fmt.Sprintf("%.1f", r.Revisions), humanize.IBytes(uint64(r.Bytes))+"/s"
	}
	return common.NewLine(text + fmt.Sprintf(" %8s %10s", rev, bytes))
}

func percent(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) }

// listsView is the largest keys, the most written, and the hottest now,
// below the level, side by side; keys are shown below the level's path.
func (m *Model) listsView(n *space.Node, height int) string {
	w := max(m.width/3, 20)
	live := m.liveKeys()
	lists := []struct {
		title string
		p     pane
		n     int
		row   func(i int) (string, string)
	}{
		{"LARGEST", largestPane, len(n.Largest), func(i int) (string, string) {
			return n.Largest[i].Key, humanize.IBytes(uint64(n.Largest[i].Size))
		}},
		{"MOST WRITTEN (versions)", hottestPane, len(n.Hottest), func(i int) (string, string) {
			return n.Hottest[i].Key, fmt.Sprint(n.Hottest[i].Version)
		}},
		{"HOTTEST NOW (rev/s, last minute)", livePane, len(live), func(i int) (string, string) {
			return live[i].Key, fmt.Sprintf("%.2f", live[i].Revisions)
		}},
	}
	var cols []string
	for _, l := range lists {
		focused := m.focused && m.pane == l.p
		body := common.RenderRows(l.n, m.cursors[l.p], func(i int) common.Line {
			key, figure := l.row(i)
			return common.NewLine(common.Cell(strings.TrimPrefix(key, m.level), w-14) + fmt.Sprintf(" %9s", figure))
		}, w-1, m.common.Styles.Selection(focused), focused)
		if l.n == 0 {
			body = common.FillHeight([]string{m.common.Styles.Faint.Render("  none")}, height)
		}
		cols = append(cols, common.Box(m.common.Styles.Bold.Render(l.title)+"\n"+body, w, height+1))
	}
	return lipgloss.JoinHorizontal(lipgloss.Top, cols...)
}

// membersView is each member's DB size, in use, reclaimable, quota and
// alarms, and the forecast.
func (m *Model) membersView() string {
	s := m.common.Styles
	const format = "  %-12s %10s %10s %16s %10s %7s  %s"
	rows := []string{common.Fit(s.Bold.Render(fmt.Sprintf(format, "MEMBER", "DB SIZE", "IN USE", "RECLAIMABLE", "QUOTA", "%QUOTA", "ALARMS")), m.width)}
	for _, mb := range m.members() {
		name := common.Text(mb.Name)
		if mb.Err != nil {
			rows = append(rows, common.Fit(common.Render(s.Down, fmt.Sprintf("  %-12s unreachable: %s", name, mb.Err.Error())), m.width))
			continue
		}
		inUse, free := "?", "?"
		if mb.InUse > 0 {
			inUse = humanize.IBytes(uint64(mb.InUse))
			free = fmt.Sprintf("%s (%s)", humanize.IBytes(uint64(mb.Reclaimable())), percent(float64(mb.Reclaimable())/float64(mb.DBSize)))
		}
		if mb.Leader {
			name += " ★"
		}
		quota, share := space.QuotaText(mb)
		line := fmt.Sprintf(format, name, humanize.IBytes(uint64(mb.DBSize)), inUse, free, quota, share, common.Text(strings.Join(mb.Alarms, ", ")))
		rows = append(rows, common.Fit(line, m.width))
	}
	fc := "forecast: no member reports its DB size"
	if m.forecast != nil {
		fc = "forecast: " + m.forecast.String()
	}
	style := s.Faint
	if w := m.Warning(); w != "" {
		style = s.Down
	}
	return strings.Join(append(rows, common.Fit(common.Render(style, fc), m.width)), "\n")
}

// guideLines are the findings, the weightiest first, each wrapped to the
// width, as many as height holds.
func (m *Model) guideLines(height int) []string {
	findings := m.findings
	if m.Warning() != "" {
		findings = append([]space.Finding{{Subject: "quota", Text: m.forecast.String()}}, findings...)
	}
	if len(findings) == 0 {
		return []string{m.common.Styles.Faint.Render("  nothing stands out")}
	}
	var lines []string
	for _, f := range findings {
		text := ansi.Wordwrap(common.Text(f.Subject)+": "+common.Text(f.Text), max(m.width-4, 10), " ")
		for i, l := range strings.Split(text, "\n") {
			lead := "  • "
			if i > 0 {
				lead = "    "
			}
			lines = append(lines, common.Fit(lead+l, m.width))
		}
	}
	if len(lines) > height {
		lines = lines[:height]
	}
	return lines
}

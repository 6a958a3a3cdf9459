package tree

import (
	"strings"
	"time"

	"github.com/etcdscope/etcdscope/etcdview/changes"
	"github.com/etcdscope/etcdscope/ui/common"
	"k8s.io/apimachinery/pkg/util/duration"
)

// minNameWidth is the narrowest NAME column kept beside REVISION; a pane
// narrower than that drops REVISION instead.
const minNameWidth = 8

// fit is the columns that fit in width, left to right, and the width of
// each: NAME always, REVISION when there is room beside NAME, and the
// others in order as long as they fit, so what is dropped is on the right;
// those -o wide adds only when wide.
func (c *columns) fit(width int, wide bool) (shown, widths []int) {
	n := len(c.headers)
	if n == 0 {
		return nil, nil
	}
	reserve, last := 0, -1
	if n > 1 && width-columnGap-c.widths[n-1] >= minNameWidth {
		reserve, last = columnGap+c.widths[n-1], n-1
	}
	shown, widths = []int{0}, []int{min(c.widths[0], width-reserve)}
	used := widths[0]
	for j := 1; j < n-1; j++ {
		if j < len(c.extra) && c.extra[j] && !wide {
			continue
		}
		if used+columnGap+c.widths[j]+reserve > width {
			break
		}
		shown, widths = append(shown, j), append(widths, c.widths[j])
		used += columnGap + c.widths[j]
	}
	if last >= 0 {
		shown, widths = append(shown, last), append(widths, c.widths[last])
	}
	return shown, widths
}

// table is how a leaf level of objects is drawn: its columns in the
// pane's width and the time AGE counts to.
type tableLayout struct {
	shown, widths []int
	ageAt         time.Time // zero: not known
}

// layoutTable lays the level's columns out for the pane.
func (m *Model) layoutTable(l *level) tableLayout {
	t := tableLayout{}
	t.shown, t.widths = l.cols.fit(max(m.width-2, minNameWidth), m.wide)
	t.ageAt, _ = m.ageAt(l)
	return t
}

// ageAt is the time AGE counts to: now at the head; as of an older
// revision, the time the level's objects say that revision was written
// (changes.TimeMap, an estimate).
func (m *Model) ageAt(l *level) (time.Time, changes.Estimate) {
	if m.rev == 0 {
		return m.now(), changes.Estimate{}
	}
	e := l.cols.times.At(l.rev)
	return e.Time, e
}

// ageNote labels the ages of a level read as of an old revision as
// estimates: "ages at ≈ 12:54:30Z".
func (m *Model) ageNote(l *level) string {
	if m.rev == 0 || l.res == nil || l.cols.age < 0 || l.cols.headers == nil {
		return ""
	}
	_, e := m.ageAt(l)
	if e.Bound == changes.Unknown {
		return "ages: time of the revision unknown"
	}
	sign, _, _ := strings.Cut(e.String(), " ")
	layout := "15:04:05Z"
	if y, d := e.Time.UTC().YearDay(), m.now().UTC().YearDay(); y != d || e.Time.Year() != m.now().Year() {
		layout = "2006-01-02T15:04:05Z"
	}
	return "ages at " + sign + " " + e.Time.UTC().Format(layout)
}

// headerLine is the columns' names over their cells.
func (m *Model) headerLine(l *level, t tableLayout) string {
	s := m.common.Styles
	if len(t.shown) == 0 {
		return "  " + s.Bold.Render("NAME")
	}
	cells := make([]string, len(t.shown))
	for k, j := range t.shown {
		cells[k] = common.Cell(l.cols.headers[j], t.widths[k])
	}
	return common.Fit("  "+s.Bold.Render(strings.Join(cells, strings.Repeat(" ", columnGap))), m.width)
}

// objectLine is row idx of children drawn as a table row: the cells when
// its row is decoded, else its name and "…", or, when its value makes no
// row, its name and why, faint.
func (m *Model) objectLine(l *level, idx int, t tableLayout) common.Line {
	s := m.common.Styles
	ch := l.children[idx]
	gap := common.NewLine(strings.Repeat(" ", columnGap))
	nameWidth := m.width - 2
	if len(t.widths) > 0 {
		nameWidth = t.widths[0]
	}
	r := m.cachedRow(l, idx)
	var note string
	switch {
	case r == nil && l.cols.failed[ch.Prefix] != "":
		note = l.cols.failed[ch.Prefix]
	case r == nil:
		note = "…"
	case r.problem != "":
		note = r.problem
	}
	if note != "" {
		return common.NewLine(common.Cell(ch.Name, nameWidth)).Append(gap, common.StyledLine(s.Faint, note))
	}
	line := common.Line{}
	for k, j := range t.shown {
		if k > 0 {
			line = line.Append(gap)
		}
		line = line.Append(common.NewLine(common.Cell(m.cellAt(l, r, j, t.ageAt), t.widths[k])))
	}
	return line
}

// cellAt is cell j of r; AGE is counted to at, as the printers count it
// to now (duration.HumanDuration, "<unknown>" without a time).
func (m *Model) cellAt(l *level, r *objectRow, j int, at time.Time) string {
	if j >= len(r.cells) {
		return ""
	}
	if j != l.cols.age {
		return r.cells[j]
	}
	if at.IsZero() || r.created.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(at.Sub(r.created))
}

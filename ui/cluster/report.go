package cluster

import (
	"fmt"
	"strings"
	"time"

	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/etcdview/check"
	"github.com/etcdscope/etcdscope/ui/common"
)

// summary is the check view's status row once the check ended: one clear
// line for a consistent cluster or a single store.
func summary(s *common.Styles, r *check.Report, took time.Duration) string {
	var line string
	switch {
	case r.Single != "":
		return common.Render(s.Bold, r.Single)
	case r.Consistent:
		line = common.Render(s.Added, fmt.Sprintf("consistent: the members compared hold the same data at revision %d (%s, %.1fs)", r.Rev, r.Method, took.Seconds()))
	default:
		line = common.Render(s.Down, fmt.Sprintf("the members differ at revision %d: %s (%s, %s compared, %.1fs)",
			r.Rev, common.Count(r.DifferencesTotal, "key"), r.Method, common.Count(r.Compared, "key"), took.Seconds()))
	}
	if r.Note != "" {
		line += common.Render(s.Faint, "  "+r.Note)
	}
	return line
}

// reportLines lays out a report: a row per member, then a row per
// differing key with each member's mod revision, version and value hash;
// keys holds each row's differing key, "" for the others.
func (m *Model) reportLines(r *check.Report) ([]common.Line, []string) {
	s := m.common.Styles
	var lines []common.Line
	var keys []string
	add := func(l common.Line, key string) {
		lines, keys = append(lines, l), append(keys, key)
	}
	if r.Single != "" {
		return nil, nil
	}
	add(common.StyledLine(s.Bold, fmt.Sprintf("%-12s %-8s %s", "MEMBER", "ROLE", "STATE")), "")
	for _, mb := range r.Members {
		role := "voter"
		if mb.Learner {
			role = "learner"
		}
		row := fmt.Sprintf("%-12s %-8s %s", common.Text(mb.Name), role, mb.State)
		if mb.Problem {
			add(common.StyledLine(s.Down, row), "")
			continue
		}
		add(common.NewLine(row), "")
	}
	if len(r.Differences) == 0 {
		return lines, keys
	}
	add(common.Line{}, "")
	keyW := keyWidth(r.Differences, m.width)
	head := common.Cell("KEY", keyW)
	for _, ks := range r.Differences[0].Members {
		head += "  " + common.Cell(ks.Member, stateWidth)
	}
	add(common.StyledLine(s.Bold, head+"  (enter: each member's value)"), "")
	for _, d := range r.Differences {
		row := common.Cell(decode.EscapeKey(d.Key), keyW)
		for _, ks := range d.Members {
			row += "  " + common.Cell(keyState(ks), stateWidth)
		}
		add(common.NewLine(row), d.Key)
	}
	if more := r.DifferencesTotal - int64(len(r.Differences)); more > 0 {
		add(common.StyledLine(s.Faint, fmt.Sprintf("… and %s more: etcdscope check members -o json lists them", common.Count(more, "key"))), "")
	}
	return lines, keys
}

// stateWidth is a KeyState's column: "mod 1234567 ver 12 1a2b3c4d".
const stateWidth = 28

// keyWidth is the key column: the longest key, leaving the members'
// columns room when the screen is narrow.
func keyWidth(diffs []check.Difference, width int) int {
	w := len("KEY")
	for _, d := range diffs {
		w = max(w, len(decode.EscapeKey(d.Key)))
	}
	room := width - 2 - len(diffs[0].Members)*(stateWidth+2)
	return max(min(w, room), 24)
}

// keyState is one member's version of a differing key.
func keyState(ks check.KeyState) string {
	if !ks.Present {
		return "absent"
	}
	return fmt.Sprintf("mod %d ver %d %s", ks.ModRevision, ks.Version, strings.TrimSpace(ks.ValueHash[:min(8, len(ks.ValueHash))]))
}

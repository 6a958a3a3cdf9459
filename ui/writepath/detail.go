package writepath

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/etcdscope/etcdscope/ui/common"
)

const (
	// labelWidth is the width of a stage's name at the start of its row.
	labelWidth = 16
	// phaseRows bounds an admission phase's rows, so that the rows below
	// it (the outcome) stay in the detail.
	phaseRows = 2
)

// detail is the selected write as kube-apiserver handled it, a stage a row
// in the order its handler chain runs them: authentication, authorization,
// admission (mutating, then validating); then either the etcd transaction
// and the watchers that received its revision, or the stage that refused
// it and why. A stage the request never reached has no row.
func (m *Model) detail() []string {
	s := m.common.Styles
	sep := s.Separator.Render(strings.Repeat("─", max(m.width, 1)))
	w, ok := m.selected()
	if !ok {
		return []string{sep}
	}
	out := []string{sep, m.heading(w), m.stage("authentication", m.authentication(w))}
	if w.Decision != "" {
		out = append(out, m.stage("authorization", m.authorization(w)))
	}
	out = append(out, m.admission(w)...)
	if len(w.Webhooks) > 0 {
		out = append(out, m.stage("webhooks", common.Text(strings.Join(w.Webhooks, " · "))))
	}
	if w.refused() {
		return append(out, m.refusal(w)...)
	}
	out = append(out, m.stage("storage", m.storage(w)))
	return append(out, m.watchers(w)...)
}

func (m *Model) heading(w Write) string {
	s := m.common.Styles
	h := fmt.Sprintf("%s %s  HTTP %d in %s", common.Render(s.Bold, w.Verb), common.Text(w.Resource+" "+objectName(w)), w.Code, fmtDuration(w.Duration))
	if w.Key != "" {
		h += "  " + common.Render(s.Faint, w.Key)
	}
	return common.Fit(h, m.width)
}

// label is a stage's name, in a column of its own.
func (m *Model) label(name string) string {
	return " " + m.common.Styles.Key.Render(common.Pad(name, labelWidth))
}

// stage is a row: the stage's name and content, already terminal text.
func (m *Model) stage(name, content string) string {
	return common.Fit(m.label(name)+content, m.width)
}

func (m *Model) authentication(w Write) string {
	user := w.User
	if user == "" {
		user = "(no user)"
	}
	line := common.Render(m.common.Styles.Bold, user)
	if w.Authentication != "" {
		line += " by " + common.Text(w.Authentication)
	}
	if len(w.Groups) > 0 {
		line += " · groups " + common.Text(strings.Join(w.Groups, ", "))
	}
	return line
}

// authorization is the decision and its reason. kube-apiserver asks a
// privileged-group authorizer for system:masters ahead of Node and RBAC,
// and it allows with no reason (authorizerfactory.NewPrivilegedGroups).
func (m *Model) authorization(w Write) string {
	s := m.common.Styles
	style := s.Added
	if w.Decision != "allow" {
		style = s.Deleted
	}
	d := common.Render(style, w.Decision)
	switch {
	case w.Reason != "":
		return d + ": " + common.Text(w.Reason)
	case w.Decision == "allow" && slices.Contains(w.Groups, "system:masters"):
		return d + ": system:masters bypasses RBAC"
	}
	return d
}

// admission is a row for each admission phase, in the order they ran.
func (m *Model) admission(w Write) []string {
	var phases []string
	byPhase := map[string][]Admission{}
	for _, a := range w.Admission {
		if _, ok := byPhase[a.Phase]; !ok {
			phases = append(phases, a.Phase)
		}
		byPhase[a.Phase] = append(byPhase[a.Phase], a)
	}
	if len(phases) == 0 {
		if w.refused() {
			return nil // refused before admission
		}
		return []string{m.stage("admission", "no plugin ran")}
	}
	var out []string
	for i, p := range phases {
		name := ""
		if i == 0 {
			name = "admission"
		}
		rows := wrap(m.label(name), m.phase(p, byPhase[p], w.Why), ", ", m.width)
		if len(rows) > phaseRows {
			rows = rows[:phaseRows]
			rows[phaseRows-1] = common.Fit(rows[phaseRows-1]+" …", m.width)
		}
		out = append(out, rows...)
	}
	return out
}

// phase is what one admission phase did, as parts of a list: how many
// plugins ran and for how long, which refused the write (with its message,
// unless the refusal row below says the same), and which changed the
// object, one part each, so that a long list wraps between names.
func (m *Model) phase(name string, steps []Admission, why string) []string {
	s := m.common.Styles
	var took time.Duration
	var mutated, refusals []string
	for _, a := range steps {
		took += a.Duration
		if a.Mutated {
			mutated = append(mutated, common.Text(a.Plugin))
		}
		if a.Refusal != "" {
			r := a.Plugin + " refused"
			if a.Refusal != why {
				r += ": " + a.Refusal
			}
			refusals = append(refusals, common.Render(s.Deleted, r))
		}
	}
	parts := append([]string{fmt.Sprintf("%s: %d ran in %s", common.Text(name), len(steps), fmtDuration(took))}, refusals...)
	if len(refusals) == 0 && name != "mutating" && len(mutated) == 0 {
		parts = append(parts, "all passed")
	}
	switch {
	case len(mutated) > 0:
		mutated[0] = fmt.Sprintf("%d changed the object: %s", len(mutated), mutated[0])
		parts = append(parts, mutated...)
	case name == "mutating":
		parts = append(parts, "none changed the object")
	}
	return parts
}

// refusal is the stage that refused the write and why, wrapped: the reason
// is what the reader came for.
func (m *Model) refusal(w Write) []string {
	text := "refused"
	if w.RefusedAt != "" {
		text += " at " + w.RefusedAt
	}
	if w.Why != "" {
		text += ": " + w.Why
	}
	rows := strings.Split(ansi.Wrap(common.Text(text), max(m.width-3, 1), ""), "\n")
	for i, r := range rows {
		indent := "   "
		if i == 0 {
			indent = " "
		}
		rows[i] = indent + m.common.Styles.Deleted.Render(r)
	}
	return rows
}

// storage is the way from the encoded object to its revision: the etcd
// transaction runs on the leader, which commits it once a majority of the
// members has the Raft entry.
func (m *Model) storage(w Write) string {
	s := m.common.Styles
	leader := "the leader"
	for _, mb := range m.members {
		if mb.Leader {
			leader = common.Text(mb.Name)
		}
	}
	var steps []string
	if w.Encoding != "" {
		steps = append(steps, common.Text(w.Encoding))
	}
	steps = append(steps, "etcd txn on "+leader+" (Raft to a majority)")
	outcome := s.Added.Render(fmt.Sprintf("committed at revision %d", w.Revision))
	if w.Revision == 0 {
		outcome = s.Faint.Render("no revision in the answer")
	}
	return strings.Join(append(steps, outcome), " → ")
}

// watchers are the components that received the write's revision. Only
// the demo's components report what their informers receive, each for the
// resources it watches, so a write none reacted to is waiting for them only
// while none has received a later revision; past that, or older than the
// reactions kept, nothing more is known of it.
func (m *Model) watchers(w Write) []string {
	if w.Revision == 0 {
		return nil
	}
	rs := m.reactions[w.Revision]
	faint := m.common.Styles.Faint
	switch {
	case len(rs) == 0 && len(m.revs) > 0 && w.Revision < m.revs[0]:
		return nil
	case len(rs) == 0 && m.reached > w.Revision:
		return []string{m.stage("watchers", faint.Render(fmt.Sprintf("no reporting watcher reacted to it; they are at revision %d", m.reached)))}
	case len(rs) == 0:
		return []string{m.stage("watchers", faint.Render(fmt.Sprintf("none has received revision %d yet", w.Revision)))}
	}
	var names []string
	seen := map[string]bool{}
	for _, r := range rs {
		label := r.Component
		if r.Detail != "" {
			label += " (" + r.Detail + ")"
		}
		if !seen[label] {
			seen[label] = true
			names = append(names, common.Text(label))
		}
	}
	names[0] = fmt.Sprintf("revision %d reached %s", w.Revision, names[0])
	return wrap(m.label("watchers"), names, " · ", m.width)
}

// wrap joins parts with sep after prefix into rows of at most width cells;
// a part that does not fit goes on below, under the first, and the row it
// leaves ends with sep. A part too wide for any row is cut where it is:
// a row of its own would only push the rows below it off the pane.
func wrap(prefix string, parts []string, sep string, width int) []string {
	indent := strings.Repeat(" ", ansi.StringWidth(prefix))
	var rows []string
	row := prefix
	for i, p := range parts {
		if i > 0 && ansi.StringWidth(row+sep+p) > width && ansi.StringWidth(indent+p) <= width {
			rows = append(rows, common.Fit(row+strings.TrimRight(sep, " "), width))
			row = indent + p
			continue
		}
		if i > 0 {
			row += sep
		}
		row += p
	}
	return append(rows, common.Fit(row, width))
}

func fmtDuration(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%dµs", d.Microseconds())
	case d < time.Second:
		return fmt.Sprintf("%.1fms", float64(d.Microseconds())/1000)
	}
	return fmt.Sprintf("%.2fs", d.Seconds())
}

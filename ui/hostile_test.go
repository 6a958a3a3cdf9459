package ui

import (
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/etcdscope/etcdscope/ui/common"
	"github.com/etcdscope/etcdscope/ui/uitest"
	"github.com/etcdscope/etcdscope/ui/writepath"
)

// hostileFeed is two writes whose every string holds uitest.Hostile, as
// anyone who may send a request can make them (a refused write's name is
// whatever the request said): one refused, then one committed and received
// by a watcher whose name holds it too, on members whose names do.
func hostileFeed() writepath.Feed {
	h := uitest.Hostile
	hostileWrite := func(code int, rev int64) writepath.Write {
		return writepath.Write{Duration: time.Millisecond, Verb: "update" + h, Resource: "configmaps" + h, Namespace: "default" + h,
			Name: "motd" + h, User: "mallory" + h, Groups: []string{"devs" + h, "system:authenticated" + h},
			Authentication: "x509" + h, Decision: "allow" + h, Reason: "RBAC" + h,
			Admission: []writepath.Admission{
				{Plugin: "Mutator" + h, Phase: "mutating" + h, Mutated: true, Refusal: "no" + h},
				{Plugin: "Validator" + h, Phase: "validating" + h, Refusal: "no" + h},
			},
			Webhooks: []string{"hook: " + h, "policy: " + h}, Key: uitest.MotdKey + h, Encoding: "protobuf" + h,
			Revision: rev, Code: code}
	}
	refused := hostileWrite(403, 0)
	refused.RefusedAt, refused.Why = "authorization"+h, "forbidden"+h
	writes := make(chan writepath.Write, 2)
	writes <- refused
	writes <- hostileWrite(200, 13)
	reactions := make(chan writepath.Reaction, 1)
	reactions <- writepath.Reaction{Revision: 13, Component: "controller" + h, Detail: h}
	return writepath.Feed{Writes: writes, Reactions: reactions, Note: "kubeconfig " + h, Members: func() []writepath.Member {
		return []writepath.Member{{Name: "etcd-0" + h, Running: true, Leader: true, Applied: 40}, {Name: "etcd-1" + h}}
	}}
}

// visit is a way to a screen, and what it shows of uitest.Hostile, escaped.
type visit struct {
	name string
	run  func(t *testing.T, tm *teatest.TestModel, src *uitest.Source)
	want []string
}

// inMode opens key in the object pane and presses mode, if any, whose view
// shows shown.
func inMode(key, mode, shown string) func(*testing.T, *teatest.TestModel, *uitest.Source) {
	return func(t *testing.T, tm *teatest.TestModel, _ *uitest.Source) {
		tm.Send(common.OpenObjectMsg{Key: key, Focus: true})
		waitScreen(t, tm, "  yaml")
		if mode != "" {
			typeText(tm, mode)
			waitScreen(t, tm, shown)
		}
	}
}

// changeMotd changes the hostile ConfigMap under the tail, after a note.
func changeMotd(t *testing.T, tm *teatest.TestModel, src *uitest.Source) {
	typeText(tm, "2")
	waitScreen(t, tm, "waiting for events")
	src.Notify("resumed after " + uitest.Hostile)
	src.PutObject(uitest.Motd("bye "))
	waitScreen(t, tm, "MODIFIED", "data.")
}

// hostileScreens are every screen, reached over hostile data.
func hostileScreens() []visit {
	h := uitest.Hostile
	return []visit{
		{"browse", func(t *testing.T, tm *teatest.TestModel, _ *uitest.Source) {
			command(tm, "key /registry/configmaps/")
			waitScreen(t, tm, "kube-system/")
			typeText(tm, "j")
			press(tm, tea.KeyEnter)
			waitScreen(t, tm, `# `)
		}, []string{`x\x1b]0;pwned\x07`, `/registry/configmaps/evil\x1b[2J/`}},
		{"object yaml", inMode(uitest.MotdKey, "", ""), []string{"pwned"}},
		{"object json", inMode(uitest.MotdKey, "o", "  json"), []string{"pwned"}},
		{"object raw", inMode(uitest.HostileKey, "b", "  raw"), []string{`|.]0;pwned..]52;c|`}},
		{"object etcd", inMode(uitest.HostileKey, "e", "  etcd"), []string{"pwned"}},
		{"object managedFields", inMode(uitest.MotdKey, "m", "managedFields shown"), []string{"pwned"}},
		{"object of a hostile key", inMode(uitest.HostileKey, "", ""), []string{"pwned"}},
		{"tail", changeMotd, []string{`resumed after \x1b]0;pwned\x07`, "data."}},
		{"tail diff", func(t *testing.T, tm *teatest.TestModel, src *uitest.Source) {
			changeMotd(t, tm, src)
			press(tm, tea.KeyEnter)
			waitScreen(t, tm, "@@")
		}, []string{"pwned", "+"}},
		{"tail note in the status line", func(t *testing.T, tm *teatest.TestModel, src *uitest.Source) {
			changeMotd(t, tm, src)
			src.Notify("leader changed to " + h)
			waitScreen(t, tm, "leader changed to")
			press(tm, tea.KeyEnter)
			waitScreen(t, tm, "• leader changed to")
		}, []string{`• leader changed to \x1b]0;pwned\x07`}},
		{"history", func(t *testing.T, tm *teatest.TestModel, src *uitest.Source) {
			src.PutObject(uitest.Motd("bye "))
			tm.Send(common.OpenHistoryMsg{Key: uitest.MotdKey})
			waitScreen(t, tm, "diff revision")
		}, []string{"pwned", "data."}},
		{"cluster", func(t *testing.T, tm *teatest.TestModel, _ *uitest.Source) {
			typeText(tm, "4")
			waitScreen(t, tm, "unreachable")
		}, []string{`etcd-0\x1b]0;pwned\x07`, `dial: \x1b]0;pwned\x07`, `fixture \x1b]0;pwned\x07`}},
		{"check members", func(t *testing.T, tm *teatest.TestModel, _ *uitest.Source) {
			typeText(tm, "4c")
			// The description is long: the line that says one store is cut.
			waitScreen(t, tm, "esc stop check", "\nfixture ")
		}, []string{"\n" + `fixture \x1b]0;pwned\x07`}},
		{"each member's value", func(t *testing.T, tm *teatest.TestModel, _ *uitest.Source) {
			tm.Send(common.OpenMemberValuesMsg{Key: uitest.HostileKey})
			waitScreen(t, tm, "the value, the same")
		}, []string{`on each member`, "pwned"}},
		{"restore", func(t *testing.T, tm *teatest.TestModel, src *uitest.Source) {
			src.PutObject(uitest.Motd("bye "))
			tm.Send(common.RestoreMsg{Key: uitest.MotdKey, Rev: 1})
			waitScreen(t, tm, "kubectl apply -f -")
		}, []string{"pwned"}},
		{"write path", func(t *testing.T, tm *teatest.TestModel, _ *uitest.Source) {
			typeText(tm, "5")
			waitScreen(t, tm, "revision 13 reached")
		}, []string{`mallory\x1b]0;pwned\x07`, `allow\x1b]0;pwned\x07`, `mutating\x1b]0;pwned\x07`, `hook: \x1b]0;pwned\x07`,
			`protobuf\x1b]0;pwned\x07`, `controller\x1b]0;pwned\x07`}},
		{"write path refusal", func(t *testing.T, tm *teatest.TestModel, _ *uitest.Source) {
			typeText(tm, "5")
			waitScreen(t, tm, "revision 13 reached")
			typeText(tm, "j")
			waitScreen(t, tm, "refused at")
		}, []string{`403 authorization\x1b]0;pwn`, `validating\x1b]0;pwned\x07`, `  authorization\x1b]0;pwned\x07`}},
		{"help", func(t *testing.T, tm *teatest.TestModel, _ *uitest.Source) {
			typeText(tm, "?")
			waitScreen(t, tm, "command line")
		}, []string{`leader etcd-0\x1b]0;pwned\x07`}},
		{"object error", func(t *testing.T, tm *teatest.TestModel, _ *uitest.Source) {
			tm.Send(common.OpenObjectMsg{Key: "/registry/configmaps/default/gone\x1b]0;pwned\x07", Focus: true})
			waitScreen(t, tm, "does not exist")
		}, []string{`gone\x1b]0;pwned\x07`}},
		{"history error", func(t *testing.T, tm *teatest.TestModel, _ *uitest.Source) {
			tm.Send(common.OpenHistoryMsg{Key: "/registry/configmaps/default/gone" + h})
			waitScreen(t, tm, "✗ no revision of")
		}, []string{`✗ no revision of "/registry/configmaps/default/gone\x1b]0;pwned\a`}},
	}
}

// TestStoredDataCannotDriveTheTerminal shows every screen over keys, values,
// annotations, members, writes, notes and errors that hold uitest.Hostile:
// with lipgloss drawing no colour, nothing on the screen may be a byte or a
// rune a terminal acts on, and the hostile text shows, escaped.
func TestStoredDataCannotDriveTheTerminal(t *testing.T) {
	h := uitest.Hostile
	for _, sc := range hostileScreens() {
		t.Run(sc.name, func(t *testing.T) {
			src := uitest.HostileFixture()
			tm := startOn(t, 140, 40, Options{Source: src, Description: "etcd at " + h, WritePath: hostileFeed()})
			waitScreen(t, tm, "pods/", "etcd-0")
			sc.run(t, tm, src)
			got := finalView(t, tm)
			if bad := uitest.Active(got); len(bad) > 0 {
				t.Errorf("the screen holds what a terminal acts on: %s\n%s", strings.Join(bad, "; "), got)
			}
			for _, w := range append(sc.want, `etcd at \x1b]0;pwned\x07`) {
				if !strings.Contains(got, w) {
					t.Errorf("the screen does not show %q:\n%s", w, got)
				}
			}
		})
	}
}

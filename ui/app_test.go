package ui

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/etcdscope/etcdscope/ui/common"
	"github.com/etcdscope/etcdscope/ui/uitest"
)

// updateOf is m.Update for uitest, which drives a pane's Update.
func updateOf(m *Model) func(tea.Msg) tea.Cmd {
	return func(msg tea.Msg) tea.Cmd {
		_, cmd := m.Update(msg)
		return cmd
	}
}

func appOn(src *uitest.Source) *Model {
	m := sized(src, 100)
	m.Update(m.browse.tree.Init()())
	return m
}

func TestCommandLine(t *testing.T) {
	tests := []struct {
		line string
		want []string
	}{
		{"deploy default", []string{"/registry/deployments/default/", "web"}},
		{"key /registry/pods/default/web-0", []string{"web-0  rev 12", "status:"}},
		{"rev 11", []string{"@rev 11"}},
		{"rev 3", []string{"cannot read revision 3", "compacted"}},
		{"nosuch", []string{`"nosuch" is no command`}},
		// kubectl's namespace flags, as a kubectl user types them.
		{"pods -A", []string{"/registry/pods/ ", "default/", "kube-system/"}},
		{"pods --all-namespaces", []string{"/registry/pods/ ", "default/", "kube-system/"}},
		{"pods -n kube-system", []string{"/registry/pods/kube-system/", "coredns-0"}},
		{"pods --namespace=kube-system", []string{"/registry/pods/kube-system/", "coredns-0"}},
		{"pods -x", []string{":pods takes a namespace (:pods kube-system, :pods -n kube-system) or -A"}},
		{"pods -n", []string{":pods takes a namespace"}},
		{"pods default extra", []string{":pods takes a namespace"}},
		{"nodes -A", []string{"/registry/minions/"}},
	}
	for _, tc := range tests {
		src := uitest.Fixture()
		src.Compact(5)
		m := appOn(src)
		update := updateOf(m)
		uitest.Press(t, update, ":")
		uitest.Type(t, update, tc.line)
		uitest.Press(t, update, "enter")
		got := m.View()
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf(":%s: no %q in\n%s", tc.line, w, got)
			}
		}
	}
}

func TestMemberKeysOutsideBundledModeSayWhy(t *testing.T) {
	m := New(context.Background(), Options{Source: uitest.Fixture(), MembersOff: "etcdscope never writes to a live etcd", Tick: new(uitest.Clock).Tick})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	update := updateOf(m)
	uitest.Drive(t, update, m.cluster.Init())
	uitest.Press(t, update, "4", "k")
	if got := m.View(); !strings.Contains(got, "never writes to a live etcd") {
		t.Errorf("k outside bundled mode:\n%s", got)
	}
}

// TestScreenKeysAndHelp: each digit shows its screen, its tab marked among
// the others, and the help screen lists every screen's key and keys.
func TestScreenKeysAndHelp(t *testing.T) {
	m := appOn(uitest.Fixture())
	update := updateOf(m)
	tabs := []string{"browse", "tail", "history", "cluster", "write path", "space", "timeline"}
	for i, name := range tabs {
		uitest.Press(t, update, strconv.Itoa(i+1))
		got := m.View()
		for j, other := range tabs {
			want := fmt.Sprintf(" %d %s ", j+1, other)
			if j == i {
				want = fmt.Sprintf("[%d %s]", j+1, other)
			}
			if !strings.Contains(got, want) {
				t.Errorf("%d (%s): no tab %q in\n%s", i+1, name, want, got)
			}
		}
	}
	m.Update(tea.WindowSizeMsg{Width: 200, Height: 50}) // room for every line of help
	uitest.Press(t, update, "1", "?")
	got := m.View()
	for _, want := range []string{"move (every list)", "space (what fills etcd)", "timeline (what changed)", "browse: tree", "browse: object", "write path", "browse: owners", "owners and dependents"} {
		if !strings.Contains(got, want) {
			t.Errorf("?: no %q in\n%s", want, got)
		}
	}
	if strings.Contains(got, "[1 browse]") {
		t.Errorf("?: the help screen marks the browse tab:\n%s", got)
	}
}

// burst is what bubbletea makes of keys that arrive in one read: the
// printable runes up to a space or a control key in one message, a space
// or a control key on its own (detectOneMsg, in its key.go).
func burst(keys string) []tea.KeyMsg {
	var out []tea.KeyMsg
	var run []rune
	flush := func() {
		if len(run) > 0 {
			out = append(out, tea.KeyMsg{Type: tea.KeyRunes, Runes: run})
			run = nil
		}
	}
	for _, r := range keys {
		switch r {
		case ' ':
			flush()
			out = append(out, tea.KeyMsg{Type: tea.KeySpace, Runes: []rune{' '}})
		case '\r', '\t':
			flush()
			out = append(out, tea.KeyMsg{Type: map[rune]tea.KeyType{'\r': tea.KeyEnter, '\t': tea.KeyTab}[r]})
		default:
			run = append(run, r)
		}
	}
	flush()
	return out
}

// feed hands msg to m and drives the commands it returns.
func feed(t *testing.T, m *Model, msg tea.Msg) {
	t.Helper()
	uitest.Drive(t, updateOf(m), common.Send(msg))
}

func TestKeysReadInOneBurstActAsTypedOneByOne(t *testing.T) {
	for _, keys := range []string{":pods kube-system\r", "jjj", "/pods\rj", "2/web-0\r", "3?"} {
		t.Run(keys, func(t *testing.T) { typedTogetherAsOneByOne(t, keys) })
	}
}

func typedTogetherAsOneByOne(t *testing.T, keys string) {
	oneByOne, together := appOn(uitest.Fixture()), appOn(uitest.Fixture())
	for _, r := range keys {
		for _, msg := range burst(string(r)) {
			feed(t, oneByOne, msg)
		}
	}
	for _, msg := range burst(keys) {
		feed(t, together, msg)
	}
	if want, got := oneByOne.View(), together.View(); got != want {
		t.Errorf("%q in one read:\n%s\nwant, as typed one key at a time:\n%s", keys, got, want)
	}
}

func TestCommandTypedInOneBurstRuns(t *testing.T) {
	tm, _ := newTest(t, 100, 30)
	waitScreen(t, tm, "pods/", "etcd-0 ★")
	for _, msg := range burst(":pods kube-system") {
		tm.Send(msg)
	}
	press(tm, tea.KeyEnter)
	waitScreen(t, tm, "/registry/pods/kube-system/", "coredns-0")
	if got := finalView(t, tm); !strings.Contains(got, "/registry/pods/kube-system/") {
		t.Errorf("the command typed in one burst did not open the level:\n%s", got)
	}
}

func TestFailuresBesideTheSourceShowInTheFlashLine(t *testing.T) {
	errs := make(chan error, 2)
	m := New(context.Background(), Options{Source: uitest.Fixture(), Errors: errs, Tick: new(uitest.Clock).Tick})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	errs <- errors.New("demo: kube-scheduler: bind web-0 to node-1: refused")
	errs <- errors.New("the API server stopped: it no longer serves")
	close(errs)
	uitest.Drive(t, updateOf(m), m.awaitFailure())
	if got := m.View(); !strings.Contains(got, "✗ the API server stopped: it no longer serves") {
		t.Errorf("the last failure is not in the flash line:\n%s", got)
	}
}

// Flashes asked for by a pane arrive as their commands finish, in any
// order: the flash line ends on the one asked for last, as two quick >
// keys end on the second's speed.
func TestTheFlashLineEndsOnTheLastFlashAskedFor(t *testing.T) {
	m := New(context.Background(), Options{Source: uitest.Fixture(), Tick: new(uitest.Clock).Tick})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	first, second := common.Flash("replay at 10× speed"), common.Flash("replay at max speed")
	m.Update(second())
	m.Update(first())
	if !strings.Contains(m.View(), "replay at max speed") {
		t.Errorf("the flash line after two flashes arrived out of order:\n%s", m.View())
	}
	// The app's own flash, asked for after a pane's, stays over it too.
	late := common.FlashErr(errors.New("a pane's error"))
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{']'}})
	m.Update(late())
	if got := m.View(); strings.Contains(got, "a pane's error") || !strings.Contains(got, "move through a recording") {
		t.Errorf("a pane's flash asked for before the app's covered it:\n%s", got)
	}
	// A flash whose order is not known is shown when it comes.
	m.Update(common.FlashMsg{Text: "cannot read revision 9"})
	if !strings.Contains(m.View(), "cannot read revision 9") {
		t.Errorf("a flash made without a number is not shown:\n%s", m.View())
	}
}

func TestTheHeaderSaysWhenTheControlPlaneIsReady(t *testing.T) {
	ready := make(chan struct{})
	m := New(context.Background(), Options{Source: uitest.Fixture(), ControlPlaneReady: ready, Tick: new(uitest.Clock).Tick})
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 30})
	if got := m.View(); !strings.Contains(got, "control plane starting…") {
		t.Errorf("before /readyz, the header does not say the control plane is starting:\n%s", got)
	}
	close(ready)
	uitest.Drive(t, updateOf(m), m.awaitControlPlane())
	if got := m.View(); !strings.Contains(got, "control plane ready") || strings.Contains(got, "starting…") {
		t.Errorf("after /readyz, the header does not say the control plane is ready:\n%s", got)
	}
	if got := New(context.Background(), Options{Source: uitest.Fixture()}).View(); strings.Contains(got, "control plane") {
		t.Errorf("without a control plane, the header mentions one:\n%s", got)
	}
}

// TestOwnersRightAfterAJump: O pressed while the tree is still moving to
// the key :key named is the owners of that key, not of the row the tree
// had selected before (a directory, here).
func TestOwnersRightAfterAJump(t *testing.T) {
	m := appOn(uitest.Fixture())
	for _, k := range burst(":key /registry/pods/default/web-0") {
		m.Update(k)
	}
	m.Update(tea.KeyMsg{Type: tea.KeyEnter}) // the tree's read is left unrun
	if !m.browse.tree.Moving() {
		t.Fatal("the tree is not moving to the key")
	}
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("O")})
	if v := m.View(); !strings.Contains(v, "owners of /registry/pods/default/web-0") {
		t.Errorf("O right after :key shows\n%s", v)
	}
}

// TestStartsAtTheRevisionAsked: Options.Rev (etcdscope --rev) opens the
// explorer as :rev does, and a compacted one says so and stays at the
// newest.
func TestStartsAtTheRevisionAsked(t *testing.T) {
	src := uitest.Fixture()
	src.Compact(5)
	tm := startOn(t, 120, 30, Options{Source: src, Description: "fixture store", Rev: 11})
	waitScreen(t, tm, "@rev 11", "browsing as of revision 11")
	tm = startOn(t, 120, 30, Options{Source: src, Description: "fixture store", Rev: 3})
	waitScreen(t, tm, "cannot read revision 3", "compacted")
}

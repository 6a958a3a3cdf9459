package writepath

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/etcdscope/etcdscope/ui/common"
	"github.com/etcdscope/etcdscope/ui/uitest"
	"github.com/muesli/termenv"
)

func init() { lipgloss.SetColorProfile(termenv.Ascii) }

// write is a traced create of ConfigMap default/NAME committed at rev.
func write(name string, rev int64) Write {
	return Write{
		Verb: "create", Resource: "configmaps", Namespace: "default", Name: name, User: "kubernetes-admin",
		Key: "/registry/configmaps/default/" + name, Revision: rev, Code: 201,
		Stages: []Stage{
			{"authn", 2 * time.Microsecond}, {"authz", 3 * time.Microsecond}, {"mutate", 10 * time.Microsecond},
			{"validate", 40 * time.Microsecond}, {"encode", 15 * time.Microsecond}, {"etcd txn", 4 * time.Millisecond},
		},
	}
}

// open is a focused pane of 140x30 on a live feed (the channels are never
// read: the test hands the pane its messages).
func open() *Model {
	m := New(uitest.Common(uitest.New()), Feed{Writes: make(chan Write), Reactions: make(chan Reaction)})
	m.SetSize(140, 30)
	m.Focus(true)
	m.Update(MembersMsg{Members: []Member{
		{Name: "etcd-0", Running: true, Applied: 120},
		{Name: "etcd-1", Running: true, Leader: true, Applied: 121},
		{Name: "etcd-2", Running: false},
	}})
	return m
}

func TestSelectedWriteShowsTheWritePathStageByStage(t *testing.T) {
	m := open()
	m.Update(WritesMsg{Writes: []Write{write("a", 120), write("b", 121)}})
	m.Update(ReactionsMsg{Reactions: []Reaction{{Revision: 121, Component: "kube-proxy"}, {Revision: 121, Component: "endpoints controller"}}})
	got := m.View()
	for _, want := range []string{
		"etcd-1 applied 121 ★",
		"> 121", // the newest write is first and selected
		"kubernetes-admin → authn 2µs → authz 3µs → mutate 10µs → validate 40µs → encode 15µs → etcd txn on etcd-1 (Raft to a majority) 4.0ms",
		"committed at revision 121",
		"watchers that received revision 121:",
		"endpoints controller · kube-proxy",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("write path lacks %q:\n%s", want, got)
		}
	}
}

func TestCursorStaysOnItsWriteAsNewerOnesArrive(t *testing.T) {
	m := open()
	m.Update(WritesMsg{Writes: []Write{write("a", 10), write("b", 11), write("c", 12)}})
	uitest.Press(t, m.Update, "j")
	if w, _ := m.selected(); w.Name != "b" {
		t.Fatalf("j selected %s, want b", w.Name)
	}
	m.Update(WritesMsg{Writes: []Write{write("d", 13), write("e", 14)}})
	if w, _ := m.selected(); w.Name != "b" {
		t.Errorf("after two new writes the cursor is on %s, want b", w.Name)
	}
}

func TestEnterOpensTheObjectAtItsRevision(t *testing.T) {
	m := open()
	m.Update(WritesMsg{Writes: []Write{write("a", 42)}})
	cmd := m.Update(uitest.Key("enter"))
	if cmd == nil {
		t.Fatal("enter sent nothing")
	}
	msg, ok := cmd().(common.OpenObjectMsg)
	if !ok || msg.Key != "/registry/configmaps/default/a" || msg.Rev != 42 {
		t.Errorf("enter sent %#v, want the object at revision 42", msg)
	}
}

func TestFailedWriteSaysItWasNotCommitted(t *testing.T) {
	m := open()
	w := write("dup", 0)
	w.Code, w.Stages = 409, w.Stages[:5]
	m.Update(WritesMsg{Writes: []Write{w}})
	if got := m.View(); !strings.Contains(got, "not committed (HTTP 409)") {
		t.Errorf("a 409 does not say so:\n%s", got)
	}
}

func TestPausedPaneCountsButKeepsItsRows(t *testing.T) {
	m := open()
	m.Update(WritesMsg{Writes: []Write{write("a", 1)}})
	uitest.Press(t, m.Update, "p")
	m.Update(WritesMsg{Writes: []Write{write("b", 2)}})
	if m.Total() != 2 || strings.Contains(m.View(), "default/b") {
		t.Errorf("paused: %d writes counted, screen:\n%s", m.Total(), m.View())
	}
}

func TestWithoutAnAPIServerThePaneSaysWhy(t *testing.T) {
	m := New(uitest.Common(uitest.New()), Feed{Note: "the write path shows in bundled mode"})
	m.SetSize(100, 20)
	if m.Init() != nil || !strings.Contains(m.View(), "the write path shows in bundled mode") {
		t.Errorf("no feed: %q", m.View())
	}
}

func TestViewLeavesTheModelAsItWas(t *testing.T) {
	m := open()
	m.Update(WritesMsg{Writes: []Write{write("a", 121)}})
	m.Update(ReactionsMsg{Reactions: []Reaction{
		{Revision: 121, Component: "scheduler"}, {Revision: 121, Component: "kube-proxy"}, {Revision: 121, Component: "endpoints controller"},
	}})
	before := slices.Clone(m.reactions[121])
	cursor, writes := m.cursor, slices.Clone(m.writes)
	got := m.View()
	if !slices.Equal(before, m.reactions[121]) || m.cursor != cursor || !reflect.DeepEqual(writes, m.writes) {
		t.Errorf("View changed the model: reactions %v, were %v", m.reactions[121], before)
	}
	if !strings.Contains(got, "endpoints controller · kube-proxy · scheduler") {
		t.Errorf("watchers not listed by name:\n%s", got)
	}
}

func TestWritesWaitingOnTheFeedShowNewestFirst(t *testing.T) {
	writes := make(chan Write, 3)
	for i, name := range []string{"a", "b", "c"} {
		writes <- write(name, int64(10+i))
	}
	close(writes)
	m := New(uitest.Common(uitest.New()), Feed{Writes: writes})
	m.SetSize(140, 30)
	uitest.Drive(t, m.Update, m.Init())
	got := m.View()
	c, b, a := strings.Index(got, "default/c"), strings.Index(got, "default/b"), strings.Index(got, "default/a")
	if m.Total() != 3 || a < 0 || !(c < b && b < a) {
		t.Errorf("%d writes received; want 3, newest first:\n%s", m.Total(), got)
	}
}

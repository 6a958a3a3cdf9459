package tail

import (
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/ui/common"
	"github.com/etcdscope/etcdscope/ui/uitest"
	"github.com/muesli/termenv"
)

func init() { lipgloss.SetColorProfile(termenv.Ascii) }

func batch(from, n int) BatchesMsg {
	var b etcdview.Batch
	for i := from; i < from+n; i++ {
		kv := etcdview.KV{Key: fmt.Sprintf("/registry/pods/ns-%d/p-%d", i%2, i), Value: []byte("v"), ModRevision: int64(i)}
		b.Events = append(b.Events, etcdview.Event{Type: etcdview.Added, KV: kv})
		b.Revision = int64(i)
	}
	return BatchesMsg{Batches: []etcdview.Batch{b}}
}

func newTail(capacity int) *Model {
	m := New(uitest.Common(uitest.Fixture()), capacity, nil)
	m.SetSize(120, 12)
	m.Focus(true)
	return m
}

func TestRingDropsTheOldestAndCountsThem(t *testing.T) {
	r := NewRing(3)
	for i := range 5 {
		r.Push(Row{Rev: int64(i)})
	}
	if r.Len() != 3 || r.Dropped() != 2 || r.At(r.First()).Rev != 2 || r.At(4).Rev != 4 || r.Holds(1) {
		t.Errorf("len %d dropped %d first rev %d", r.Len(), r.Dropped(), r.At(r.First()).Rev)
	}
}

func TestFollowShowsTheNewest(t *testing.T) {
	m := newTail(100)
	m.Update(batch(1, 50))
	got := m.View()
	if !strings.Contains(got, "> 50") || !strings.Contains(got, "50 events, 50 kept of 100, 0 dropped") {
		t.Errorf("following:\n%s", got)
	}
}

func TestPauseKeepsTheScreenAndCountsNewRows(t *testing.T) {
	m := newTail(100)
	m.Update(batch(1, 20))
	uitest.Press(t, m.Update, " ")
	before := m.View()
	m.Update(batch(21, 30))
	after := m.View()
	if !strings.Contains(after, "PAUSED, 30 new") {
		t.Errorf("no count of new rows:\n%s", after)
	}
	if rows(before) != rows(after) {
		t.Errorf("the rows moved while paused:\n%s\n---\n%s", before, after)
	}
	uitest.Press(t, m.Update, "f")
	if !strings.Contains(m.View(), "> 50") {
		t.Errorf("f did not follow:\n%s", m.View())
	}
}

// rows drops the status line, which counts on while paused.
func rows(view string) string {
	_, rest, _ := strings.Cut(view, "\n")
	return rest
}

func TestPausedCursorStaysOnItsRowAsTheRingWraps(t *testing.T) {
	m := newTail(10)
	m.Update(batch(1, 10))
	uitest.Press(t, m.Update, "k", "k")
	m.Update(batch(11, 3))
	if got := m.ring.At(m.seqAt(m.cursor.Pos)).Rev; got != 8 {
		t.Errorf("cursor on rev %d, want 8", got)
	}
}

func TestFilterByNamespaceAndNotesShowThrough(t *testing.T) {
	m := newTail(100)
	m.Update(batch(1, 10))
	m.Update(BatchesMsg{Batches: []etcdview.Batch{{Revision: 10, Note: "leader changed (Raft term 2 → 3)"}}})
	uitest.Press(t, m.Update, "/")
	uitest.Type(t, m.Update, "ns-1")
	uitest.Press(t, m.Update, "enter")
	got := m.View()
	if strings.Contains(got, "ns-0/") || !strings.Contains(got, "ns-1/p-9") || !strings.Contains(got, "leader changed") {
		t.Errorf("filter ns-1:\n%s", got)
	}
	uitest.Press(t, m.Update, "esc")
	if m.n() != 11 {
		t.Errorf("esc left %d rows, want 11", m.n())
	}
}

func TestEnterShowsTheDiffOfTheRow(t *testing.T) {
	src := uitest.Fixture()
	m := New(uitest.Common(src), 100, nil)
	m.SetSize(120, 40)
	// The test reads the watch and hands its batch over: a reader of the
	// pane's own would wait for the write after.
	watch := src.Watch(t.Context(), Prefix, etcdview.WatchOptions{})
	rev := src.PutObject(uitest.Pod("default", "web-0", "nginx:1.29", true))
	uitest.Drive(t, m.Update, readBatches(m.common, watch, &m.current))
	if got := m.View(); !strings.Contains(got, fmt.Sprint(rev)) || !strings.Contains(got, "spec.containers[0].image nginx:1.2") {
		t.Fatalf("no summary:\n%s", got)
	}
	uitest.Press(t, m.Update, "enter")
	got := m.View()
	if !strings.Contains(got, "-  - image: nginx:1.28") || !strings.Contains(got, "+  - image: nginx:1.29") {
		t.Errorf("diff:\n%s", got)
	}
	uitest.Press(t, m.Update, "esc")
	if m.detail != nil {
		t.Error("esc did not close the diff")
	}
}

// TestSlashStartsAFreshFilterAndEscPutsTheOldBack: / clears the words typed
// before, as k9s' filter does, instead of typing after them; esc cancels
// the new filter and keeps the old one.
func TestSlashStartsAFreshFilterAndEscPutsTheOldBack(t *testing.T) {
	m := newTail(100)
	m.Update(batch(1, 10))
	uitest.Press(t, m.Update, "/")
	uitest.Type(t, m.Update, "ns-1")
	uitest.Press(t, m.Update, "enter", "/")
	if got := m.input.Value(); got != "" {
		t.Fatalf("/ over the filter ns-1 starts with %q in the field, want it empty", got)
	}
	uitest.Type(t, m.Update, "p-4")
	uitest.Press(t, m.Update, "enter")
	if m.filter != "p-4" || m.n() != 1 {
		t.Errorf("the second filter is %q with %d rows, want p-4 alone with 1 row", m.filter, m.n())
	}
	uitest.Press(t, m.Update, "/")
	uitest.Type(t, m.Update, "ns-0")
	uitest.Press(t, m.Update, "esc")
	if got := m.View(); m.filter != "p-4" || !strings.Contains(got, `filter "p-4"`) || m.n() != 1 {
		t.Errorf("esc on a new filter did not put p-4 back: filter %q, %d rows\n%s", m.filter, m.n(), got)
	}
	uitest.Press(t, m.Update, "/", "enter")
	if m.filter != "" || m.n() != 10 {
		t.Errorf("an empty filter entered left %q, %d rows", m.filter, m.n())
	}
}

// TestAKeyScopeIsThatKeyAlone: the tail of one key (t on a key row) does
// not show the keys that merely start with it.
func TestAKeyScopeIsThatKeyAlone(t *testing.T) {
	m := newTail(100)
	m.Update(batch(1, 20))
	m.Update(common.TailPrefixMsg{Prefix: "/registry/pods/ns-1/p-1", Exact: true})
	if got := m.View(); m.n() != 1 || !strings.Contains(got, "key /registry/pods/ns-1/p-1 ") {
		t.Errorf("the tail of p-1 shows %d rows\n%s", m.n(), got)
	}
	m.Update(common.TailPrefixMsg{Prefix: "/registry/pods/ns-1/p-1"})
	if m.n() != 6 { // p-1, p-11, p-13, …, p-19
		t.Errorf("the tail of the prefix p-1 shows %d rows, want 6", m.n())
	}
}

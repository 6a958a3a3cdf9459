package tree

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/etcdscope/etcdscope/ui/common"
	"github.com/etcdscope/etcdscope/ui/uitest"
)

// open is a tree of 60x20 on src with its root read.
func open(t *testing.T, src *uitest.Source) *harness {
	t.Helper()
	h := &harness{Model: New(uitest.Common(src))}
	h.SetSize(60, 20)
	h.drive(h.Init())
	return h
}

func TestOpenLevelThenBack(t *testing.T) {
	m := open(t, uitest.Fixture())
	if got := m.View(); !strings.Contains(got, "pods/") || !strings.Contains(got, "/registry/  10 keys") {
		t.Fatalf("root level:\n%s", got)
	}
	m.press("/", "p", "o", "d", "s", "enter", "enter")
	if m.Prefix() != "/registry/pods/" {
		t.Fatalf("enter on pods/ opened %q", m.Prefix())
	}
	got := m.View()
	for _, want := range []string{"default/", "kube-system/", "/registry/pods/  3 keys"} {
		if !strings.Contains(got, want) {
			t.Errorf("pods level lacks %q:\n%s", want, got)
		}
	}
	m.press("esc")
	if m.Prefix() != Root {
		t.Errorf("esc went to %q, want the root", m.Prefix())
	}
}

func TestFilterRanksFuzzyMatchesAndEscClears(t *testing.T) {
	m := open(t, uitest.Fixture())
	m.press("/", "d", "p", "l")
	if ch, _ := m.Selected(); ch.Name != "deployments/" {
		t.Errorf("filter dpl selects %q, want deployments/", ch.Name)
	}
	if !strings.Contains(m.View(), "/dpl") {
		t.Errorf("the filter line is not shown:\n%s", m.View())
	}
	if !m.Capturing() {
		t.Error("the tree does not capture keys while filtering")
	}
	m.press("esc")
	if m.Capturing() || m.top().rows() != len(m.top().children) {
		t.Errorf("esc left the filter on: capturing %v, %d of %d rows", m.Capturing(), m.top().rows(), len(m.top().children))
	}
}

func TestKeyIntents(t *testing.T) {
	m := open(t, uitest.Fixture())
	m.drive(m.GoTo("/registry/pods/default/web-0"))
	m.press("h", "t", "enter")
	want := []tea.Msg{
		common.OpenHistoryMsg{Key: "/registry/pods/default/web-0"},
		common.TailPrefixMsg{Prefix: "/registry/pods/default/"},
		common.OpenObjectMsg{Key: "/registry/pods/default/web-0", Focus: true},
	}
	if fmt.Sprint(m.msgs) != fmt.Sprint(want) {
		t.Errorf("intents %v, want %v", m.msgs, want)
	}
}

func TestCursorRestPreviewsTheKey(t *testing.T) {
	m := open(t, uitest.Fixture())
	m.drive(m.GoTo("/registry/pods/default/"))
	m.press("j")
	if len(m.msgs) == 0 || fmt.Sprint((m.msgs)[len(m.msgs)-1]) != fmt.Sprint(common.OpenObjectMsg{Key: "/registry/pods/default/web-1"}) {
		t.Errorf("resting on web-1 sent %v", m.msgs)
	}
}

func TestLargeLevelIsPagedAndLoadsMoreNearTheEnd(t *testing.T) {
	src := uitest.New()
	for i := range 3000 {
		src.Put(fmt.Sprintf("/registry/events/default/e-%05d", i), []byte("x"))
	}
	m := open(t, src)
	m.drive(m.GoTo("/registry/events/default/"))
	if got := m.View(); !strings.Contains(got, "3000 keys, 500 loaded") {
		t.Fatalf("the level is not paged:\n%s", got)
	}
	m.press("G")
	if got := len(m.top().children); got != 1000 {
		t.Errorf("after G %d keys are loaded, want 1000", got)
	}
	m.press("G", "G", "G", "G", "G")
	if got := m.View(); !strings.Contains(got, "e-02999") || m.top().next != nil {
		t.Errorf("the last page is not loaded:\n%s", got)
	}
}

func TestTimeTravelShowsTheLevelAsOfTheRevision(t *testing.T) {
	src := uitest.Fixture()
	rev := src.Revision()
	src.Put("/registry/pods/default/web-9", []byte("x"))
	m := open(t, src)
	m.drive(m.GoTo("/registry/pods/default/"))
	if !strings.Contains(m.View(), "web-9") {
		t.Fatal("web-9 missing at head")
	}
	m.drive(m.SetRev(rev))
	if strings.Contains(m.View(), "web-9") {
		t.Errorf("web-9 shown as of revision %d, before it was written:\n%s", rev, m.View())
	}
}

func TestNavigationKeysMoveAndClamp(t *testing.T) {
	m := open(t, uitest.Fixture())
	tests := []struct {
		keys []string
		want int
	}{
		{[]string{"j"}, 1}, {[]string{"j", "k"}, 0}, {[]string{"k"}, 0}, {[]string{"G"}, 6}, {[]string{"G", "g"}, 0},
		{[]string{"ctrl+d"}, 6}, {[]string{"G", "ctrl+u"}, 0}, {[]string{"down", "down", "up"}, 1},
	}
	for _, tc := range tests {
		m.top().cursor.Pos = 0
		m.press(tc.keys...)
		if got := m.top().cursor.Pos; got != tc.want {
			t.Errorf("%v: cursor at %d, want %d", tc.keys, got, tc.want)
		}
	}
}

func TestReloadShowsNewKeysAndKeepsTheCursor(t *testing.T) {
	src := uitest.Fixture()
	m := open(t, src)
	m.press("j", "j")
	before, _ := m.Selected()
	// The new entry sorts first: the cursor must follow its entry, not its row.
	src.Put("/registry/aaa-new/x", []byte("v"))
	m.press("ctrl+r")
	got := m.View()
	if !strings.Contains(got, "aaa-new/") || !strings.Contains(got, "/registry/  11 keys") {
		t.Errorf("ctrl-r did not read the new key:\n%s", got)
	}
	if after, _ := m.Selected(); after.Prefix != before.Prefix {
		t.Errorf("cursor moved from %s to %s on reload", before.Prefix, after.Prefix)
	}
}

func TestAutomaticReloadIsPacedAndOnlyAtHead(t *testing.T) {
	m := open(t, uitest.Fixture())
	now := m.loadedAt
	if m.ReloadDue(now) {
		t.Error("a reload is due right after a read")
	}
	if !m.ReloadDue(now.Add(autoReloadEvery)) {
		t.Errorf("no reload due %v after the last read", autoReloadEvery)
	}
	m.took = time.Second
	if m.ReloadDue(now.Add(autoReloadEvery)) {
		t.Error("a level that took 1s to read is reloaded after 2s")
	}
	m.took = 0
	m.drive(m.SetRev(3))
	if m.ReloadDue(now.Add(time.Hour)) {
		t.Error("a reload is due while browsing an old revision")
	}
}

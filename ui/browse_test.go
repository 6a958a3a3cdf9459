package ui

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/ui/cluster"
	"github.com/etcdscope/etcdscope/ui/common"
	"github.com/etcdscope/etcdscope/ui/tail"
	"github.com/etcdscope/etcdscope/ui/uitest"
	"github.com/etcdscope/etcdscope/ui/writepath"
)

// command types :line and enter.
func commandLine(t *testing.T, m *Model, line string) {
	t.Helper()
	update := updateOf(m)
	uitest.Press(t, update, ":")
	uitest.Type(t, update, line)
	uitest.Press(t, update, "enter")
}

func mustShow(t *testing.T, m *Model, what string, want ...string) {
	t.Helper()
	got := m.View()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("%s: no %q in\n%s", what, w, got)
		}
	}
}

// TestWritePathEnterOpensTheObjectOnItsLevel: enter on a write opens the
// browse screen with the tree on the object's level, its key selected,
// and the object at the write's revision beside it.
func TestWritePathEnterOpensTheObjectOnItsLevel(t *testing.T) {
	m := New(context.Background(), Options{Source: uitest.Fixture(), Tick: new(uitest.Clock).Tick,
		WritePath: writepath.Feed{Writes: make(chan writepath.Write), Reactions: make(chan writepath.Reaction)}})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 30})
	feed(t, m, m.browse.tree.Init()())
	// Not driven: the pane's next read waits on the feed, which stays empty.
	m.Update(writepath.WritesMsg{Writes: []writepath.Write{{Verb: "update", Resource: "pods", Namespace: "default", Name: "web-0",
		Key: "/registry/pods/default/web-0", Revision: 11, Code: 200}}})
	uitest.Press(t, updateOf(m), "5", "enter")
	mustShow(t, m, "enter on the write of web-0 at 11", "[1 browse]", "/registry/pods/default/  ", "> web-0", "/registry/pods/default/web-0  rev 11", "nginx:1.27")
}

// TestObjectKeysInTheTreeActOnTheSelectedKey: the object pane's view keys
// pressed in the tree switch the view of the key selected; on a directory
// the flash line says why they do nothing.
func TestObjectKeysInTheTreeActOnTheSelectedKey(t *testing.T) {
	m := appOn(uitest.Fixture())
	commandLine(t, m, "key /registry/pods/default/web-0")
	for _, tc := range []struct{ key, want string }{
		{"b", "# protobuf"}, {"o", `"kind": "Pod"`}, {"e", "modRevision: 12"}, {"y", "kind: Pod"},
	} {
		uitest.Press(t, updateOf(m), tc.key)
		mustShow(t, m, tc.key+" in the tree on web-0", tc.want)
	}
	commandLine(t, m, "key /registry/secrets/default/db-password")
	uitest.Press(t, updateOf(m), "x")
	mustShow(t, m, "x in the tree on the Secret", "rev 6  yaml  secret", "password: aHVudGVyMg==")
	uitest.Press(t, updateOf(m), "w", "o")
	mustShow(t, m, "o in the wide table", "✗ o shows an object as JSON in the object pane: w brings it back")
	uitest.Press(t, updateOf(m), "w", "esc", "b")
	mustShow(t, m, "b on a directory row", "✗ b shows an object's bytes: select a key, not a directory")
}

// TestFoldsAreTheObjects: a section folded on one object is not folded on
// the next one opened.
func TestFoldsAreTheObjects(t *testing.T) {
	m := appOn(uitest.Fixture())
	commandLine(t, m, "key /registry/pods/default/web-0")
	uitest.Press(t, updateOf(m), "tab", "Z")
	mustShow(t, m, "Z on web-0", "status: … ")
	commandLine(t, m, "key /registry/pods/default/web-1")
	if got := m.View(); strings.Contains(got, "lines folded") || !strings.Contains(got, "image: nginx:1.27") {
		t.Errorf("web-1 opens with web-0's folds:\n%s", got)
	}
}

// TestHistoryOfADeletedKeyFromTheKeyList: h in the tree after :key of a
// deleted key opens that key's history.
func TestHistoryOfADeletedKeyFromTheKeyList(t *testing.T) {
	src := uitest.Fixture()
	src.Delete("/registry/pods/default/web-0")
	m := appOn(src)
	commandLine(t, m, "key /registry/pods/default/web-0")
	uitest.Press(t, updateOf(m), "h")
	if got := m.View(); m.screen != History || strings.Contains(got, "history needs a key") || !strings.Contains(got, "/registry/pods/default/web-0") {
		t.Errorf("h on the deleted web-0 shows\n%s", got)
	}
}

// TestHeaderRateKeepsTheTailsPaceWhileStatusReadingsLag: while the status
// readings come late (a du read keeps etcd busy), the header's rate is
// that of the events the tail receives, and a calm cluster's few events
// do not read 0.0 between two of them.
func TestHeaderRateKeepsTheTailsPaceWhileStatusReadingsLag(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	m := New(context.Background(), Options{Source: uitest.Fixture(), Tick: new(uitest.Clock).Tick, Now: func() time.Time { return now }})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 30})
	status := cluster.StatusMsg{Cluster: etcdview.Cluster{Members: []etcdview.Member{{Name: "etcd-0", Leader: true}}}}
	m.Update(status)
	for i := range 10 { // 20 events a second, no status reading
		now = now.Add(500 * time.Millisecond)
		m.Update(podEvents(i*10, 10))
	}
	mustShow(t, m, "events with no status reading for 5 s", "20.0 ev/s")
	for range 4 { // one event every 3 s, a status reading every second
		for range 3 {
			now = now.Add(time.Second)
			m.Update(status)
		}
		m.Update(podEvents(1000, 1))
	}
	if got := m.View(); strings.Contains(got, " 0.0 ev/s") {
		t.Errorf("one event every 3 s reads 0.0 ev/s:\n%s", got)
	}
}

// podEvents is a batch of n pod creations from revision from.
func podEvents(from, n int) tail.BatchesMsg {
	var b etcdview.Batch
	for i := from; i < from+n; i++ {
		b.Events = append(b.Events, etcdview.Event{Type: etcdview.Added, KV: etcdview.KV{Key: "/registry/pods/default/p", Value: []byte("v"), ModRevision: int64(i + 20)}})
		b.Revision = int64(i + 20)
	}
	return tail.BatchesMsg{Batches: []etcdview.Batch{b}}
}

// TestTheWheelMovesThePaneUnderThePointer: in browse, the wheel over the
// object pane leaves the tree's selection alone; over the tree it moves
// the selection.
func TestTheWheelMovesThePaneUnderThePointer(t *testing.T) {
	m := appOn(uitest.Fixture())
	commandLine(t, m, "key /registry/pods/default/web-0")
	wheel := func(x int) {
		uitest.Drive(t, updateOf(m), common.Send(tea.MouseMsg{X: x, Y: 10, Button: tea.MouseButtonWheelDown, Action: tea.MouseActionPress}))
	}
	wheel(80)
	if got := m.browse.tree.SelectedKey(); got != "/registry/pods/default/web-0" {
		t.Fatalf("the wheel over the object pane moved the tree to %q", got)
	}
	mustShow(t, m, "the wheel over the object pane", "> web-0")
	wheel(5)
	if got := m.browse.tree.SelectedKey(); got != "/registry/pods/default/web-1" {
		t.Fatalf("the wheel over the tree left its selection on %q", got)
	}
	mustShow(t, m, "the wheel over the tree", "> web-1")
}

// TestHeaderNamesARecordingAndNoMembers: a recording's status (a file
// etcdscope record wrote, in kine's schema) makes the header say it is a
// recording, offline, not kine or members that are up.
func TestHeaderNamesARecordingAndNoMembers(t *testing.T) {
	m := New(context.Background(), Options{Source: uitest.Fixture(), Tick: new(uitest.Clock).Tick})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 30})
	m.Update(cluster.StatusMsg{Cluster: etcdview.Cluster{Kine: true, Recording: true, Revision: 7, Description: "recording /tmp/rec.db (1.2 MiB)",
		Members: []etcdview.Member{{Name: "recording", Endpoint: "/tmp/rec.db", Revision: 7}}}})
	mustShow(t, m, "a recording's status", "recording /tmp/rec.db (1.2 MiB)", "recording, offline")
	if got := m.View(); strings.Contains(got, "members up") || strings.Contains(got, "kine") {
		t.Errorf("the header of a recording names members or kine:\n%s", got)
	}
}

// TestHeaderNamesKineAndNoLeader: behind an endpoint named "etcd at ...",
// a status that says kine makes the header name kine and what it
// emulates, and no Raft leader, which kine has not.
func TestHeaderNamesKineAndNoLeader(t *testing.T) {
	m := New(context.Background(), Options{Source: uitest.Fixture(), Tick: new(uitest.Clock).Tick, Description: "etcd at unix:///run/k3s/kine.sock"})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 30})
	m.Update(cluster.StatusMsg{Cluster: etcdview.Cluster{Kine: true, EmulatedVersion: "3.6.11", Revision: 7,
		Members: []etcdview.Member{{Name: "kine", Leader: true, Endpoint: "unix:///run/k3s/kine.sock", Version: "3.6.11"}}}})
	mustShow(t, m, "kine's status", "kine (emulating etcd 3.6.11) at unix:///run/k3s/kine.sock", "kine, no Raft · 1/1 members up")
	if got := m.View(); strings.Contains(got, "etcd at") || strings.Contains(got, "leader kine") {
		t.Errorf("the header on kine still names etcd or a leader:\n%s", got)
	}
}

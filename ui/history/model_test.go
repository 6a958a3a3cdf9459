package history

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/ui/common"
	"github.com/etcdscope/etcdscope/ui/uitest"
	"github.com/muesli/termenv"
)

func init() { lipgloss.SetColorProfile(termenv.Ascii) }

func TestRevisionsWithChangesAndTheDiffOfTheSelected(t *testing.T) {
	src := uitest.Fixture()
	src.Delete("/registry/pods/default/web-0")
	m := New(uitest.Common(src))
	m.SetSize(150, 50)
	m.Focus(true)
	uitest.Drive(t, m.Update, m.Open("/registry/pods/default/web-0", 11))
	got := m.View()
	for _, want := range []string{"4 revisions retained", "DELETED", "12        3        259 spec.containers[0].image", "10        1        260 created", "diff revision 10 → 11", "object at revision 11"} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in\n%s", want, got)
		}
	}
	uitest.Press(t, m.Update, "g")
	if got := m.View(); !strings.Contains(got, "deleted at revision 14; the value before:") {
		t.Errorf("the deletion:\n%s", got)
	}
}

func TestCompactionBoundaryIsARow(t *testing.T) {
	src := uitest.Fixture()
	src.Compact(11)
	m := New(uitest.Common(src))
	m.SetSize(150, 30)
	uitest.Drive(t, m.Update, m.Open("/registry/pods/default/web-0", 0))
	got := m.View()
	if !strings.Contains(got, "history before revision 11 was compacted") {
		t.Errorf("no compaction row:\n%s", got)
	}
	// The oldest revision left is no creation: what it changed is unknown.
	uitest.Press(t, m.Update, "G") // the compaction row
	uitest.Press(t, m.Update, "k") // the oldest revision above it
	got = m.View()
	for _, want := range []string{"(the revision before is gone)", "the oldest etcd still holds"} {
		if !strings.Contains(got, want) {
			t.Errorf("oldest retained revision: no %q in\n%s", want, got)
		}
	}
	if strings.Contains(got, "created") {
		t.Errorf("the oldest retained revision is called created:\n%s", got)
	}
}

func TestKeyWithNoRetainedRevisionSaysSo(t *testing.T) {
	src := uitest.Fixture()
	src.Put("/registry/pods/default/old", []byte("x"))
	src.Delete("/registry/pods/default/old")
	src.Compact(src.Revision())
	tests := []struct{ key, want string }{
		{"/registry/pods/default/never", "no revision of /registry/pods/default/never found"},
		{"/registry/pods/default/old", "no revision of /registry/pods/default/old found (history before revision 15 was compacted)"},
	}
	for _, tc := range tests {
		m := New(uitest.Common(src))
		m.SetSize(150, 20)
		uitest.Drive(t, m.Update, m.Open(tc.key, 0))
		if got := m.View(); !strings.Contains(got, tc.want) {
			t.Errorf("no %q in\n%s", tc.want, got)
		}
	}
}

// liveLike serves History as a live etcd does: the current incarnation,
// unless every one is asked for; those come from a replay that reports
// its progress halfway, then waits for the test to release it.
type liveLike struct {
	*uitest.Source
	release chan struct{}
}

func (s liveLike) History(ctx context.Context, key string, opts etcdview.HistoryOptions) (etcdview.History, error) {
	all, err := s.Source.History(ctx, key, opts)
	if err != nil {
		return all, err
	}
	if opts.AllIncarnations {
		opts.Progress(etcdview.ReplayProgress{From: 1, Head: all.Revision, Reached: all.Revision / 2, Found: 2})
		select {
		case <-s.release:
			return all, nil
		case <-ctx.Done():
			return etcdview.History{}, ctx.Err()
		}
	}
	cur := all
	for i, e := range all.Entries {
		if e.Deleted {
			cur.Entries = all.Entries[:i]
			cur.Earlier, cur.EarlierSeenAt = etcdview.EarlierUnread, all.Entries[i+1].KV.ModRevision
			break
		}
	}
	return cur, nil
}

// recreated is the fixture with web-0 deleted at 14 and created again at
// 15, read as a live etcd reads it.
func recreated() (*Model, liveLike) {
	src := uitest.Fixture()
	src.Delete("/registry/pods/default/web-0")
	src.PutObject(uitest.Pod("default", "web-0", "nginx:1.30", true))
	live := liveLike{Source: src, release: make(chan struct{})}
	c := uitest.Common(src)
	c.Src = live
	m := New(c)
	m.SetSize(160, 30)
	m.Focus(true)
	return m, live
}

// startEarlier presses E and runs the replay's commands: the read on a
// goroutine of its own, whose message comes on the channel returned, and
// the wait for its progress, whose first report it hands to m.
func startEarlier(t *testing.T, m *Model) <-chan tea.Msg {
	t.Helper()
	batch, ok := m.Update(uitest.Key("E"))().(tea.BatchMsg)
	if !ok || len(batch) != 2 {
		t.Fatalf("E made %v, want the replay and the wait for its progress", batch)
	}
	read := make(chan tea.Msg, 1)
	go func() { read <- batch[0]() }()
	m.Update(batch[1]())
	return read
}

func TestEarlierIncarnationsLoadOnTheKeyWithProgress(t *testing.T) {
	m, live := recreated()
	uitest.Drive(t, m.Update, m.Open("/registry/pods/default/web-0", 0))
	got := m.View()
	for _, want := range []string{"an earlier incarnation existed at revision 12: E reads it", "1 revision of the current incarnation, store at 15", "15        1"} {
		if !strings.Contains(got, want) {
			t.Errorf("before E: no %q in\n%s", want, got)
		}
	}
	if strings.Contains(got, "DELETED") {
		t.Errorf("before E, the earlier incarnation is listed:\n%s", got)
	}

	read := startEarlier(t, m)
	if got := m.View(); !strings.Contains(got, "replaying etcd's history, revisions 1 to 15: 47%, 2 revisions of the key") {
		t.Errorf("no progress while the replay runs:\n%s", got)
	}
	close(live.release)
	select {
	case msg := <-read:
		uitest.Drive(t, m.Update, m.Update(msg))
	case <-time.After(uitest.Deadline):
		t.Fatal("the replay did not end once released")
	}
	got = m.View()
	for _, want := range []string{"5 revisions retained", "14        -    ", "DELETED", "10        1        260 created"} {
		if !strings.Contains(got, want) {
			t.Errorf("after the replay: no %q in\n%s", want, got)
		}
	}
	if strings.Contains(got, "replaying") || strings.Contains(got, "E reads") {
		t.Errorf("after the replay, the title still says the history is incomplete:\n%s", got)
	}
}

func TestEscStopsTheReplay(t *testing.T) {
	m, _ := recreated()
	uitest.Drive(t, m.Update, m.Open("/registry/pods/default/web-0", 0))
	read := startEarlier(t, m)
	uitest.Press(t, m.Update, "esc")
	select {
	case msg := <-read:
		flash, ok := m.Update(msg)().(common.FlashMsg)
		if !ok || flash.Text != "stopped reading the earlier incarnations" {
			t.Errorf("a stopped replay flashes %+v", flash)
		}
	case <-time.After(uitest.Deadline):
		t.Fatal("esc did not stop the replay")
	}
	if got := m.View(); !strings.Contains(got, "an earlier incarnation existed at revision 12: E reads it") || strings.Contains(got, "replaying") {
		t.Errorf("after esc, the current incarnation is not what is shown:\n%s", got)
	}
}

func TestADeletedKeyReplaysAtOnce(t *testing.T) {
	m, live := recreated()
	live.Delete("/registry/pods/default/web-0")
	batch, ok := m.Open("/registry/pods/default/web-0", 0)().(LoadedMsg)
	if !ok {
		t.Fatalf("Open yielded %T", batch)
	}
	if cmd := m.Update(batch); cmd == nil {
		t.Fatal("a key with no current incarnation starts no replay")
	}
	if got := m.View(); !strings.Contains(got, "replaying etcd's history") || !strings.Contains(got, "does not exist at revision 16") {
		t.Errorf("a deleted key's history while it replays:\n%s", got)
	}
}

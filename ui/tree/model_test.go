package tree

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/ui/common"
	"github.com/etcdscope/etcdscope/ui/uitest"
)

// open is a tree of 60x20 on src with its root read.
func open(t *testing.T, src *uitest.Source) *harness {
	t.Helper()
	return newHarness(t, uitest.Common(src), false)
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
		common.TailPrefixMsg{Prefix: "/registry/pods/default/web-0", Exact: true},
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
	if len(m.msgs) != 0 {
		t.Errorf("the key was previewed before the cursor rested: %v", m.msgs)
	}
	m.drive(m.clock.Advance(previewDelay))
	if len(m.msgs) == 0 || fmt.Sprint((m.msgs)[len(m.msgs)-1]) != fmt.Sprint(common.OpenObjectMsg{Key: "/registry/pods/default/web-1"}) {
		t.Errorf("resting on web-1 sent %v", m.msgs)
	}
}

// A jump asked for while a preview waits for the cursor to rest cancels
// it: the key the jump opens stays in the object pane, not the one the
// cursor rested on before (:key typed right after the first level drew).
func TestAJumpCancelsThePreviewUnderWay(t *testing.T) {
	m := open(t, uitest.Fixture())
	m.drive(m.GoTo("/registry/pods/default/"))
	m.press("j")
	jump := m.GoTo("/registry/pods/kube-system/coredns-0")
	m.drive(m.clock.Advance(previewDelay))
	m.drive(jump)
	for _, msg := range m.msgs {
		if open, ok := msg.(common.OpenObjectMsg); ok && open.Key != "/registry/pods/kube-system/coredns-0" {
			t.Errorf("after the jump to coredns-0 the tree opened %s", open.Key)
		}
	}
	if ch, _ := m.Selected(); ch.Prefix != "/registry/pods/kube-system/coredns-0" {
		t.Errorf("the jump selected %q", ch.Prefix)
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

// openHeld is open with the counts held back.
func openHeld(t *testing.T, c common.Common) *harness {
	t.Helper()
	return newHarness(t, c, true)
}

// uncounted is the fixture with every directory of more than one key left
// to Count: namespaces/ (2 keys) and pods/ (3) at the root.
func uncounted() *uitest.Source {
	src := uitest.Fixture()
	src.UncountedAbove = 1
	return src
}

// storeOf is a store of keys that leaves a directory of more than
// uncountedAbove keys to Count.
func storeOf(uncountedAbove int64, keys ...string) *uitest.Source {
	src := uitest.New()
	src.UncountedAbove = uncountedAbove
	for _, k := range keys {
		src.Put(k, []byte("x"))
	}
	return src
}

// numbered is n keys, format taking the number.
func numbered(format string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf(format, i)
	}
	return out
}

// rowCount matches the row of dir with count at its end.
func rowCount(dir, count string) *regexp.Regexp {
	return regexp.MustCompile(`(?m)^. ` + regexp.QuoteMeta(dir) + ` +` + regexp.QuoteMeta(count) + `\s*$`)
}

func TestUncountedDirectoriesShowPlaceholdersThenCounts(t *testing.T) {
	m := openHeld(t, uitest.Common(uncounted()))
	got := m.View()
	for _, want := range []*regexp.Regexp{rowCount("pods/", "…"), rowCount("namespaces/", "…"), rowCount("secrets/", "1"),
		regexp.MustCompile(`/registry/  5\+ keys  counting…`)} {
		if !want.MatchString(got) {
			t.Errorf("before the counts, no %v in\n%s", want, got)
		}
	}
	m.hold = false
	m.release()
	got = m.View()
	for _, want := range []*regexp.Regexp{rowCount("pods/", "3"), rowCount("namespaces/", "2"), regexp.MustCompile(`/registry/  10 keys\n`)} {
		if !want.MatchString(got) {
			t.Errorf("after the counts, no %v in\n%s", want, got)
		}
	}
	if strings.Contains(got, "…") || m.countsInFlight != 0 {
		t.Errorf("counts left: %d in flight, screen\n%s", m.countsInFlight, got)
	}
}

func TestCountsFillInAFewAtATimeFromTheRowsInView(t *testing.T) {
	src := storeOf(1, append(numbered("/registry/pods/ns-%02d/a", 50), numbered("/registry/pods/ns-%02d/b", 50)...)...)
	m := openHeld(t, uitest.Common(src))
	m.release() // the root's count of pods/
	m.drive(m.GoTo("/registry/pods/"))
	asked := func() (out []string) {
		for _, msg := range m.held {
			out = append(out, strings.TrimPrefix(msg.of, "/registry/pods/"))
		}
		return out
	}
	if got, want := asked(), []string{"ns-00/", "ns-01/", "ns-02/", "ns-03/"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the first counts asked are %v, want %v", got, want)
	}
	m.press("G") // the window now shows ns-31/ to ns-49/
	m.release()
	if got, want := asked(), []string{"ns-31/", "ns-32/", "ns-33/", "ns-34/"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after G the counts asked are %v, want the rows in view first: %v", got, want)
	}
	for rounds := 0; len(m.held) > 0; rounds++ {
		if rounds > 50/countLanes+1 {
			t.Fatalf("the counts of 50 directories take more than %d rounds", rounds)
		}
		m.release()
	}
	if got := m.View(); !strings.Contains(got, "/registry/pods/  100 keys") || !rowCount("ns-40/", "2").MatchString(got) {
		t.Errorf("after the counts:\n%s", got)
	}
	if m.mostCounts != countLanes {
		t.Errorf("at most %d counts were in flight, want %d", m.mostCounts, countLanes)
	}
}

func TestUnknownLeafLevelOpensPagedAndCountsItself(t *testing.T) {
	src := storeOf(100, append(numbered("/registry/events/default/e-%05d", 3000), "/registry/events/kube-system/e-0")...)
	rec := &childrenCalls{Source: src}
	c := uitest.Common(src)
	c.Src = rec
	m := openHeld(t, c)
	m.press("enter") // events/
	if ch, _ := m.Selected(); ch.Prefix != "/registry/events/default/" || ch.Count != etcdview.CountUnknown {
		t.Fatalf("the cursor is on %+v, want default/ uncounted", ch)
	}
	m.press("enter")
	got := m.View()
	if !strings.Contains(got, "/registry/events/default/  500 loaded  counting…") || !m.top().paged {
		t.Errorf("the uncounted leaf level is not paged:\n%s", got)
	}
	if rec.read("/registry/events/default/") {
		t.Error("Children read the leaf level of 3000 keys")
	}
	m.hold = false
	m.release()
	if got := m.View(); !strings.Contains(got, "/registry/events/default/  3000 keys, 500 loaded") {
		t.Errorf("the paged level's count did not arrive:\n%s", got)
	}
	m.press("ctrl+r")
	if got := m.View(); !strings.Contains(got, "/registry/events/default/  3000 keys, 500 loaded\n") {
		t.Errorf("after ctrl-r the paged level is not the same:\n%s", got)
	}
	m.press("esc")
	if got := m.View(); !rowCount("default/", "3000").MatchString(got) || !strings.Contains(got, "/registry/events/  3001 keys") {
		t.Errorf("the counts of events/, asked before it was left, are not shown back there:\n%s", got)
	}
}

func TestReloadKeepsTheCountsUntilFreshOnesArrive(t *testing.T) {
	src := uncounted()
	m := open(t, src)
	src.PutObject(uitest.Pod("default", "web-2", "nginx:1.29", true))
	m.hold = true
	m.press("ctrl+r")
	got := m.View()
	if !rowCount("pods/", "3").MatchString(got) || !strings.Contains(got, "/registry/  10 keys  counting…") {
		t.Errorf("while recounting, the previous counts are not shown:\n%s", got)
	}
	if m.ReloadDue(time.Now().Add(time.Hour)) {
		t.Error("an automatic reload is due while the counts are read")
	}
	m.hold = false
	m.release()
	if got := m.View(); !rowCount("pods/", "4").MatchString(got) || !strings.Contains(got, "/registry/  11 keys") || strings.Contains(got, "counting") {
		t.Errorf("the fresh counts did not replace the previous ones:\n%s", got)
	}
}

func TestCountsOfAnEarlierReadOrAClosedLevelAreDropped(t *testing.T) {
	src := uncounted()
	m := openHeld(t, uitest.Common(src))
	earlier := m.held
	m.held = nil
	src.PutObject(uitest.Pod("default", "web-2", "nginx:1.29", true))
	m.press("ctrl+r")
	fresh := m.held
	m.held = earlier
	m.release()
	if got := m.View(); !rowCount("pods/", "…").MatchString(got) {
		t.Errorf("a count of the read before the reload was taken:\n%s", got)
	}
	m.held = fresh
	m.release()
	if got := m.View(); !rowCount("pods/", "4").MatchString(got) {
		t.Errorf("the fresh count is not shown:\n%s", got)
	}

	m.drive(m.GoTo("/registry/pods/"))
	m.press("esc")
	m.release() // the counts of pods/, closed
	if m.countsInFlight != 0 || m.top().prefix != Root {
		t.Errorf("%d counts in flight at %s after the answers of a closed level", m.countsInFlight, m.top().prefix)
	}
}

func TestCountErrorFlashesOnceAndStopsCounting(t *testing.T) {
	src := uncounted()
	c := uitest.Common(src)
	c.Src = failingCount{src}
	m := newHarness(t, c, false)
	var flashes []string
	for _, msg := range m.msgs {
		if f, ok := msg.(common.FlashMsg); ok && f.Err {
			flashes = append(flashes, f.Text)
		}
	}
	if len(flashes) != 1 || !strings.Contains(flashes[0], "count /registry/") || !strings.Contains(flashes[0], "request timed out") {
		t.Errorf("flashes %q, want one count error", flashes)
	}
	if got := m.View(); !rowCount("pods/", "…").MatchString(got) || !strings.Contains(got, "/registry/  5+ keys\n") {
		t.Errorf("after the count failed:\n%s", got)
	}
	if !m.ReloadDue(time.Now().Add(time.Hour)) {
		t.Error("a failed count keeps the level from being read again")
	}
}

// childrenCalls records the prefixes Children reads.
type childrenCalls struct {
	*uitest.Source
	mu       sync.Mutex
	prefixes []string
}

func (c *childrenCalls) Children(ctx context.Context, prefix string, rev int64) (etcdview.Level, error) {
	c.mu.Lock()
	c.prefixes = append(c.prefixes, prefix)
	c.mu.Unlock()
	return c.Source.Children(ctx, prefix, rev)
}

func (c *childrenCalls) read(prefix string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Contains(c.prefixes, prefix)
}

// failingCount times out every Count.
type failingCount struct{ *uitest.Source }

func (failingCount) Count(context.Context, string, int64) (int64, error) {
	return 0, errors.New("etcdserver: request timed out")
}

// TestTailOfADirectoryRowIsItsPrefix: t on the kube-system/ row of
// /registry/pods/ tails /registry/pods/kube-system/, not the level.
func TestTailOfADirectoryRowIsItsPrefix(t *testing.T) {
	m := open(t, uitest.Fixture())
	m.drive(m.GoTo("/registry/pods/"))
	m.press("j", "t")
	if ch, _ := m.Selected(); ch.Name != "kube-system/" {
		t.Fatalf("the cursor is on %q, want kube-system/", ch.Name)
	}
	want := common.TailPrefixMsg{Prefix: "/registry/pods/kube-system/"}
	if got := m.msgs[len(m.msgs)-1]; got != want {
		t.Errorf("t on kube-system/ sent %v, want %v", got, want)
	}
}

// TestCursorStaysOnTheFirstRowWhileTheLevelGrows: a level that gains an
// entry above the first row while the user has not moved (the bundled
// control plane writes its first apiextensions.k8s.io key after the tree
// showed) keeps the cursor on the first row; once moved, the cursor
// follows its entry.
func TestCursorStaysOnTheFirstRowWhileTheLevelGrows(t *testing.T) {
	src := uitest.Fixture()
	m := open(t, src)
	if ch, _ := m.Selected(); ch.Name != "configmaps/" {
		t.Fatalf("the cursor starts on %q, want the first row, configmaps/", ch.Name)
	}
	src.Put("/registry/apiextensions.k8s.io/customresourcedefinitions/carts.shop.example.com", []byte("{}"))
	m.drive(m.Reload())
	if ch, _ := m.Selected(); m.top().cursor.Pos != 0 || ch.Name != "apiextensions.k8s.io/" {
		t.Errorf("after the level grew above it, the untouched cursor is on row %d, %q", m.top().cursor.Pos+1, ch.Name)
	}
	m.press("j")
	src.Put("/registry/apiregistration.k8s.io/apiservices/v1.", []byte("{}"))
	m.drive(m.Reload())
	if ch, _ := m.Selected(); ch.Name != "configmaps/" {
		t.Errorf("after a move and a reload, the cursor is on %q, want configmaps/ still", ch.Name)
	}
}

// TestHistoryOfADeletedKeyOpenedByName: :key of a key deleted since opens
// its parent level, which has no row for it; h reads that key's history
// until the cursor moves.
func TestHistoryOfADeletedKeyOpenedByName(t *testing.T) {
	src := uitest.Fixture()
	src.Delete("/registry/pods/default/web-0")
	m := open(t, src)
	m.drive(m.GoTo("/registry/pods/default/web-0"))
	m.press("h")
	want := common.OpenHistoryMsg{Key: "/registry/pods/default/web-0"}
	if got := m.msgs[len(m.msgs)-1]; got != want {
		t.Errorf("h after :key of the deleted web-0 sent %v, want %v", got, want)
	}
	m.press("j", "h")
	if got := m.msgs[len(m.msgs)-1]; got != (common.OpenHistoryMsg{Key: "/registry/pods/default/web-1"}) {
		t.Errorf("h after a move sent %v, want the history of the row, web-1", got)
	}
}

package space

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/ui/common"
	"github.com/etcdscope/etcdscope/ui/uitest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// deadline bounds a wait on the report's goroutine.
const deadline = 10 * time.Second

// screen is a space screen under test on src, its timers on clock.
type screen struct {
	t     *testing.T
	m     *Model
	clock *uitest.Clock
}

func newScreen(t *testing.T, src etcdview.Source) *screen {
	t.Helper()
	clock := new(uitest.Clock)
	c := uitest.Common(uitest.New())
	c.Src, c.Tick = src, clock.Tick
	m := New(c)
	m.SetSize(120, 40)
	m.Focus(true)
	return &screen{t: t, m: m, clock: clock}
}

func (s *screen) drive(cmd tea.Cmd) { s.t.Helper(); uitest.Drive(s.t, s.m.Update, cmd) }

// settle waits for the read under way to end, then lets the next tick
// take its result.
func (s *screen) settle() {
	s.t.Helper()
	if s.m.job == nil {
		return
	}
	select {
	case <-s.m.job.Done():
	case <-time.After(deadline):
		s.t.Fatalf("the read did not end within %v", deadline)
	}
	s.drive(s.clock.Advance(readingEvery))
}

func (s *screen) press(keys ...string) {
	s.t.Helper()
	for _, k := range keys {
		s.drive(common.Send(uitest.Key(k)))
		s.settle()
	}
}

// sees fails unless the screen shows every one of want.
func (s *screen) sees(want ...string) string {
	s.t.Helper()
	v := s.m.View()
	for _, w := range want {
		if !strings.Contains(v, w) {
			s.t.Fatalf("the screen does not show %q:\n%s", w, v)
		}
	}
	return v
}

// opened is the screen opened on uitest's fixture, plus a ConfigMap larger
// than every Pod together: configmaps/ leads by bytes, pods/ by keys.
func opened(t *testing.T) *screen {
	t.Helper()
	src := uitest.Fixture()
	src.PutObject(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "blob"}, Data: map[string]string{"blob": strings.Repeat("x", 64<<10)}})
	s := newScreen(t, src)
	s.drive(s.m.Open())
	s.settle()
	return s
}

// rowOrder is the names of the table's rows, top to bottom.
func rowOrder(m *Model) []string {
	var names []string
	for _, n := range m.rows {
		names = append(names, n.Name)
	}
	return names
}

func TestOpeningReadsTheTreeAndShowsItsLevels(t *testing.T) {
	s := opened(t)
	s.sees("space  /registry/", "configmaps/", "pods/", "LARGEST", "default/blob", "etcd-0 ★", "2.0 GiB")
	if got := rowOrder(s.m); got[0] != "configmaps/" {
		t.Errorf("by bytes the rows are %v, want configmaps/ first", got)
	}
}

func TestSortCyclesTheMeasures(t *testing.T) {
	s := opened(t)
	s.press("s")
	s.sees("sorted by keys")
	if got := rowOrder(s.m); got[0] != "pods/" {
		t.Errorf("by keys the rows are %v, want pods/ (3 keys) first", got)
	}
	s.press("s")
	s.sees("sorted by writes since creation")
	s.press("s")
	s.sees("sorted by rate")
	s.press("s")
	s.sees("sorted by bytes")
}

// gated is a source whose scans report progress, then wait for release or
// their end.
type gated struct {
	*uitest.Source
	started chan struct{}
	release chan struct{}
}

func (g *gated) Scan(ctx context.Context, prefix string, opts etcdview.ScanOptions, fn func([]etcdview.ScanRecord) error) (etcdview.ScanResult, error) {
	opts.Progress(etcdview.ScanProgress{Phase: etcdview.ScanValues, Done: 5, Total: 10})
	close(g.started)
	select {
	case <-g.release:
		return g.Source.Scan(ctx, prefix, opts, fn)
	case <-ctx.Done():
		return etcdview.ScanResult{}, ctx.Err()
	}
}

func startGated(t *testing.T) (*screen, *gated) {
	t.Helper()
	g := &gated{Source: uitest.Fixture(), started: make(chan struct{}), release: make(chan struct{})}
	s := newScreen(t, g)
	s.drive(s.m.Open())
	select {
	case <-g.started:
	case <-time.After(deadline):
		t.Fatalf("the scan did not start within %v", deadline)
	}
	s.drive(s.clock.Advance(readingEvery))
	return s, g
}

func TestProgressShowsWhileTheReadGoesOn(t *testing.T) {
	s, g := startGated(t)
	s.sees("reading values: 5 of 10", "esc cancels")
	close(g.release)
	s.settle()
	v := s.sees("pods/", "R reads again")
	if strings.Contains(v, "reading values") {
		t.Errorf("the progress is still shown after the read:\n%s", v)
	}
}

func TestEscCancelsTheRead(t *testing.T) {
	s, _ := startGated(t)
	s.press("esc")
	v := s.sees("read cancelled (values: 5 read); R reads again")
	if strings.Contains(v, "esc cancels") {
		t.Errorf("the read still shows as under way:\n%s", v)
	}
}

func TestEnterGoesDownReadingDeeperAndEscComesBack(t *testing.T) {
	s := opened(t)
	s.press("s", "g") // by keys: pods/ first
	s.press("enter")
	s.sees("space  /registry/pods/", "default/ …", "kube-system/")
	// default/ is at the depth read: enter reads one level deeper.
	s.press("enter")
	s.sees("space  /registry/pods/default/", "web-0", "web-1")
	s.press("esc")
	s.sees("space  /registry/pods/", "> default/")
	s.press("backspace")
	s.sees("space  /registry/  ")
	if got := s.m.rows[s.m.cursors[levelPane].Pos].Name; got != "pods/" {
		t.Errorf("back at the top the cursor is on %s, want pods/", got)
	}
}

// sent runs the command a key returns and is the message it yields.
func (s *screen) sent(k string) tea.Msg {
	s.t.Helper()
	cmd := s.m.Update(uitest.Key(k))
	if cmd == nil {
		s.t.Fatalf("%s did nothing", k)
	}
	return cmd()
}

func TestEnterOnAKeyOpensItAndHItsHistory(t *testing.T) {
	s := opened(t)
	s.press("s", "g", "enter", "enter") // pods/, default/
	s.press("g")
	want := common.OpenObjectMsg{Key: "/registry/pods/default/web-0", Rev: s.m.report.Revision, Focus: true}
	if got := s.sent("enter"); got != want {
		t.Errorf("enter on web-0 sent %#v, want %#v", got, want)
	}
	// The largest below the level, from its list.
	s.press("tab")
	s.sees("> web-")
	if got, ok := s.sent("h").(common.OpenHistoryMsg); !ok || !strings.HasPrefix(got.Key, "/registry/pods/default/web-") {
		t.Errorf("h on the largest sent %#v, want the history of a pod", got)
	}
}

func TestLiveRatesComeFromTheBatchesObserved(t *testing.T) {
	s := opened(t)
	at := uitest.Epoch
	for i := range 10 {
		kv := etcdview.KV{Key: "/registry/pods/default/web-0", Value: make([]byte, 90), ModRevision: int64(100 + i)}
		s.m.Observe([]etcdview.Batch{{Events: []etcdview.Event{{Type: etcdview.Modified, KV: kv}}}}, at.Add(time.Duration(i)*time.Second))
	}
	s.drive(common.Send(tickMsg{gen: s.m.tickGen, at: at.Add(10 * time.Second)}))
	// 10 writes of 118 bytes (key and value) over 10 s.
	var pods string
	for _, l := range strings.Split(s.m.View(), "\n") {
		if strings.Contains(l, "pods/") && strings.Contains(l, "%") {
			pods = l
		}
	}
	if !strings.Contains(pods, " 1.0 ") || !strings.Contains(pods, "118 B/s") {
		t.Errorf("the pods row shows no rate of 1.0 rev/s, 118 B/s: %q", pods)
	}
	if !strings.Contains(s.sees("HOTTEST NOW"), "pods/default/web-0              1.00") {
		t.Errorf("the hottest now are not web-0 at 1.00 rev/s")
	}
}

// TestNoWarningWhereCompactionsKeepTheSizeLevel is the busy bundled
// cluster's shape: the size in use climbs by every write between
// compactions and falls back at each. It once warned of the quota within
// two hours.
func TestNoWarningWhereCompactionsKeepTheSizeLevel(t *testing.T) {
	s := opened(t)
	for i := range 16 {
		used := int64(1300+(i%5)*60) << 20
		// kube-apiserver's compact_rev_key: "0" on its first cycle, then
		// the revision each compacts to.
		compact := int64(max(i/5-1, 0) * 1000)
		s.m.SetStatus(etcdview.Cluster{CompactRevision: compact, Members: []etcdview.Member{{Name: "etcd-0", DBSize: 1600 << 20, DBInUse: used}}}, nil,
			uitest.Epoch.Add(time.Duration(i)*time.Minute))
		if w := s.m.Warning(); w != "" {
			t.Fatalf("minute %d, %d MiB in use: warns %q", i, used>>20, w)
		}
	}
}

func TestWarningWhenTheQuotaIsUnderADayAway(t *testing.T) {
	s := opened(t)
	members := func(inUse int64) etcdview.Cluster {
		return etcdview.Cluster{Members: []etcdview.Member{{Name: "etcd-0", DBSize: inUse, DBInUse: inUse}}}
	}
	// 1323 MiB in use, growing 1 MiB a minute with no compaction: after 11
	// minutes 714 MiB from the 2 GiB quota, 11h54m away.
	s.m.SetStatus(members(1323<<20), nil, uitest.Epoch)
	s.m.SetStatus(members(1324<<20), nil, uitest.Epoch.Add(time.Minute))
	if w := s.m.Warning(); w != "" {
		t.Errorf("a minute of growth, shorter than a compaction cycle, already warns: %q", w)
	}
	s.m.SetStatus(members(1328<<20), nil, uitest.Epoch.Add(5*time.Minute))
	if w := s.m.Warning(); w != "" {
		t.Errorf("5 minutes with no compaction yet (kube-apiserver compacts every 5) already warn: %q", w)
	}
	s.m.SetStatus(members(1334<<20), nil, uitest.Epoch.Add(11*time.Minute))
	if w := s.m.Warning(); w != "⚠ etcd-0 reaches its quota in 11h54m" {
		t.Errorf("Warning = %q, want the quota in 11h54m after 11 minutes with no compaction", w)
	}
	s.m.SetStatus(etcdview.Cluster{Members: []etcdview.Member{{Name: "etcd-0", DBSize: 2 << 30, Alarms: []string{"NOSPACE"}}}}, nil, uitest.Epoch.Add(6*time.Minute))
	if w := s.m.Warning(); w != "⚠ etcd-0 at its quota: NOSPACE" {
		t.Errorf("Warning = %q, want NOSPACE", w)
	}
}

package changes

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/etcdview/changes"
	"github.com/etcdscope/etcdscope/etcdview/etcdviewtest"
	"github.com/etcdscope/etcdscope/ui/common"
	"github.com/etcdscope/etcdscope/ui/uitest"
	"github.com/muesli/termenv"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func init() { lipgloss.SetColorProfile(termenv.Ascii) }

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

func nodeLease(name string, renew time.Time) *coordinationv1.Lease {
	return etcdviewtest.NodeLease(name, t0, renew)
}

// cluster is a store where a node's Lease is renewed every 10 s, and one
// ConfigMap is written between two renewals, for a minute and a half; a
// second Lease, renewed once, is not the clock.
func cluster() *uitest.Source {
	src := uitest.New()
	src.PutObject(nodeLease("idle", t0))
	for i := range 10 {
		src.PutObject(nodeLease("node-1", t0.Add(time.Duration(i)*10*time.Second)))
		src.PutObject(etcdviewtest.ConfigMap(fmt.Sprintf("cm-%d", i)))
	}
	return src
}

func managed(manager string, op metav1.ManagedFieldsOperationType, sub string, at time.Time) metav1.ManagedFieldsEntry {
	mt := metav1.NewTime(at)
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, Subresource: sub, Time: &mt, FieldsType: "FieldsV1",
		FieldsV1: &metav1.FieldsV1{Raw: []byte(fmt.Sprintf(`{"f:%s":{}}`, manager))}}
}

func web(replicas int32, mf ...metav1.ManagedFieldsEntry) *appsv1.Deployment {
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", CreationTimestamp: metav1.NewTime(t0.Add(12 * time.Second)), ManagedFields: mf},
		Spec:       appsv1.DeploymentSpec{Replicas: &replicas},
	}
}

// rollout is a store where a node's Lease renews every 10 s while a
// Deployment is applied and scaled, a ConfigMap is edited, and another
// deleted; and a ConfigMap whose name holds an escape sequence.
func rollout(t *testing.T) *uitest.Source {
	src := uitest.New()
	src.PutObject(etcdviewtest.ConfigMap("old"))
	settings := etcdviewtest.ConfigMap("settings")
	src.PutObject(settings)
	for i := range 4 {
		src.PutObject(nodeLease("node-1", t0.Add(time.Duration(i)*10*time.Second)))
		switch i {
		case 1:
			src.PutObject(web(1, managed("deploy-tool", "Apply", "", t0.Add(12*time.Second))))
		case 2:
			src.PutObject(web(3, managed("deploy-tool", "Apply", "", t0.Add(12*time.Second)), managed("kubectl", "Update", "scale", t0.Add(21*time.Second))))
			edited := settings.DeepCopy()
			edited.Data["k"] = "edited"
			edited.ManagedFields = []metav1.ManagedFieldsEntry{managed("kubectl-edit", "Update", "", t0.Add(22*time.Second))}
			src.PutObject(edited)
		case 3:
			src.Delete("/registry/configmaps/default/old")
			src.PutObject(&corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
				ObjectMeta: metav1.ObjectMeta{Name: "evil\x1b]0;pwned\x07", Namespace: "default"}})
		}
	}
	return src
}

// screen runs the timeline alone as a program.
type screen struct {
	m *Model
	r changes.Range
}

func (s screen) Init() tea.Cmd { return s.m.Open(s.r) }

func (s screen) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		s.m.SetSize(msg.Width, msg.Height)
		return s, nil
	}
	return s, s.m.Update(msg)
}

func (s screen) View() string { return s.m.View() }

func start(t *testing.T, src *uitest.Source, r changes.Range) *teatest.TestModel {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	m := New(common.Common{Ctx: ctx, Src: src, Styles: common.DefaultStyles(), Decoder: decode.Decoder{}})
	m.Focus(true)
	return teatest.NewTestModel(t, screen{m: m, r: r}, teatest.WithInitialTermSize(120, 16))
}

func waitScreen(t *testing.T, tm *teatest.TestModel, want ...string) {
	t.Helper()
	uitest.WaitScreen(t, tm, 10*time.Second, want...)
}

func TestGoldenTimeline(t *testing.T) {
	tm := start(t, rollout(t), changes.Range{Since: 25 * time.Second, Now: t0.Add(30 * time.Second)})
	waitScreen(t, tm, "kubectl-edit", "deploy-tool")
	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	view := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).View()
	if strings.ContainsRune(view, 0x1b) {
		t.Errorf("the screen carries an escape byte from a name:\n%q", view)
	}
	golden.RequireEqual(t, []byte(view))
}

// enter on an object opens its history at its last change in the window;
// on a group's row it does nothing.
func TestEnterOpensTheHistoryAtTheLastChange(t *testing.T) {
	m := New(uitest.Common(rollout(t)))
	m.SetSize(120, 16)
	m.Focus(true)
	var opened []common.OpenHistoryMsg
	update := func(msg tea.Msg) tea.Cmd {
		if o, ok := msg.(common.OpenHistoryMsg); ok {
			opened = append(opened, o)
			return nil
		}
		return m.Update(msg)
	}
	uitest.Drive(t, update, m.Open(changes.Range{From: 2}))
	uitest.Press(t, update, "enter") // the first group's row
	if len(opened) != 0 {
		t.Errorf("enter on a group opened %+v", opened)
	}
	uitest.Press(t, update, "j", "enter")
	want := common.OpenHistoryMsg{Key: "/registry/configmaps/default/evil\x1b]0;pwned\x07", Rev: 12}
	if len(opened) != 1 || opened[0] != want {
		t.Errorf("enter opened %+v, want %+v", opened, want)
	}
}

func TestParseWindow(t *testing.T) {
	tests := []struct {
		args    []string
		want    changes.Range
		wantErr bool
	}{
		{nil, changes.Range{Since: DefaultSince}, false},
		{[]string{"30m"}, changes.Range{Since: 30 * time.Minute}, false},
		{[]string{"1200"}, changes.Range{From: 1200}, false},
		{[]string{"/registry/pods/", "1h"}, changes.Range{Prefix: "/registry/pods/", Since: time.Hour}, false},
		{[]string{"1200", "/registry/pods/"}, changes.Range{Prefix: "/registry/pods/", From: 1200}, false},
		{[]string{"/registry/pods/"}, changes.Range{Prefix: "/registry/pods/", Since: DefaultSince}, false},
		{[]string{"30m", "1200"}, changes.Range{}, true},
		{[]string{"-5m"}, changes.Range{}, true},
		{[]string{"soon"}, changes.Range{}, true},
	}
	for _, tc := range tests {
		got, err := ParseWindow(tc.args)
		if got != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("ParseWindow(%q) = %+v, %v; want %+v, error %v", tc.args, got, err, tc.want, tc.wantErr)
		}
	}
}

// A new :changes stops the read that runs: a live watch over a long window
// would read every revision of it for nothing. The old read here waits for
// a revision the in-memory watch never sends (it sends no progress), as a
// read of a long window waits on etcd.
func TestANewReadStopsTheOneThatRuns(t *testing.T) {
	src := cluster()
	src.PutObject(nodeLease("node-1", t0.Add(100*time.Second))) // the head, not a ConfigMap
	m := New(uitest.Common(src))
	m.SetSize(120, 16)
	old := m.Open(changes.Range{Prefix: "/registry/configmaps/", From: 2})
	answered := make(chan tea.Msg, 1)
	go func() {
		for _, cmd := range old().(tea.BatchMsg) {
			if msg := cmd(); msg != nil {
				answered <- msg
			}
		}
	}()
	// Its progress: the last ConfigMap is at 22, of revisions 2-23.
	waitUntil(t, func() bool { return strings.Contains(m.View(), "reading revisions 2-23: at 22, 95%") }, m.View)

	uitest.Drive(t, m.Update, m.Open(changes.Range{From: 2}))
	waitGoroutinesGone(t, "changes.(*Window).watch")
	select {
	case msg := <-answered:
		m.Update(msg)
	case <-time.After(uitest.Deadline):
		t.Fatal("the stopped read did not answer")
	}
	got := m.View()
	if !strings.Contains(got, "revisions 2-23 of every key") || strings.Contains(got, "context canceled") {
		t.Errorf("the screen after the stopped read answered:\n%s", got)
	}
}

// waitGoroutinesGone fails unless, within uitest.Deadline, no goroutine
// runs fn.
func waitGoroutinesGone(t *testing.T, fn string) {
	t.Helper()
	var stacks string
	gone := func() bool {
		buf := make([]byte, 1<<20)
		stacks = string(buf[:runtime.Stack(buf, true)])
		return !strings.Contains(stacks, fn+"(")
	}
	waitUntil(t, gone, func() string { return "a goroutine still runs " + fn + ":\n" + stacks })
}

// waitUntil polls ok until it holds, and fails with what says why when it
// does not within uitest.Deadline.
func waitUntil(t *testing.T, ok func() bool, what func() string) {
	t.Helper()
	deadline := time.Now().Add(uitest.Deadline)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v:\n%s", uitest.Deadline, what())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The writer of the last change comes first, each time as a time of day
// when the window is within one day, the header giving the date.
func TestRowsNameTheNewestWriterFirst(t *testing.T) {
	m := New(uitest.Common(rollout(t)))
	m.SetSize(200, 16)
	uitest.Drive(t, m.Update, m.Open(changes.Range{From: 2}))
	got := m.View()
	want := "web                   +1 ~1 -0  rev 6-8  ≈ 10:00:21  by kubectl Update scale 10:00:21, deploy-tool Apply 10:00:12  "
	if !strings.Contains(got, want) {
		t.Errorf("no %q in\n%s", want, got)
	}
	if !strings.Contains(got, "→ ≥ 2026-12-01T10:00:30Z") {
		t.Errorf("the header does not give the date:\n%s", got)
	}
}

// A window over two days gives every time whole.
func TestRowsOfAWindowOverDaysGiveTheDates(t *testing.T) {
	src := rollout(t)
	src.PutObject(nodeLease("node-1", t0.Add(24*time.Hour)))
	m := New(uitest.Common(src))
	m.SetSize(200, 16)
	uitest.Drive(t, m.Update, m.Open(changes.Range{From: 2}))
	got := m.View()
	if want := "by kubectl Update scale 2026-12-01T10:00:21Z, deploy-tool Apply 2026-12-01T10:00:12Z"; !strings.Contains(got, want) {
		t.Errorf("no %q in\n%s", want, got)
	}
}

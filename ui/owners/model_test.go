package owners

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/ui/common"
	"github.com/etcdscope/etcdscope/ui/uitest"
	"github.com/muesli/termenv"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

func init() { lipgloss.SetColorProfile(termenv.Ascii) }

var created = metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))

func meta(ns, name, uid string, owner ...metav1.OwnerReference) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(uid), CreationTimestamp: created, OwnerReferences: owner}
}

func ref(apiVersion, kind, name, uid string) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: types.UID(uid), Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
}

// workload is a store with a Deployment's ReplicaSet and two Pods, a
// ConfigMap whose owner no object is, and an Event (which the garbage
// collector, and the pane, pass over) that claims to own a Pod.
func workload() *uitest.Source {
	src := uitest.New()
	src.PutObject(&appsv1.Deployment{ObjectMeta: meta("default", "web", "uid-deploy")})
	src.PutObject(&appsv1.ReplicaSet{ObjectMeta: meta("default", "web-7d9c", "uid-rs", ref("apps/v1", "Deployment", "web", "uid-deploy"))})
	for _, name := range []string{"web-7d9c-a", "web-7d9c-b"} {
		src.PutObject(&corev1.Pod{ObjectMeta: meta("default", name, "uid-"+name, ref("apps/v1", "ReplicaSet", "web-7d9c", "uid-rs"))})
	}
	src.PutObject(&corev1.ConfigMap{ObjectMeta: meta("default", "orphan", "uid-cm", ref("apps/v1", "ReplicaSet", "gone", "uid-gone"))})
	src.PutObject(&eventsv1.Event{ObjectMeta: meta("default", "web.1", "uid-ev"), EventTime: metav1.MicroTime(created)})
	src.PutObject(&corev1.Pod{ObjectMeta: meta("default", "claimed", "uid-claimed", ref("events.k8s.io/v1", "Event", "web.1", "uid-ev"))})
	return src
}

// recorder is a pane's update that keeps the intents it sends the app.
type recorder struct {
	m    *Model
	msgs []tea.Msg
}

func (r *recorder) update(msg tea.Msg) tea.Cmd {
	switch msg.(type) {
	case common.OpenObjectMsg, common.FlashMsg, CloseMsg:
		r.msgs = append(r.msgs, msg)
		return nil
	}
	return r.m.Update(msg)
}

func (r *recorder) last() tea.Msg {
	if len(r.msgs) == 0 {
		return nil
	}
	return r.msgs[len(r.msgs)-1]
}

func open(t *testing.T, src *uitest.Source, key string) *recorder {
	t.Helper()
	m := New(uitest.Common(src))
	m.SetSize(120, 20)
	m.Focus(true)
	r := &recorder{m: m}
	uitest.Drive(t, r.update, m.Open(key, 0))
	return r
}

func TestTreeFromTheRootDownToThePodAndIntoTheObjectPane(t *testing.T) {
	src := workload()
	r := open(t, src, "/registry/pods/default/web-7d9c-b")
	got := r.m.View()
	for _, want := range []string{
		"owners of /registry/pods/default/web-7d9c-b",
		"at revision 8 · 3 rows",
		"  Deployment/web          default                  2  2026-01-02 03:04",
		"  └─ ReplicaSet/web-7d9c  default                  3  2026-01-02 03:04",
		">    └─ Pod/web-7d9c-b    default                  5  2026-01-02 03:04  this object",
		"this object",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in\n%s", want, got)
		}
	}
	if strings.Contains(got, "web-7d9c-a") {
		t.Errorf("the pod's tree shows its sibling:\n%s", got)
	}
	uitest.Press(t, r.update, "g", "enter")
	want := common.OpenObjectMsg{Key: "/registry/deployments/default/web", Rev: src.Revision(), Focus: true}
	if r.last() != want {
		t.Errorf("enter on the root sent %#v, want %#v", r.last(), want)
	}
	uitest.Press(t, r.update, "esc")
	if _, ok := r.last().(CloseMsg); !ok {
		t.Errorf("esc sent %#v, want CloseMsg", r.last())
	}
}

func TestAMissingOwnerIsARowThatOpensNothing(t *testing.T) {
	r := open(t, workload(), "/registry/configmaps/default/orphan")
	got := r.m.View()
	if !strings.Contains(got, "ReplicaSet/gone") || !strings.Contains(got, "missing: no object has this uid") {
		t.Fatalf("no missing owner in\n%s", got)
	}
	uitest.Press(t, r.update, "g", "enter")
	if f, ok := r.last().(common.FlashMsg); !ok || !strings.Contains(f.Text, "nothing to open") {
		t.Errorf("enter on the missing owner sent %#v", r.last())
	}
}

func TestEventsAreNotInTheGraph(t *testing.T) {
	// The pod's owner is an Event: the collector, and the pane, never
	// read Events, so to them it is missing.
	r := open(t, workload(), "/registry/pods/default/claimed")
	if got := r.m.View(); !strings.Contains(got, "Event/web.1") || !strings.Contains(got, "missing") {
		t.Errorf("the Event owner is not shown missing:\n%s", got)
	}
	r = open(t, workload(), "/registry/events/default/web.1")
	if got := r.m.View(); !strings.Contains(got, "the garbage collector ignores Events") {
		t.Errorf("an Event opened:\n%s", got)
	}
}

func TestBadKeysAndRevisionsSayWhy(t *testing.T) {
	src := workload()
	r := open(t, src, "/registry/pods/default/nope")
	if got := r.m.View(); !strings.Contains(got, "/registry/pods/default/nope: no object with metadata at revision") {
		t.Errorf("a missing key:\n%s", got)
	}
	src.Compact(5)
	m := New(uitest.Common(src))
	m.SetSize(120, 20)
	uitest.Drive(t, m.Update, m.Open("/registry/deployments/default/web", 3))
	if got := m.View(); !strings.Contains(got, "compacted") {
		t.Errorf("a compacted revision:\n%s", got)
	}
}

func TestAReadInProgressCountsAndStops(t *testing.T) {
	src := workload()
	m := New(uitest.Common(src))
	m.SetSize(120, 20)
	read := m.Open("/registry/pods/default/web-7d9c-a", 0) // not run yet
	if got := m.View(); !strings.Contains(got, "0 values read (esc stops)") {
		t.Errorf("a read in progress:\n%s", got)
	}
	r := &recorder{m: m}
	uitest.Press(t, r.update, "esc")
	if _, ok := r.last().(CloseMsg); !ok || m.loading {
		t.Errorf("esc during a read: %#v, loading %v", r.last(), m.loading)
	}
	// The read, stopped, answers: nothing of it shows.
	r.msgs = nil
	uitest.Drive(t, r.update, read)
	if len(r.msgs) != 0 || m.err != nil || m.g != nil {
		t.Errorf("a stopped read's answer was taken: %v, err %v", r.msgs, m.err)
	}
}

// failingPods is a store whose pages of Pods cannot be read.
type failingPods struct{ *uitest.Source }

func (f failingPods) List(ctx context.Context, prefix string, rev int64, page etcdview.PageToken) (etcdview.Page, error) {
	if prefix == "/registry/pods/" {
		return etcdview.Page{}, errors.New("connection reset")
	}
	return f.Source.List(ctx, prefix, rev, page)
}

func TestAPageThatFailsSaysWhichDirectoryAtWhichRevision(t *testing.T) {
	src := workload()
	c := uitest.Common(src)
	c.Src = failingPods{src}
	m := New(c)
	m.SetSize(200, 20)
	uitest.Drive(t, m.Update, m.Open("/registry/deployments/default/web", 0))
	want := fmt.Sprintf("owners of /registry/deployments/default/web: read /registry/pods/ at revision %d: connection reset", src.Revision())
	if got := m.View(); !strings.Contains(got, want) || m.g != nil {
		t.Errorf("a page of Pods that fails:\n%s\nwant %q", got, want)
	}
}

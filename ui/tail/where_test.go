package tail

import (
	"fmt"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/etcdscope/etcdscope/decode/where"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/ui/uitest"
)

// podKV is a pod of phase at rev, stored as JSON.
func podKV(name, phase string, rev int64) etcdview.KV {
	v := fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":%q,"namespace":"shop"},"status":{"phase":%q}}`, name, phase)
	return etcdview.KV{Key: "/registry/pods/shop/" + name, Value: []byte(v), ModRevision: rev}
}

// whereEvents are a pod created Running, one Pending, a ConfigMap (no
// status), a Running pod deleted (its value before: the event's Prev), a
// note, and a pod turned Running.
func whereEvents() etcdview.Batch {
	cm := etcdview.KV{Key: "/registry/configmaps/shop/cfg", ModRevision: 3,
		Value: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cfg","namespace":"shop"}}`)}
	gone, before := podKV("gone", "Running", 4), podKV("gone", "Running", 1)
	gone.Value = nil
	return etcdview.Batch{Revision: 5, Note: "leader changed", Events: []etcdview.Event{
		{Type: etcdview.Added, KV: podKV("web-0", "Running", 1)},
		{Type: etcdview.Added, KV: podKV("web-1", "Pending", 2)},
		{Type: etcdview.Added, KV: cm},
		{Type: etcdview.Deleted, KV: gone, Prev: &before},
		{Type: etcdview.Modified, KV: podKV("web-1", "Running", 5), Prev: ptr(podKV("web-1", "Pending", 2))},
	}}
}

func ptr[T any](v T) *T { return &v }

func setWhere(t *testing.T, m *Model, expr string) {
	t.Helper()
	f, err := where.Compile(expr)
	if err != nil {
		t.Fatal(err)
	}
	uitest.Drive(t, m.Update, m.SetWhere(expr, f.Match))
}

func shownNames(m *Model) []string {
	var names []string
	for i := range m.n() {
		r := m.ring.At(m.seqAt(i))
		names = append(names, fmt.Sprintf("%s %s", r.Type, r.Name))
	}
	return names
}

func TestWhereFiltersTheTailAndCountsWhatItHides(t *testing.T) {
	m := newTail(100)
	m.SetSize(160, 12)
	m.Update(BatchesMsg{Batches: []etcdview.Batch{whereEvents()}})
	setWhere(t, m, `object.status.phase == "Running"`)

	want := []string{"ADDED web-0", "DELETED gone", "MODIFIED web-1", " "}
	if got := shownNames(m); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("rows shown: %q, want %q", got, want)
	}
	got := m.View()
	if !strings.Contains(got, `where object.status.phase == "Running": 3 shown, 1 hidden, 1 could not evaluate (last: shop/cfg: no such key: status)`) {
		t.Errorf("header lacks the counts:\n%s", got)
	}

	// Events read after the :where are judged as the watch's reader reads
	// them.
	ch := make(chan etcdview.Batch, 1)
	ch <- etcdview.Batch{Revision: 7, Events: []etcdview.Event{
		{Type: etcdview.Added, KV: podKV("web-2", "Running", 6)},
		{Type: etcdview.Added, KV: podKV("web-3", "Failed", 7)},
	}}
	close(ch)
	uitest.Drive(t, m.Update, readBatches(m.common, ch, &m.current))
	if got := m.View(); !strings.Contains(got, "4 shown, 2 hidden, 1 could not evaluate") || !strings.Contains(got, "shop/web-2") || strings.Contains(got, "shop/web-3") {
		t.Errorf("after two more events:\n%s", got)
	}

	// :where with no expression clears it.
	uitest.Drive(t, m.Update, m.SetWhere("", nil))
	if got := m.View(); m.n() != 9 || strings.Contains(got, "where ") {
		t.Errorf("cleared: %d rows\n%s", m.n(), got)
	}
}

func TestWhereReplacedAndClearedByEsc(t *testing.T) {
	m := newTail(100)
	m.SetSize(160, 12)
	m.Update(BatchesMsg{Batches: []etcdview.Batch{whereEvents()}})
	setWhere(t, m, `object.status.phase == "Running"`)
	setWhere(t, m, `object.kind == "ConfigMap"`)
	if got := shownNames(m); strings.Join(got, ",") != "ADDED cfg, " {
		t.Errorf("the second :where shows %q", got)
	}
	if got := m.View(); !strings.Contains(got, `1 shown, 4 hidden, 0 could not evaluate`) {
		t.Errorf("counts of the second :where:\n%s", got)
	}
	uitest.Press(t, m.Update, "esc")
	if m.n() != 6 || m.where.rule != nil {
		t.Errorf("esc left %d rows, rule %v", m.n(), m.where.rule)
	}
}

// TestWhereCountsOnlyWhatTheRingHolds drops judged rows out of a small
// ring: the counts follow.
func TestWhereCountsOnlyWhatTheRingHolds(t *testing.T) {
	m := newTail(3)
	setWhere(t, m, `object.status.phase == "Running"`)
	for i := range 5 {
		phase := []string{"Running", "Pending"}[i%2]
		ev := etcdview.Event{Type: etcdview.Added, KV: podKV(fmt.Sprint("p-", i), phase, int64(i+1))}
		ch := make(chan etcdview.Batch, 1)
		ch <- etcdview.Batch{Revision: int64(i + 1), Events: []etcdview.Event{ev}}
		uitest.Drive(t, m.Update, readBatches(m.common, ch, &m.current))
	}
	// Held: p-2 Running, p-3 Pending, p-4 Running.
	if c := m.where.counts; c[kept] != 2 || c[hidden] != 1 || c[failed] != 0 {
		t.Errorf("counts %v over a ring of 3 after 5 pods", c)
	}
}

// TestWhereSweepsRowsHeldBeforeIt judges rows whose values left the
// recent cache by reading them again from the source.
func TestWhereSweepsRowsHeldBeforeIt(t *testing.T) {
	src := uitest.New()
	m := New(uitest.Common(src), 2000, nil)
	m.SetSize(160, 12)
	var b etcdview.Batch
	for i := range recentValues + 100 {
		kv := podKV(fmt.Sprint("p-", i), []string{"Running", "Pending"}[i%2], 0)
		kv.ModRevision = src.Put(kv.Key, kv.Value)
		b.Events = append(b.Events, etcdview.Event{Type: etcdview.Added, KV: kv})
		b.Revision = kv.ModRevision
	}
	m.Update(BatchesMsg{Batches: []etcdview.Batch{b}})
	setWhere(t, m, `object.status.phase == "Pending"`)
	if c := m.where.counts; c[kept] != 306 || c[hidden] != 306 || c[failed] != 0 {
		t.Errorf("counts %v, want 306 kept and 306 hidden", c)
	}
	if got := m.View(); strings.Contains(got, "to judge") {
		t.Errorf("the sweep did not finish:\n%s", got)
	}
}

// TestWhereJudgesEventsReadBeforeIt: events the watch's reader read under
// no :where, or an older one, and handed over after it was set, are judged
// by the sweep.
func TestWhereJudgesEventsReadBeforeIt(t *testing.T) {
	m := newTail(100)
	setWhere(t, m, `object.status.phase == "Running"`)
	uitest.Drive(t, m.Update, func() tea.Msg { return BatchesMsg{Batches: []etcdview.Batch{whereEvents()}} })
	if c := m.where.counts; c[kept] != 3 || c[hidden] != 1 || c[failed] != 1 || len(m.where.late) != 0 {
		t.Errorf("counts %v, %d left to judge; want 3 kept, 1 hidden, 1 failed", c, len(m.where.late))
	}
}

// TestWhereJudgesTheTailAsServed: the tail's :where sees an object as get
// --where and the browse level's do, as kube-apiserver serves it: a pod
// stored without a spec is defaulted on read (restartPolicy Always).
func TestWhereJudgesTheTailAsServed(t *testing.T) {
	m := newTail(100)
	m.SetSize(160, 12)
	m.Update(BatchesMsg{Batches: []etcdview.Batch{whereEvents()}})
	setWhere(t, m, `object.spec.restartPolicy == "Always"`)
	if got := m.View(); !strings.Contains(got, `4 shown, 0 hidden, 1 could not evaluate (last: shop/cfg: no such key: spec)`) {
		t.Errorf("the pods, stored without a restartPolicy, are not judged as served:\n%s", got)
	}
}

// TestWhereNamesTheKeyOfANamelessObject: a singleton, such as the service
// IP range allocator's, has no namespace or name; the failure is named by
// its key, not by an empty name.
func TestWhereNamesTheKeyOfANamelessObject(t *testing.T) {
	m := newTail(100)
	m.SetSize(200, 12)
	rng := etcdview.KV{Key: "/registry/ranges/serviceips", ModRevision: 2,
		Value: []byte(`{"apiVersion":"v1","kind":"RangeAllocation","metadata":{},"range":"10.96.0.0/12"}`)}
	m.Update(BatchesMsg{Batches: []etcdview.Batch{{Revision: 2, Events: []etcdview.Event{{Type: etcdview.Modified, KV: rng, Prev: &rng}}}}})
	setWhere(t, m, `object.metadata.namespace == "lab"`)
	if got := m.View(); !strings.Contains(got, "(last: /registry/ranges/serviceips: no such key: namespace)") {
		t.Errorf("the failure of the range allocator is not named by its key:\n%s", got)
	}
}

package changes

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/etcdview/etcdviewtest"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
)

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

func encode(t testing.TB, obj k8sruntime.Object) (string, []byte) {
	t.Helper()
	key, err := etcdviewtest.Key(obj)
	if err != nil {
		t.Fatal(err)
	}
	v, err := etcdviewtest.Encode(obj)
	if err != nil {
		t.Fatal(err)
	}
	return key, v
}

func entry(manager string, op metav1.ManagedFieldsOperationType, sub string, at time.Time, fields string) metav1.ManagedFieldsEntry {
	mt := metav1.NewTime(at)
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, Subresource: sub, Time: &mt, APIVersion: "apps/v1",
		FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(fields)}}
}

func deployment(replicas int32, labels map[string]string, mf ...metav1.ManagedFieldsEntry) *appsv1.Deployment {
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "u-web", CreationTimestamp: metav1.NewTime(t0), Labels: labels, ManagedFields: mf},
		Spec:       appsv1.DeploymentSpec{Replicas: &replicas},
	}
}

func configMap(ns, name, data string, mf ...metav1.ManagedFieldsEntry) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, CreationTimestamp: metav1.NewTime(t0.Add(-time.Hour)), ManagedFields: mf},
		Data:       map[string]string{"k": data},
	}
}

// history builds the events of a scripted sequence, as a watch with
// previous values delivers them: each write's Prev is the key's value
// before it.
type history struct {
	t      *testing.T
	rev    int64
	values map[string][]byte
	revs   map[string]int64
	events []etcdview.Event
}

func newHistory(t *testing.T, rev int64) *history {
	return &history{t: t, rev: rev, values: map[string][]byte{}, revs: map[string]int64{}}
}

// event is a change of key at rev, with the value before it (none when
// prev is nil), as a watch with previous values delivers it.
func event(typ etcdview.EventType, key string, rev int64, value, prev []byte, prevRev int64) etcdview.Event {
	ev := etcdview.Event{Type: typ, KV: etcdview.KV{Key: key, ModRevision: rev, Value: value}}
	if typ != etcdview.Deleted {
		ev.KV.CreateRevision = rev
	}
	if prev != nil {
		ev.Prev = &etcdview.KV{Key: key, Value: prev, ModRevision: prevRev}
	}
	return ev
}

// before sets what a key held before the window, without an event.
func (h *history) before(obj k8sruntime.Object) {
	key, v := encode(h.t, obj)
	h.rev++
	h.values[key], h.revs[key] = v, h.rev
}

func (h *history) write(obj k8sruntime.Object) {
	key, v := encode(h.t, obj)
	h.rev++
	typ := etcdview.Modified
	if h.values[key] == nil {
		typ = etcdview.Added
	}
	h.events = append(h.events, event(typ, key, h.rev, v, h.values[key], h.revs[key]))
	h.values[key], h.revs[key] = v, h.rev
}

func (h *history) remove(obj k8sruntime.Object) {
	key, _ := encode(h.t, obj)
	h.rev++
	h.events = append(h.events, event(etcdview.Deleted, key, h.rev, nil, h.values[key], h.revs[key]))
	delete(h.values, key)
}

// window is the reported window of the events written.
func (h *history) window() Window {
	var w Window
	for _, ev := range h.events {
		w.add(ev)
	}
	w.report(decode.Decoder{})
	return w
}

func findObject(t *testing.T, r Window, resource, ns, name string) (Group, Object) {
	t.Helper()
	for _, g := range r.Groups {
		if g.Resource != resource || g.Namespace != ns {
			continue
		}
		for _, o := range g.Objects {
			if o.Name == name {
				return g, o
			}
		}
	}
	t.Fatalf("no %s %s/%s in the report: %+v", resource, ns, name, r.Groups)
	return Group{}, Object{}
}

func TestWindowCountsAndSummarisesEachObject(t *testing.T) {
	h := newHistory(t, 100)
	h.before(configMap("default", "settings", "a", entry("kubectl-create", "Update", "", t0.Add(-time.Hour), `{"f:data":{}}`)))
	h.before(configMap("default", "old", "x"))
	from := h.rev + 1

	create := entry("deploy-tool", "Update", "", t0.Add(time.Minute), `{"f:spec":{}}`)
	h.write(deployment(1, nil, create))
	scale := entry("autoscaler", "Update", "scale", t0.Add(2*time.Minute), `{"f:spec":{"f:replicas":{}}}`)
	h.write(deployment(3, nil, create, scale))
	label := entry("labeller", "Update", "", t0.Add(3*time.Minute), `{"f:metadata":{"f:labels":{}}}`)
	h.write(deployment(3, map[string]string{"tier": "web"}, create, scale, label))
	h.write(configMap("default", "settings", "b", entry("kubectl-edit", "Update", "", t0.Add(4*time.Minute), `{"f:data":{}}`)))
	h.remove(configMap("default", "old", "x"))
	h.write(configMap("kube-system", "brief", "y"))
	h.remove(configMap("kube-system", "brief", "y"))

	r := h.window()
	if first, last := span(r); first != from || last != h.rev || r.Events != 7 {
		t.Errorf("window %d-%d with %d events, want %d-%d with 7", first, last, r.Events, from, h.rev)
	}
	if want := (Counts{Added: 2, Modified: 3, Deleted: 2}); r.Counts != want {
		t.Errorf("counts %+v, want %+v", r.Counts, want)
	}
	tests := []struct {
		resource, ns, name string
		group              Counts
		object             Counts
		summary            string
		writers            []string
	}{
		{"deployments", "default", "web", Counts{Added: 1, Modified: 2}, Counts{Added: 1, Modified: 2}, "created",
			[]string{"deploy-tool Update 2026-12-01T10:01:00Z", "autoscaler Update scale 2026-12-01T10:02:00Z", "labeller Update 2026-12-01T10:03:00Z"}},
		{"configmaps", "default", "settings", Counts{Modified: 1, Deleted: 1}, Counts{Modified: 1}, "data.k a→b",
			[]string{"kubectl-edit Update 2026-12-01T10:04:00Z"}},
		{"configmaps", "default", "old", Counts{Modified: 1, Deleted: 1}, Counts{Deleted: 1}, "deleted", nil},
		{"configmaps", "kube-system", "brief", Counts{Added: 1, Deleted: 1}, Counts{Added: 1, Deleted: 1}, "created, then deleted", nil},
	}
	for _, tc := range tests {
		g, o := findObject(t, r, tc.resource, tc.ns, tc.name)
		if g.Counts != tc.group {
			t.Errorf("%s in %s: group counts %+v, want %+v", tc.resource, tc.ns, g.Counts, tc.group)
		}
		if o.Counts != tc.object || o.Summary != tc.summary {
			t.Errorf("%s %s/%s: %+v %q, want %+v %q", tc.resource, tc.ns, tc.name, o.Counts, o.Summary, tc.object, tc.summary)
		}
		var writers []string
		for _, w := range o.Writers {
			writers = append(writers, w.String())
		}
		if fmt.Sprint(writers) != fmt.Sprint(tc.writers) {
			t.Errorf("%s %s/%s: writers %q, want %q", tc.resource, tc.ns, tc.name, writers, tc.writers)
		}
	}
	if g := r.Groups[0]; g.Group != "" || g.Resource != "configmaps" || g.Namespace != "default" {
		t.Errorf("first group %s/%s in %s, want the core group's configmaps in default first", g.Group, g.Resource, g.Namespace)
	}
}

// The summary compares the value before the window with the last one: a
// field written three times shows once, from its first value to its last.
func TestSummaryIsFromBeforeTheWindowToItsEnd(t *testing.T) {
	h := newHistory(t, 10)
	h.before(deployment(1, nil))
	for _, n := range []int32{2, 5, 3} {
		h.write(deployment(n, nil))
	}
	_, o := findObject(t, h.window(), "deployments", "default", "web")
	if o.Summary != "spec.replicas 1→3" || o.Modified != 3 {
		t.Errorf("summary %q after %d writes, want spec.replicas 1→3 after 3", o.Summary, o.Modified)
	}
	if o.FirstRevision != 12 || o.LastRevision != 14 {
		t.Errorf("revisions %d-%d, want 12-14", o.FirstRevision, o.LastRevision)
	}
}

func TestSummaryWithoutTheValueBeforeSaysItIsGone(t *testing.T) {
	key, v := encode(t, deployment(2, nil))
	var w Window
	ev := event(etcdview.Modified, key, 50, v, nil, 0)
	ev.KV.CreateRevision = 3
	w.add(ev)
	w.report(decode.Decoder{})
	_, o := findObject(t, w, "deployments", "default", "web")
	if o.Summary != "(the value before the window is gone)" {
		t.Errorf("summary %q", o.Summary)
	}
}

func TestKeysThatAreNotObjectsAreGroupedApart(t *testing.T) {
	var r Window
	r.add(event(etcdview.Added, "compact_rev_key", 7, []byte("6"), nil, 0))
	r.add(event(etcdview.Added, "/registry/\x1b]0;x\x07", 8, []byte("v"), nil, 0))
	r.report(decode.Decoder{})
	if len(r.Groups) != 1 || r.Groups[0].Resource != "" || len(r.Groups[0].Objects) != 2 {
		t.Fatalf("groups %+v, want one group of the two keys", r.Groups)
	}
	for _, o := range r.Groups[0].Objects {
		if strings.ContainsRune(o.Name, 0x1b) {
			t.Errorf("name %q carries an escape byte", o.Name)
		}
	}
}

// A window of 100k revisions over a few keys holds two values per key,
// not one per revision.
func TestWindowMemoryDoesNotGrowWithRevisions(t *testing.T) {
	const keys, revisions, size = 10, 100_000, 1024
	heap := func() uint64 {
		runtime.GC()
		var s runtime.MemStats
		runtime.ReadMemStats(&s)
		return s.HeapAlloc
	}
	start := heap()
	var w Window
	prev := make([][]byte, keys)
	for rev := range revisions {
		k := rev % keys
		v := make([]byte, size)
		v[0] = byte(rev)
		w.add(event(etcdview.Modified, fmt.Sprintf("/registry/configmaps/default/cm-%d", k), int64(rev+1), v, prev[k], 0))
		prev[k] = v
	}
	grown := int64(heap()) - int64(start)
	runtime.KeepAlive(w)
	// Every value would be 100 MiB; two per key are 20 KiB.
	if limit := int64(4 << 20); grown > limit {
		t.Errorf("the window holds %d bytes after %d revisions of %d keys, more than %d", grown, revisions, keys, limit)
	}
	if w.Events != revisions {
		t.Errorf("%d events counted, want %d", w.Events, revisions)
	}
}

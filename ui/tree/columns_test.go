package tree

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/decode/table"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/ui/uitest"
	corev1 "k8s.io/api/core/v1"
)

// countingSource counts the reads of values: the ranges the rows in view
// are read with.
type countingSource struct {
	*uitest.Source
	valueReads atomic.Int64
}

func (s *countingSource) List(ctx context.Context, prefix string, rev int64, page etcdview.PageToken) (etcdview.Page, error) {
	if page.Values {
		s.valueReads.Add(1)
	}
	return s.Source.List(ctx, prefix, rev, page)
}

// openOn is a tree of 60x20 on src, its root read.
func openOn(t *testing.T, src etcdview.Source, opts Options, holdRows bool) *harness {
	t.Helper()
	c := uitest.Common(nil)
	c.Src = src
	h := &harness{t: t, clock: new(uitest.Clock), holdRows: holdRows}
	c.Tick = h.clock.Tick
	if opts.Now == nil {
		opts.Now = func() time.Time { return testNow }
	}
	h.Model = New(c, opts)
	h.SetSize(60, 20)
	h.drive(h.Init())
	return h
}

// cells are the columns of the row of name in view, split where two or
// more spaces part them; nil when no row shows name.
func cells(view, name string) []string {
	for _, line := range strings.Split(view, "\n") {
		f := regexp.MustCompile(`\s{2,}`).Split(strings.TrimSpace(strings.TrimPrefix(line, ">")), -1)
		if len(f) > 0 && f[0] == name {
			return f
		}
	}
	return nil
}

func TestColumnsAppearForRowsInViewAfterTheirRead(t *testing.T) {
	m := openOn(t, uitest.Fixture(), Options{}, true)
	m.drive(m.GoTo("/registry/pods/default/"))
	before := m.View()
	if got := cells(before, "web-0"); fmt.Sprint(got) != "[web-0 …]" {
		t.Errorf("before its read, web-0 shows %q, want its name and …:\n%s", got, before)
	}
	if strings.Contains(before, "STATUS") {
		t.Errorf("columns named before any row was read:\n%s", before)
	}
	if len(m.heldRows) != 1 || len(m.heldRows[0].asked) != 2 {
		t.Fatalf("reads of rows: %d, want one range for both keys", len(m.heldRows))
	}
	m.holdRows = false
	m.drive(m.hand(m.heldRows[0]))
	after := m.View()
	if !strings.Contains(after, "NAME   READY  STATUS   RESTARTS  AGE     REVISION") {
		t.Errorf("no kubectl columns for pods:\n%s", after)
	}
	if got := cells(after, "web-0"); fmt.Sprint(got) != "[web-0 0/1 Running 0 90m 12]" {
		t.Errorf("web-0 shows %q", got)
	}
}

func TestColumnsAreWhatGetPrintsForTheSameObjects(t *testing.T) {
	src := uitest.Fixture()
	m := openOn(t, src, Options{}, false)
	m.drive(m.GoTo("/registry/pods/default/"))
	m.SetSize(200, 20)
	res, _ := table.BuiltinResolver(context.Background(), "pods", 0)
	for _, name := range []string{"web-0", "web-1"} {
		kv, err := src.Get(context.Background(), "/registry/pods/default/"+name, 0)
		if err != nil {
			t.Fatal(err)
		}
		o := decode.Decoder{JSONOnly: true}.DecodeAt(kv.Key, kv.Value, kv.ModRevision)
		obj, err := res.Object(o.Object, kv.ModRevision)
		if err != nil {
			t.Fatal(err)
		}
		tbl, _, err := res.Table([]table.Object{obj}, false)
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for j, c := range tbl.Rows[0].Cells {
			if tbl.ColumnDefinitions[j].Priority == 0 && tbl.ColumnDefinitions[j].Name != "Age" {
				want = append(want, fmt.Sprint(c))
			}
		}
		got := cells(m.View(), name)
		if len(got) == 6 {
			got = append(got[:4:4], got[5]) // AGE aside
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: the tree shows %q, get's table %q", name, got, want)
		}
	}
}

func TestRowsComeFromTheCacheOnRevisit(t *testing.T) {
	src := &countingSource{Source: uitest.New()}
	for i := range 100 {
		src.PutObject(uitest.Pod("default", fmt.Sprintf("pod-%03d", i), "nginx", true))
	}
	m := openOn(t, src, Options{}, false)
	m.drive(m.GoTo("/registry/pods/default/"))
	if cells(m.View(), "pod-000") == nil || len(cells(m.View(), "pod-000")) < 3 {
		t.Fatalf("pod-000 has no columns:\n%s", m.View())
	}
	m.press("G")
	if got := cells(m.View(), "pod-099"); len(got) < 3 {
		t.Fatalf("pod-099 has no columns: %q", got)
	}
	reads := src.valueReads.Load()
	m.press("g")
	if got := cells(m.View(), "pod-000"); len(got) < 3 {
		t.Errorf("back at the top, pod-000 shows %q", got)
	}
	if n := src.valueReads.Load(); n != reads {
		t.Errorf("going back to rows read before read values %d more times, want none", n-reads)
	}
}

func TestRevReadsTheValuesAtThatRevisionWithEstimatedAges(t *testing.T) {
	src := uitest.Fixture()
	old := src.Revision()
	failed := uitest.Pod("default", "web-0", "nginx:1.29", true)
	failed.Status.Phase, failed.Status.Reason = corev1.PodFailed, "Evicted"
	src.PutObject(failed)
	m := openOn(t, src, Options{}, false)
	m.drive(m.GoTo("/registry/pods/default/"))
	if got := cells(m.View(), "web-0"); len(got) < 3 || got[2] != "Evicted" {
		t.Fatalf("at the head web-0 shows %q, want Evicted", got)
	}
	m.drive(m.SetRev(old))
	view := m.View()
	if got := cells(view, "web-0"); len(got) < 3 || got[2] != "Running" {
		t.Errorf("as of revision %d web-0 shows %q, want Running", old, got)
	}
	if !strings.Contains(view, "ages at ≥ 03:04:05Z") {
		t.Errorf("the header does not say when the ages count to:\n%s", view)
	}
}

func TestAValueThatDoesNotDecodeShowsWhy(t *testing.T) {
	src := uitest.Fixture()
	src.Put("/registry/pods/default/broken", []byte("k8s\x00\x0a\x09garbage"))
	m := openOn(t, src, Options{}, false)
	m.drive(m.GoTo("/registry/pods/default/"))
	view := m.View()
	got := cells(view, "broken")
	if len(got) != 2 || !strings.HasPrefix(got[1], "does not decode:") {
		t.Errorf("the broken value shows %q:\n%s", got, view)
	}
	if got := cells(view, "web-1"); len(got) != 6 {
		t.Errorf("web-1 beside it shows %q", got)
	}
}

func TestAHostileCellIsInert(t *testing.T) {
	src := uitest.Fixture()
	p := uitest.Pod("default", "web-2", "nginx", true)
	p.Status.Reason = "\x1b]0;pwned\x07\u202eevil"
	src.PutObject(p)
	m := openOn(t, src, Options{}, false)
	m.drive(m.GoTo("/registry/pods/default/"))
	m.SetSize(200, 20)
	view := m.View()
	if bad := uitest.Active(view); len(bad) > 0 {
		t.Errorf("the screen holds active characters: %v", bad)
	}
	if !strings.Contains(view, `\x1b]0;pwned\x07\u202eevil`) {
		t.Errorf("the reason is not shown as visible escapes:\n%s", view)
	}
}

const widgetCRD = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.example.com"},
"spec":{"group":"example.com","scope":"Cluster","names":{"plural":"widgets","singular":"widget","kind":"Widget"},
"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object",
"properties":{"size":{"type":"integer"}}}}}},"additionalPrinterColumns":[{"name":"Size","type":"integer","jsonPath":".spec.size"}]}]}}`

func TestCustomResourcesGetTheirPrinterColumnsThroughTheResolver(t *testing.T) {
	src := uitest.New()
	crdKey := "/registry/apiextensions.k8s.io/customresourcedefinitions/widgets.example.com"
	src.Put(crdKey, []byte(widgetCRD))
	src.Put("/registry/example.com/widgets/gear", []byte(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"gear"},"spec":{"size":12}}`))
	var asked []string
	resolve := func(ctx context.Context, name string, rev int64) (*table.Resource, error) {
		asked = append(asked, name)
		kv, err := src.Get(ctx, crdKey, rev)
		if err != nil {
			return nil, err
		}
		return table.Custom(decode.Decoder{JSONOnly: true}.DecodeAt(kv.Key, kv.Value, kv.ModRevision).Object)
	}
	m := openOn(t, src, Options{Resolve: resolve}, false)
	m.drive(m.GoTo("/registry/example.com/widgets/"))
	if fmt.Sprint(asked) != "[widgets.example.com]" {
		t.Errorf("the resolver was asked for %q, want widgets.example.com", asked)
	}
	if got := cells(m.View(), "gear"); fmt.Sprint(got) != "[gear 12 3]" {
		t.Errorf("gear shows %q, want its size and revision:\n%s", got, m.View())
	}
}

// pods is a store of n pods in default, the even ones running.
func pods(n int) *uitest.Source {
	src := uitest.New()
	for i := range n {
		p := uitest.Pod("default", fmt.Sprintf("pod-%04d", i), "nginx", true)
		if i%2 == 1 {
			p.Status.Phase = corev1.PodPending
		}
		src.PutObject(p)
	}
	return src
}

// phase keeps running pods, and cannot evaluate pod-0000.
func phase(obj map[string]any) (bool, error) {
	if obj["metadata"].(map[string]any)["name"] == "pod-0000" {
		return false, errors.New("no such key: phase")
	}
	return obj["status"].(map[string]any)["phase"] == "Running", nil
}

func TestWhereKeepsTheMatchingObjectsAndCounts(t *testing.T) {
	m := openOn(t, pods(10), Options{}, false)
	m.SetSize(120, 20)
	m.drive(m.GoTo("/registry/pods/default/"))
	m.drive(m.SetWhere(`object.status.phase == "Running"`, phase))
	view := m.View()
	if !strings.Contains(view, `where object.status.phase == "Running": 4 of 10 match, 1 could not be evaluated`) {
		t.Errorf("no count of the matches:\n%s", view)
	}
	if m.top().rows() != 4 || cells(view, "pod-0002") == nil || cells(view, "pod-0001") != nil {
		t.Errorf("%d rows, want pod-0002, 4, 6, 8:\n%s", m.top().rows(), view)
	}
	m.drive(m.SetWhere("", nil))
	if m.top().rows() != 10 || strings.Contains(m.View(), "where") {
		t.Errorf("SetWhere(\"\") left %d rows:\n%s", m.top().rows(), m.View())
	}
}

func TestWhereReadsEveryPageAndEscCancels(t *testing.T) {
	m := openOn(t, pods(1200), Options{}, false)
	m.drive(m.GoTo("/registry/pods/default/"))
	cmd := m.SetWhere("running", phase)
	first := cmd().(WhereMsg)
	next := m.Update(first)
	if next == nil || !strings.Contains(m.View(), "where running: reading 500 of 1200…") {
		t.Fatalf("no progress after the first page:\n%s", m.View())
	}
	m.drive(next)
	if got := m.top().rows(); got != 599 {
		t.Errorf("%d rows match over three pages, want 599", got)
	}
	cmd = m.SetWhere("running", phase)
	m.Update(cmd())
	m.press("esc")
	if m.top().where != nil || m.top().rows() != 1200 || strings.Contains(m.View(), "where running") {
		t.Errorf("esc did not cancel the where: %d rows\n%s", m.top().rows(), m.View())
	}
}

func TestAReloadKeepsTheRowsOnScreenUntilTheyAreReadAgain(t *testing.T) {
	src := uitest.Fixture()
	m := openOn(t, src, Options{}, false)
	m.drive(m.GoTo("/registry/pods/default/"))
	evicted := uitest.Pod("default", "web-1", "nginx", true)
	evicted.Status.Phase, evicted.Status.Reason = corev1.PodFailed, "Evicted"
	src.PutObject(evicted)
	m.holdRows = true
	m.drive(m.Reload())
	if got := cells(m.View(), "web-1"); len(got) < 3 || got[2] != "Running" {
		t.Errorf("while read again, web-1 shows %q, want its row as before", got)
	}
	if len(m.heldRows) != 1 {
		t.Fatalf("%d reads of rows after the reload, want one", len(m.heldRows))
	}
	m.holdRows = false
	m.drive(m.hand(m.heldRows[0]))
	if got := cells(m.View(), "web-1"); len(got) < 3 || got[2] != "Evicted" {
		t.Errorf("read again, web-1 shows %q, want Evicted", got)
	}
}

func TestWideTakesTheWidthAndEscGivesItBack(t *testing.T) {
	m := openOn(t, uitest.Fixture(), Options{}, false)
	m.drive(m.GoTo("/registry/pods/default/"))
	m.press("w")
	if !m.Wide() || fmt.Sprint(m.msgs) != fmt.Sprint([]any{WideMsg{On: true}}) {
		t.Errorf("w: wide %v, intents %v", m.Wide(), m.msgs)
	}
	m.press("esc")
	if m.Wide() || m.Prefix() != "/registry/pods/default/" {
		t.Errorf("esc: wide %v at %s, want narrow on the same level", m.Wide(), m.Prefix())
	}
}

func TestRowsOfALevelWhoseRevisionWasCompactedAreReadAtTheHead(t *testing.T) {
	src := uitest.New()
	for i := range 100 {
		src.PutObject(uitest.Pod("default", fmt.Sprintf("pod-%03d", i), "nginx", true))
	}
	m := openOn(t, src, Options{}, false)
	m.drive(m.GoTo("/registry/pods/default/"))
	src.PutObject(uitest.Pod("kube-system", "dns", "coredns", true))
	src.Compact(src.Revision())
	m.press("G")
	if got := cells(m.View(), "pod-099"); len(got) != 6 {
		t.Errorf("after the compaction, pod-099 shows %q:\n%s", got, m.View())
	}
}

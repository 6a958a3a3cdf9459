package timeline

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/ui/uitest"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

func nodeLease(name string, renew time.Time) *coordinationv1.Lease {
	rt := metav1.NewMicroTime(renew)
	return &coordinationv1.Lease{
		TypeMeta:   metav1.TypeMeta{APIVersion: "coordination.k8s.io/v1", Kind: "Lease"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kube-node-lease", CreationTimestamp: metav1.NewTime(t0)},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &name, RenewTime: &rt},
	}
}

func configMap(name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Data:       map[string]string{"k": name},
	}
}

// cluster is a store where a node's Lease is renewed every 10 s, and one
// ConfigMap is written between two renewals, for a minute and a half; a
// second Lease, renewed once, is not the clock.
func cluster(t *testing.T) *uitest.Source {
	src := uitest.New()
	src.PutObject(nodeLease("idle", t0))
	for i := range 10 {
		src.PutObject(nodeLease("node-1", t0.Add(time.Duration(i)*10*time.Second)))
		src.PutObject(configMap(fmt.Sprintf("cm-%d", i)))
	}
	return src
}

func names(w Window) []string {
	var out []string
	for _, g := range w.Groups {
		for _, o := range g.Objects {
			out = append(out, g.Resource+"/"+o.Name)
		}
	}
	return out
}

func TestReadSinceStartsAfterTheRenewalBeforeThatTime(t *testing.T) {
	src := cluster(t)
	// 35 s before the last renewal (at 90 s) is 55 s: after the renewal
	// at 50 s, so cm-5 and later, and the renewals at 60 s and later.
	w, err := Read(t.Context(), src, decode.Decoder{}, Range{Since: 35 * time.Second, Now: t0.Add(90 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(names(w), " ")
	if want := "configmaps/cm-5 configmaps/cm-6 configmaps/cm-7 configmaps/cm-8 configmaps/cm-9 leases/node-1"; got != want {
		t.Errorf("objects %q, want %q", got, want)
	}
	if w.From != 14 || w.To != src.Revision() {
		t.Errorf("window %d-%d, want 14 (the write after the renewal at 50 s) to the head %d", w.From, w.To, src.Revision())
	}
	if !strings.Contains(w.Since, "estimated") || !strings.HasPrefix(w.Times.At(w.From).String(), "≈ 2026-12-01T10:00:5") {
		t.Errorf("since %q, the start at %s: want an estimate between 50 and 60 s", w.Since, w.Times.At(w.From))
	}
}

// A data file's head is in the past: --since counts back from the newest
// time the store records.
func TestReadSinceWithoutNowCountsFromTheNewestRecordedTime(t *testing.T) {
	w, err := Read(t.Context(), cluster(t), decode.Decoder{}, Range{Since: 15 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(names(w), " "); got != "configmaps/cm-7 configmaps/cm-8 configmaps/cm-9 leases/node-1" {
		t.Errorf("objects %q, want the writes after the renewal at 70 s (90 s, the newest, less 15 s is 75 s)", got)
	}
	if !strings.Contains(w.Since, "the newest time the store records") {
		t.Errorf("since %q does not say what it counted from", w.Since)
	}
}

func TestReadFromACompactedRevisionSaysWhereHistoryBegins(t *testing.T) {
	src := cluster(t)
	src.Compact(15)
	w, err := Read(t.Context(), src, decode.Decoder{}, Range{From: 3})
	if err != nil {
		t.Fatal(err)
	}
	if w.CompactedAt != 15 || w.From != 15 || w.Report.From != 15 {
		t.Errorf("compacted at %d, window from %d, first event at %d; want all 15", w.CompactedAt, w.From, w.Report.From)
	}
	if w.Events != int(src.Revision()-15+1) {
		t.Errorf("%d events, want every revision from 15 to %d", w.Events, src.Revision())
	}
}

func TestReadStopsAtTheLastRevision(t *testing.T) {
	src := cluster(t)
	w, err := Read(t.Context(), src, decode.Decoder{}, Range{Prefix: "/registry/configmaps/", From: 2, To: 9})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(names(w), " "); got != "configmaps/cm-0 configmaps/cm-1 configmaps/cm-2" {
		t.Errorf("objects %q, want the ConfigMaps of revisions 2 to 9", got)
	}
	if w.Counts.Added != 3 || w.Report.To != 8 || w.To != 9 {
		t.Errorf("counts %+v up to %d of %d, want 3 added up to 8 of 9", w.Counts, w.Report.To, w.To)
	}
}

func TestReadRefusesAWindowPastTheHead(t *testing.T) {
	src := cluster(t)
	_, err := Read(t.Context(), src, decode.Decoder{}, Range{From: 2, To: src.Revision() + 1})
	if err == nil || !strings.Contains(err.Error(), "after the head revision") {
		t.Errorf("error %v, want one naming the head", err)
	}
}

func TestReadSinceWithoutTimesAsksForARevision(t *testing.T) {
	src := uitest.New()
	src.PutObject(configMap("a"))
	_, err := Read(t.Context(), src, decode.Decoder{}, Range{Since: time.Minute})
	if err == nil || !strings.Contains(err.Error(), "--from-rev") {
		t.Errorf("error %v, want one that suggests --from-rev", err)
	}
}

// A window since a time after the newest recorded one, at the head, is
// empty; a write after the newest recorded time would be in it, its own
// time being unknown.
func TestReadSinceAfterTheLastWriteIsEmpty(t *testing.T) {
	src := cluster(t)
	src.PutObject(nodeLease("node-1", t0.Add(100*time.Second)))
	w, err := Read(t.Context(), src, decode.Decoder{}, Range{Since: time.Second, Now: t0.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if w.Events != 0 || w.From != src.Revision()+1 || !strings.HasPrefix(w.Span(), "no revision") {
		t.Errorf("window %s from %d with %d events, want none after the head %d", w.Span(), w.From, w.Events, src.Revision())
	}
}

// A time before the compaction starts the window where history begins.
func TestReadSinceBeforeTheCompactionStartsWhereHistoryBegins(t *testing.T) {
	src := cluster(t)
	src.Compact(15)
	w, err := Read(t.Context(), src, decode.Decoder{}, Range{Since: 65 * time.Second, Now: t0.Add(90 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	if w.CompactedAt != 15 || w.From != 15 {
		t.Errorf("window from %d, compacted at %d; want both 15", w.From, w.CompactedAt)
	}
}

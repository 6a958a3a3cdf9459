package changes

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/embedded/etcdtest"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/etcdview/etcdviewtest"
	clientv3 "go.etcd.io/etcd/client/v3"
	coordinationv1 "k8s.io/api/coordination/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
)

func nodeLease(name string, renew time.Time) *coordinationv1.Lease {
	return etcdviewtest.NodeLease(name, t0, renew)
}

// store is a bundled etcd of one member, read through the live Source.
type store struct {
	t   *testing.T
	cli *clientv3.Client
	src etcdview.Source
}

func newStore(t *testing.T) *store {
	t.Parallel()
	_, cli := etcdtest.StartBundled(t, 1)
	return &store{t: t, cli: cli, src: etcdview.NewLive(cli, 0)}
}

// put writes obj where kube-apiserver would and returns its revision.
func (s *store) put(obj k8sruntime.Object) int64 { return etcdviewtest.Put(s.t, s.cli, obj) }

func (s *store) compact(rev int64) {
	if _, err := s.cli.Compact(s.t.Context(), rev, clientv3.WithCompactPhysical()); err != nil {
		s.t.Fatal(err)
	}
}

func (s *store) head() int64 {
	resp, err := s.cli.Get(s.t.Context(), "compact_rev_key")
	if err != nil {
		s.t.Fatal(err)
	}
	return resp.Header.Revision
}

// cluster is a store where a node's Lease is renewed every 10 s, and one
// ConfigMap is written between two renewals, for a minute and a half; a
// second Lease, renewed once, is not the clock. It says the revision of
// each renewal and of each ConfigMap.
type cluster struct {
	*store
	idle            int64
	renewals, confs []int64
}

func newCluster(t *testing.T) cluster {
	c := cluster{store: newStore(t)}
	c.idle = c.put(nodeLease("idle", t0))
	for i := range 10 {
		c.renewals = append(c.renewals, c.put(nodeLease("node-1", t0.Add(time.Duration(i)*10*time.Second))))
		c.confs = append(c.confs, c.put(etcdviewtest.ConfigMap(fmt.Sprintf("cm-%d", i))))
	}
	return c
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

// span is the revisions of the window's first and last events.
func span(w Window) (first, last int64) {
	for _, g := range w.Groups {
		for _, o := range g.Objects {
			if first == 0 || o.FirstRevision < first {
				first = o.FirstRevision
			}
			last = max(last, o.LastRevision)
		}
	}
	return first, last
}

func TestReadSinceStartsAfterTheRenewalBeforeThatTime(t *testing.T) {
	c := newCluster(t)
	// 35 s before the last renewal (at 90 s) is 55 s: after the renewal
	// at 50 s, so cm-5 and later, and the renewals at 60 s and later.
	w, err := Read(t.Context(), c.src, decode.Decoder{}, Range{Since: 35 * time.Second, Now: t0.Add(90 * time.Second)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(names(w), " ")
	if want := "configmaps/cm-5 configmaps/cm-6 configmaps/cm-7 configmaps/cm-8 configmaps/cm-9 leases/node-1"; got != want {
		t.Errorf("objects %q, want %q", got, want)
	}
	if w.From != c.confs[5] || w.To != c.head() {
		t.Errorf("window %d-%d, want %d (the write after the renewal at 50 s) to the head %d", w.From, w.To, c.confs[5], c.head())
	}
	if !strings.Contains(w.Since, "estimated") || !strings.HasPrefix(w.Times.At(w.From).String(), "≈ 2026-12-01T10:00:5") {
		t.Errorf("since %q, the start at %s: want an estimate between 50 and 60 s", w.Since, w.Times.At(w.From))
	}
}

// A data file's head is in the past: --since counts back from the newest
// time the store records.
func TestReadSinceWithoutNowCountsFromTheNewestRecordedTime(t *testing.T) {
	w, err := Read(t.Context(), newCluster(t).src, decode.Decoder{}, Range{Since: 15 * time.Second}, nil)
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
	c := newCluster(t)
	compacted := c.renewals[6]
	c.compact(compacted)
	w, err := Read(t.Context(), c.src, decode.Decoder{}, Range{From: c.renewals[0]}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if first, _ := span(w); w.CompactedAt != compacted || w.From != compacted || first != compacted {
		t.Errorf("compacted at %d, window from %d, first event at %d; want all %d", w.CompactedAt, w.From, first, compacted)
	}
	if head := c.head(); w.Events != int(head-compacted+1) {
		t.Errorf("%d events, want every revision from %d to %d", w.Events, compacted, head)
	}
}

func TestReadStopsAtTheLastRevision(t *testing.T) {
	c := newCluster(t)
	w, err := Read(t.Context(), c.src, decode.Decoder{}, Range{Prefix: "/registry/configmaps/", From: c.idle, To: c.renewals[3]}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(names(w), " "); got != "configmaps/cm-0 configmaps/cm-1 configmaps/cm-2" {
		t.Errorf("objects %q, want the ConfigMaps of revisions %d to %d", got, c.idle, c.renewals[3])
	}
	if _, last := span(w); w.Counts.Added != 3 || last != c.confs[2] || w.To != c.renewals[3] {
		t.Errorf("counts %+v up to %d of %d, want 3 added up to %d of %d", w.Counts, last, w.To, c.confs[2], c.renewals[3])
	}
}

func TestReadRefusesAWindowPastTheHead(t *testing.T) {
	c := newCluster(t)
	_, err := Read(t.Context(), c.src, decode.Decoder{}, Range{From: c.idle, To: c.head() + 1}, nil)
	if err == nil || !strings.Contains(err.Error(), "after the head revision") {
		t.Errorf("error %v, want one naming the head", err)
	}
}

func TestReadSinceWithoutTimesAsksForARevision(t *testing.T) {
	s := newStore(t)
	s.put(etcdviewtest.ConfigMap("a"))
	_, err := Read(t.Context(), s.src, decode.Decoder{}, Range{Since: time.Minute}, nil)
	if err == nil || !strings.Contains(err.Error(), "--from-rev") {
		t.Errorf("error %v, want one that suggests --from-rev", err)
	}
}

// A window since a time after the newest recorded one, at the head, is
// empty; a write after the newest recorded time would be in it, its own
// time being unknown.
func TestReadSinceAfterTheLastWriteIsEmpty(t *testing.T) {
	c := newCluster(t)
	head := c.put(nodeLease("node-1", t0.Add(100*time.Second)))
	w, err := Read(t.Context(), c.src, decode.Decoder{}, Range{Since: time.Second, Now: t0.Add(time.Hour)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if w.Events != 0 || w.From != head+1 || !strings.HasPrefix(w.Span(), "no revision") {
		t.Errorf("window %s from %d with %d events, want none after the head %d", w.Span(), w.From, w.Events, head)
	}
}

// A time before the compaction starts the window where history begins.
func TestReadSinceBeforeTheCompactionStartsWhereHistoryBegins(t *testing.T) {
	c := newCluster(t)
	compacted := c.renewals[6]
	c.compact(compacted)
	w, err := Read(t.Context(), c.src, decode.Decoder{}, Range{Since: 65 * time.Second, Now: t0.Add(90 * time.Second)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if w.CompactedAt != compacted || w.From != compacted {
		t.Errorf("window from %d, compacted at %d; want both %d", w.From, w.CompactedAt, compacted)
	}
}

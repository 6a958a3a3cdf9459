package changes

import (
	"strings"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/decode"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
)

func lease(renew time.Time) *coordinationv1.Lease {
	rt := metav1.NewMicroTime(renew)
	holder := "node-1"
	return &coordinationv1.Lease{
		TypeMeta:   metav1.TypeMeta{APIVersion: "coordination.k8s.io/v1", Kind: "Lease"},
		ObjectMeta: metav1.ObjectMeta{Name: "node-1", Namespace: "kube-node-lease", CreationTimestamp: metav1.NewTime(t0)},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder, RenewTime: &rt},
	}
}

func TestRecordedTimesOfEachKind(t *testing.T) {
	ev := &corev1.Event{
		TypeMeta:       metav1.TypeMeta{APIVersion: "v1", Kind: "Event"},
		ObjectMeta:     metav1.ObjectMeta{Name: "web.1", Namespace: "default", CreationTimestamp: metav1.NewTime(t0)},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "web"},
		FirstTimestamp: metav1.NewTime(t0),
		LastTimestamp:  metav1.NewTime(t0.Add(5 * time.Minute)),
	}
	cm := configMap("default", "c", "v", entry("a", "Update", "", t0.Add(time.Minute), "{}"), entry("b", "Update", "", t0.Add(2*time.Minute), "{}"))
	tests := []struct {
		name string
		obj  k8sruntime.Object
		want []Point
	}{
		{"lease", lease(t0.Add(10 * time.Second)), []Point{{1, t0, FromCreation}, {9, t0.Add(10 * time.Second), FromLeaseRenew}}},
		{"event", ev, []Point{{1, t0, FromCreation}, {9, t0.Add(5 * time.Minute), FromEvent}}},
		{"configmap", cm, []Point{{1, t0.Add(-time.Hour), FromCreation}, {9, t0.Add(2 * time.Minute), FromManagedFields}}},
	}
	for _, tc := range tests {
		key, v := encode(t, tc.obj)
		got := Recorded(decode.Decode(key, v), 9, 1)
		if len(got) != len(tc.want) {
			t.Errorf("%s: recorded %v, want %v", tc.name, got, tc.want)
			continue
		}
		for i := range got {
			if got[i].Revision != tc.want[i].Revision || !got[i].Time.Equal(tc.want[i].Time) || got[i].What != tc.want[i].What {
				t.Errorf("%s: point %d is %v, want %v", tc.name, i, got[i], tc.want[i])
			}
		}
	}
	if got := Recorded(decode.Decode("/registry/configmaps/default/x", []byte("not an object")), 9, 1); len(got) != 0 {
		t.Errorf("a value that is no object recorded %v", got)
	}
}

func TestTimeMapIsMonotoneAndLabelled(t *testing.T) {
	var m TimeMap
	m.Add(Point{Revision: 100, Time: t0})
	m.Add(Point{Revision: 200, Time: t0.Add(100 * time.Second)})
	// A writer whose clock runs a minute behind, at a later revision.
	m.Add(Point{Revision: 250, Time: t0.Add(40 * time.Second)})
	m.Add(Point{Revision: 300, Time: t0.Add(200 * time.Second)})

	prev := time.Time{}
	for rev := int64(50); rev <= 350; rev++ {
		e := m.At(rev)
		if e.Time.Before(prev) {
			t.Fatalf("revision %d is estimated at %v, before revision %d's %v", rev, e.Time, rev-1, prev)
		}
		prev = e.Time
	}
	tests := []struct {
		rev  int64
		want string
	}{
		{50, "≤ 2026-12-01T10:00:00Z"},
		{100, "≈ 2026-12-01T10:00:00Z"},
		{150, "≈ 2026-12-01T10:00:50Z"},
		{250, "≈ 2026-12-01T10:01:40Z"}, // raised to the time before it
		{275, "≈ 2026-12-01T10:02:30Z"},
		{400, "≥ 2026-12-01T10:03:20Z"},
	}
	for _, tc := range tests {
		if got := m.At(tc.rev).String(); got != tc.want {
			t.Errorf("At(%d) = %q, want %q", tc.rev, got, tc.want)
		}
	}
	if got := (*TimeMap)(nil).At(5).String(); got != "time unknown" {
		t.Errorf("a map with no point gives %q", got)
	}
}

func TestStartIsAfterTheLastRevisionRecordedBefore(t *testing.T) {
	var m TimeMap
	for i := range 10 {
		m.Add(Point{Revision: int64(100 + 10*i), Time: t0.Add(time.Duration(i) * time.Minute)})
	}
	tests := []struct {
		since  time.Time
		want   int64
		wantOK bool
	}{
		{t0.Add(5 * time.Minute), 141, true},
		{t0.Add(4*time.Minute + time.Second), 141, true},
		{t0.Add(time.Hour), 191, true},
		{t0, 0, false}, // nothing is recorded before: start where history does
	}
	for _, tc := range tests {
		got, ok := m.Start(tc.since)
		if got != tc.want || ok != tc.wantOK {
			t.Errorf("Start(%v) = %d, %v; want %d, %v", tc.since, got, ok, tc.want, tc.wantOK)
		}
	}
}

// A Lease renewed every 10 revisions over a million: the search finds the
// renewals around the time asked for in about log2 reads.
func TestSearchClockFindsTheStartInFewReads(t *testing.T) {
	const first, last, every = 1_000, 1_000_000, 10
	clock := func(rev int64) time.Time { return t0.Add(time.Duration(rev) * time.Millisecond) }
	reads := 0
	read := func(rev int64) (int64, time.Time, error) {
		reads++
		if rev < first {
			t.Fatalf("read at %d, before the clock's first write", rev)
		}
		w := first + (rev-first)/every*every
		return w, clock(w), nil
	}
	since := clock(654_321)
	var m TimeMap
	m.Add(Point{Revision: last, Time: clock(last)})
	if err := m.SearchClock(first, last, since, read); err != nil {
		t.Fatal(err)
	}
	start, ok := m.Start(since)
	if !ok || start <= 654_321-every || start > 654_321 {
		t.Errorf("start %d (%v), want within the renewal before revision 654321", start, ok)
	}
	if reads > 25 {
		t.Errorf("%d reads, want about log2(1M) = 20", reads)
	}
	if est := m.At(start); !strings.HasPrefix(est.String(), "≈ ") {
		t.Errorf("the start's time %q is not labelled an estimate", est)
	}
}

package space

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/etcdview"
)

func TestForecastIsTheRoomAboveTheSizeInUseAtTheGrowth(t *testing.T) {
	ms := []Member{
		{Name: "a", DBSize: 1 << 30, InUse: 600 << 20, Quota: 2 << 30},
		{Name: "b", DBSize: 1 << 30, InUse: 800 << 20, Quota: 2 << 30},
		{Name: "c", Err: errors.New("unreachable")},
	}
	f, ok := ForecastQuota(ms, Growth{BytesPerSec: 1 << 20, Over: time.Minute, Basis: "DB size in use"})
	// b is the fullest: (2048 − 800) MiB at 1 MiB/s.
	if !ok || f.Member != "b" || !f.Growing || f.Left != 1248*time.Second || !f.Urgent() {
		t.Errorf("forecast %+v, want b full in 1248s, urgent", f)
	}
	if !strings.HasSuffix(f.String(), "growing 1.0 MiB/s (DB size in use, over 1m): full in 21m") {
		t.Errorf("forecast says %q", f.String())
	}
	if f, _ := ForecastQuota(ms, Growth{BytesPerSec: 10, Over: time.Minute}); f.Urgent() || !strings.HasSuffix(f.String(), "full in 1514d15h") {
		t.Errorf("10 B/s with 1.2 GiB left is urgent, or said wrong: %+v %q", f, f.String())
	}
	full := []Member{{Name: "a", DBSize: 2 << 30, InUse: 2 << 30, Quota: 2 << 30}}
	if f, _ := ForecastQuota(full, Growth{}); !f.Full || !f.Urgent() || !strings.Contains(f.String(), "NOSPACE") {
		t.Errorf("a DB at its quota: %+v %q", f, f.String())
	}
	if _, ok := ForecastQuota(ms[2:], Growth{}); ok {
		t.Errorf("a forecast with no member answering")
	}
}

func TestSizeTrendIsTheSlopeOfTheSizeInUse(t *testing.T) {
	var tr SizeTrend
	at := time.Unix(1_000_000, 0)
	cl := func(inUse int64) etcdview.Cluster {
		return etcdview.Cluster{Members: []etcdview.Member{{DBSize: 1 << 30, DBInUse: inUse}, {Err: errors.New("down")}}}
	}
	tr.Observe(cl(100<<20), at)
	tr.Observe(cl(101<<20), at.Add(5*time.Second))
	if _, ok := tr.Growth(); ok {
		t.Errorf("a growth over 5s, under minTrend")
	}
	tr.Observe(cl(110<<20), at.Add(20*time.Second))
	if g, ok := tr.Growth(); !ok || g.BytesPerSec != float64(10<<20)/20 || g.Over != 20*time.Second {
		t.Errorf("growth %+v, %v; want 512 KiB/s over 20s", g, ok)
	}
}

// TestSizeTrendLooksPastTheSawTooth: between compactions the size in use
// grows by every write and falls back at each; the growth is what stays.
func TestSizeTrendLooksPastTheSawTooth(t *testing.T) {
	at := time.Unix(1_000_000, 0)
	cl := func(inUse int64) etcdview.Cluster {
		return etcdview.Cluster{Members: []etcdview.Member{{DBSize: 1 << 30, DBInUse: inUse}}}
	}
	// A 5-minute cycle sampled every minute: +10 MiB a minute, back to
	// the trough at each compaction; troughs rising by level MiB a cycle.
	sawTooth := func(level int64) *SizeTrend {
		var tr SizeTrend
		for i := range 16 {
			cycle, step := int64(i/5), int64(i%5)
			tr.Observe(cl((100+cycle*level+step*10)<<20), at.Add(time.Duration(i)*time.Minute))
		}
		return &tr
	}
	g, ok := sawTooth(0).Growth()
	if !ok || g.BytesPerSec != 0 || g.Compactions != 3 || g.Over != 10*time.Minute {
		t.Errorf("level troughs: growth %+v, %v; want 0 B/s across 3 compactions over 10m", g, ok)
	}
	g, ok = sawTooth(5).Growth()
	if want := float64(10<<20) / 600; !ok || g.BytesPerSec != want || g.Basis != "DB size in use after each compaction" {
		t.Errorf("troughs rising 5 MiB a cycle: growth %+v, %v; want %.0f B/s", g, ok, want)
	}
	var one SizeTrend
	for i, used := range []int64{100, 140, 100, 120} {
		one.Observe(cl(used<<20), at.Add(time.Duration(i)*time.Minute))
	}
	if g, ok := one.Growth(); ok {
		t.Errorf("one compaction gives a slope only the saw tooth draws: %+v", g)
	}
}

// guideReport is a report whose tree is built from recs.
func guideReport(t *testing.T, history bool, members []Member, recs ...etcdview.ScanRecord) *Report {
	t.Helper()
	r, err := Run(context.Background(), &fakeSource{recs: recs, rev: 50_000}, Options{Prefix: "/registry", Depth: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.History, r.Members = history, members
	return r
}

func TestGuideNamesTheUsualCulprits(t *testing.T) {
	var recs []etcdview.ScanRecord
	for i := range 200 {
		recs = append(recs, current(fmt.Sprintf("/registry/events/ns/e%d", i), 1000, 1))
	}
	for i := range 5 {
		lease := current(fmt.Sprintf("/registry/leases/kube-node-lease/node-%d", i), 200, 4000)
		lease.CreateRevision = 10
		recs = append(recs, lease)
	}
	// The hottest lease: 4000 versions of the 49991 revisions since it was
	// created. And history far larger than the values.
	big := etcdview.ScanRecord{Key: "/registry/configmaps/ns/cm", Size: 200 << 20, Retained: true}
	recs = append(recs, big)
	members := []Member{
		{Name: "m1", DBSize: 1 << 30, InUse: 300 << 20, Quota: 2 << 30, Alarms: []string{"NOSPACE"}},
	}
	r := guideReport(t, true, members, recs...)
	named := ""
	name := func(_ context.Context, key string, rev int64) (string, error) {
		named = fmt.Sprintf("%s@%d", key, rev)
		return "kubelet (Update)", nil
	}
	fs := Guide(context.Background(), r, nil, nil, name)
	var got []string
	for _, f := range fs {
		got = append(got, f.Subject+": "+f.Text)
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{
		"m1: alarm NOSPACE",
		"/registry/events/: Events: 200 keys",
		"--event-ttl (1h by default)",
		"/registry/leases/: Leases: 5 keys",
		"5 nodes write 0.5 revisions/s",
		"/registry/leases/kube-node-lease/node-0: hot key: 4000 writes since revision 10, 8% of all writes since",
		"last written by kubelet (Update) (managedFields)",
		"m1: 724 MiB of its 1.0 GiB DB (71%) is free pages: defragmentation",
		"the leader last",
		"history: 1 revisions, 200 MiB",
		"compact",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("guidance lacks %q:\n%s", want, all)
		}
	}
	if !strings.HasPrefix(got[0], "m1: alarm NOSPACE") {
		t.Errorf("the alarm is not first:\n%s", all)
	}
	if named != "/registry/leases/kube-node-lease/node-0@50000" {
		t.Errorf("the namer was asked %q, want the hot key at the report's revision", named)
	}
}

func TestGuideSaysNothingOfASmallQuietStore(t *testing.T) {
	r := guideReport(t, true, []Member{{Name: "m1", DBSize: 1 << 20, InUse: 900 << 10, Quota: 2 << 30}},
		current("/registry/pods/ns/a", 1000, 2), current("/registry/configmaps/ns/b", 1000, 1),
		current("/registry/events/ns/e", 10, 1))
	if fs := Guide(context.Background(), r, nil, nil, nil); len(fs) != 0 {
		t.Errorf("findings on a small quiet store: %+v", fs)
	}
}

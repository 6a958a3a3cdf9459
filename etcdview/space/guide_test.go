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

// each is a growth function that gives every member g.
func each(g Growth) func(string) Growth { return func(string) Growth { return g } }

// compacted is a growth measured across compactions.
func compacted(bytesPerSec float64) Growth {
	return Growth{BytesPerSec: bytesPerSec, Over: 10 * time.Minute, Basis: "DB size in use after each compaction", Compactions: 3}
}

func TestForecastIsTheRoomAboveTheSizeInUseAtTheGrowth(t *testing.T) {
	ms := []Member{
		{Name: "a", DBSize: 1 << 30, InUse: 600 << 20, Quota: 2 << 30},
		{Name: "b", DBSize: 1 << 30, InUse: 800 << 20, Quota: 2 << 30},
		{Name: "c", Err: errors.New("unreachable")},
	}
	f, ok := ForecastQuota(ms, each(compacted(1<<20)))
	// b is the fullest: (2048 − 800) MiB at 1 MiB/s.
	if !ok || f.Member != "b" || !f.Growing || f.Left != 1248*time.Second || !f.Urgent() {
		t.Errorf("forecast %+v, want b full in 1248s, urgent", f)
	}
	want := "b uses 800 MiB of its 2.0 GiB quota (39%), growing 1.0 MiB/s (DB size in use after each compaction, 3 compactions over 10m): it refuses writes (NOSPACE) in 21m at this pace"
	if f.String() != want {
		t.Errorf("forecast says %q, want %q", f.String(), want)
	}
	if f, _ := ForecastQuota(ms, each(compacted(10))); f.Urgent() || !strings.HasSuffix(f.String(), "in 1514d15h at this pace") {
		t.Errorf("10 B/s with 1.2 GiB left is urgent, or said wrong: %+v %q", f, f.String())
	}
	// Each member at its own growth: a, emptier but growing faster, is
	// the one to act on.
	byMember := func(m string) Growth { return map[string]Growth{"a": compacted(2 << 20), "b": compacted(1 << 20)}[m] }
	if f, _ := ForecastQuota(ms, byMember); f.Member != "a" || f.Left != 724*time.Second {
		t.Errorf("forecast %+v, want a full in 724s", f)
	}
	written := Growth{BytesPerSec: 1 << 20, Over: time.Minute, Basis: "bytes written, were nothing compacted"}
	if f, _ := ForecastQuota(ms, each(written)); f.Urgent() || f.String() != "b uses 800 MiB of its 2.0 GiB quota (39%); the writes, 1.0 MiB/s over 1m, would fill it in 21m were nothing compacted (an upper bound: kube-apiserver compacts them)" {
		t.Errorf("the bytes written alone are urgent, or said wrong: %q", f.String())
	}
	written.BytesPerSec = 0
	if f, _ := ForecastQuota(ms, each(written)); f.String() != "b uses 800 MiB of its 2.0 GiB quota (39%); nothing written over 1m" {
		t.Errorf("no bytes written: %q", f.String())
	}
	if f, _ := ForecastQuota(ms, each(Growth{})); f.String() != "b uses 800 MiB of its 2.0 GiB quota (39%); its growth is not measured yet" {
		t.Errorf("a growth over 0s says %q", f.String())
	}
	full := []Member{{Name: "a", DBSize: 2 << 30, InUse: 2 << 30, Quota: 2 << 30}}
	if f, _ := ForecastQuota(full, each(Growth{})); !f.Full || !f.Urgent() || !strings.Contains(f.String(), "NOSPACE") {
		t.Errorf("a DB at its quota: %+v %q", f, f.String())
	}
	if _, ok := ForecastQuota(ms[2:], each(Growth{})); ok {
		t.Errorf("a forecast with no member answering")
	}
}

// reading is one Status reading of members etcd-0 and etcd-1 (MiB in use)
// with compact_rev_key at compact.
func reading(compact int64, inUse ...int64) etcdview.Cluster {
	cl := etcdview.Cluster{CompactRevision: compact}
	for i, u := range inUse {
		cl.Members = append(cl.Members, etcdview.Member{Name: fmt.Sprint("etcd-", i), DBSize: 1 << 30, DBInUse: u << 20})
	}
	return cl
}

func TestSizeTrendCountsOnlyCompactionsThatHappened(t *testing.T) {
	at := time.Unix(1_000_000, 0)
	// kube-apiserver's cycle every minute, read every 20 s: its first
	// write of compact_rev_key ("0") compacts nothing; then each cycle
	// compacts, and the size in use falls back a reading later (etcd
	// frees the pages in the background), to a level rising 1 MiB a
	// cycle; between, it climbs by every write.
	type step struct {
		compact int64
		used    int64
	}
	steps := []step{
		{0, 100}, {0, 104}, {0, 108}, // no compact_rev_key yet
		{0, 112}, {0, 116}, {0, 120}, // the first write: "0"
		{500, 124}, {500, 101}, {500, 105}, // compacted to 500
		{900, 109}, {0, 102}, {900, 106}, // compact_rev_key's read failed once
		{1300, 110}, {1300, 103}, {1300, 107},
	}
	var tr SizeTrend
	for i, s := range steps {
		cl := reading(s.compact, s.used)
		tr.Observe(cl, at.Add(time.Duration(i)*20*time.Second))
		g, ok := tr.Growth("etcd-0")
		switch {
		case i < 11 && ok:
			t.Fatalf("reading %d: a growth %+v before two compactions settled", i, g)
		case i >= 11 && !ok:
			t.Fatalf("reading %d: no growth after two compactions", i)
		}
	}
	g, _ := tr.Growth("etcd-0")
	if want := float64(2<<20) / 120; g.BytesPerSec != want || g.Compactions != 3 || g.Over != 2*time.Minute {
		t.Errorf("growth %+v; want %.0f B/s across 3 compactions over 2m", g, want)
	}
}

// TestSizeTrendFollowsEachMember: two members of different sizes, read in
// turn, are two level trends, not a saw tooth between them.
func TestSizeTrendFollowsEachMember(t *testing.T) {
	at := time.Unix(1_000_000, 0)
	var tr SizeTrend
	for i := range 30 {
		compact := int64(100 * (1 + i/5))
		cl := reading(compact, int64(50+i%5), int64(9+i%5))
		if i%2 == 0 {
			cl.Members[0].Err = errors.New("timeout")
		}
		tr.Observe(cl, at.Add(time.Duration(i)*10*time.Second))
	}
	for _, m := range []string{"etcd-0", "etcd-1"} {
		if g, ok := tr.Growth(m); !ok || g.BytesPerSec != 0 {
			t.Errorf("%s: growth %+v, %v; want level", m, g, ok)
		}
	}
	if _, ok := tr.Growth("etcd-9"); ok {
		t.Errorf("a growth for a member never read")
	}
}

// TestSizeTrendWithNoCompactionIsTheSlopeAfterElevenMinutes: an etcd that
// nothing compacts grows by every write.
func TestSizeTrendWithNoCompactionIsTheSlopeAfterElevenMinutes(t *testing.T) {
	at := time.Unix(1_000_000, 0)
	var tr SizeTrend
	for i := range 12 {
		cl := reading(0, int64(100+i))
		tr.Observe(cl, at.Add(time.Duration(i)*time.Minute))
		if g, ok := tr.Growth("etcd-0"); ok != (i >= 11) {
			t.Errorf("minute %d: growth %+v, %v", i, g, ok)
		}
	}
	if g, _ := tr.Growth("etcd-0"); g.BytesPerSec != float64(1<<20)/60 || g.Basis != "DB size in use, no compaction seen" {
		t.Errorf("growth %+v, want 1 MiB a minute with no compaction seen", g)
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

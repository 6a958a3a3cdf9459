package space

import (
	"fmt"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/etcdscope/etcdscope/etcdview"
)

// Growth is how fast a DB fills, and what that is measured from.
type Growth struct {
	BytesPerSec float64
	Over        time.Duration
	Basis       string // in plain words: "DB size in use", "writes"
	// Compactions is how many compactions the growth was measured across
	// (a SizeTrend's), 0 for one measured otherwise.
	Compactions int
}

// WriteGrowth is the growth the writes of rates would make if nothing were
// compacted: etcd keeps every revision until a compaction, so the bytes
// written are the bytes the DB gains. An upper bound where kube-apiserver
// compacts (every 5 minutes by default).
func WriteGrowth(r Rates) Growth {
	return Growth{BytesPerSec: r.Total.Bytes, Over: r.Over, Basis: writesBasis}
}

// writesBasis is the Basis of WriteGrowth.
const writesBasis = "bytes written, were nothing compacted"

// SizeTrend follows each member's DB size in use across Status reads, and
// the compaction revision kube-apiserver records (compact_rev_key). Its
// growth is what stays after compactions: between two, the size in use
// grows by every write (etcd keeps each revision until a compaction frees
// its pages), and kube-apiserver compacts every 5 minutes by default, so a
// slope drawn across that saw tooth forecasts a quota that is never
// reached. The size a compaction leaves is the lowest a member's size in
// use gets before the next one; each member is followed apart, as their
// sizes differ.
type SizeTrend struct {
	compact  int64 // the highest compaction revision read
	readings int
	members  map[string]*memberTrend
}

// memberTrend is one member's size after each compaction seen, and its
// first and last readings.
type memberTrend struct {
	troughs     []trough
	first, last sizeSample
}

// trough is the lowest size in use read since a compaction, and whether
// it is behind: a later reading of the same interval was higher, or the
// next compaction came. The first reading after a compaction is seen may
// come before etcd freed its pages (kube-apiserver writes compact_rev_key,
// then asks for the compaction, which etcd runs in the background): a
// higher one after it does not settle it.
type trough struct {
	sizeSample
	first, settled bool
}

type sizeSample struct {
	at   time.Time
	used int64
}

// trendWindow is how far back a SizeTrend looks (older troughs are
// dropped, two kept), and minTrend the shortest span it draws a slope
// over: bbolt allocates pages in steps, and a commit every 100 ms.
const (
	trendWindow = 15 * time.Minute
	minTrend    = 10 * time.Second
)

// Observe takes the reading cl, made at now. A compaction happened since
// the readings before when the compaction revision rose above the highest
// they had, to a revision above 0: kube-apiserver's first cycle writes
// compact_rev_key as "0" and compacts nothing, each later one writes the
// revision it compacts to (k8s.io/apiserver's etcd3.Compact). A reading
// of 0 after a higher one is a read of compact_rev_key that failed (a
// timeout, on a busy etcd), not a compaction undone. Without
// compact_rev_key (no kube-apiserver compacts, or the user may not read
// it) no compaction is seen.
func (t *SizeTrend) Observe(cl etcdview.Cluster, now time.Time) {
	compacted := t.readings > 0 && cl.CompactRevision > t.compact && cl.CompactRevision > 0
	t.readings++
	t.compact = max(t.compact, cl.CompactRevision)
	if t.members == nil {
		t.members = map[string]*memberTrend{}
	}
	for _, m := range cl.Members {
		used := usedBytes(Member{DBSize: m.DBSize, InUse: m.DBInUse})
		if m.Err != nil || used == 0 {
			continue
		}
		mt := t.members[memberName(m.Name, m.Endpoint)]
		if mt == nil {
			mt = &memberTrend{}
			t.members[memberName(m.Name, m.Endpoint)] = mt
		}
		mt.observe(sizeSample{at: now, used: used}, compacted)
	}
}

func memberName(name, endpoint string) string {
	if name != "" {
		return name
	}
	return endpoint
}

func (mt *memberTrend) observe(s sizeSample, compacted bool) {
	if mt.first.at.IsZero() {
		mt.first = s
	}
	mt.last = s
	n := len(mt.troughs)
	switch {
	case compacted:
		if n > 0 {
			mt.troughs[n-1].settled = true
		}
		mt.troughs = append(mt.troughs, trough{sizeSample: s, first: true})
	case n == 0:
		return // before the first compaction seen
	case s.used < mt.troughs[n-1].used:
		mt.troughs[n-1] = trough{sizeSample: s}
	case s.used > mt.troughs[n-1].used && !mt.troughs[n-1].first:
		mt.troughs[n-1].settled = true
	}
	for len(mt.troughs) > 2 && s.at.Sub(mt.troughs[0].at) > trendWindow {
		mt.troughs = mt.troughs[1:]
	}
}

// uncompactedOver is the shortest span with no compaction seen that a
// SizeTrend draws the slope of the size in use over: until kube-apiserver
// compacts, the size in use grows by every write, as it does while a fresh
// cluster bootstraps. Two of its default intervals (5 minutes; its first
// compacts nothing) and a minute for the pace of the reads with none is an
// etcd that nothing compacts.
const (
	uncompactedOver  = 11 * time.Minute
	uncompactedBasis = "DB size in use, no compaction seen"
)

// Growth is member's growth: the slope from the first settled trough to
// the last, across two compactions at least; with no compaction seen in
// uncompactedOver or more, the slope from the first reading to the last;
// false otherwise, or for a member never read.
func (t *SizeTrend) Growth(member string) (Growth, bool) {
	mt := t.members[member]
	if mt == nil {
		return Growth{}, false
	}
	if over := mt.last.at.Sub(mt.first.at); len(mt.troughs) == 0 && over >= uncompactedOver {
		return Growth{BytesPerSec: float64(mt.last.used-mt.first.used) / over.Seconds(), Over: over,
			Basis: uncompactedBasis}, true
	}
	var settled []trough
	for _, tr := range mt.troughs {
		if tr.settled {
			settled = append(settled, tr)
		}
	}
	if len(settled) < 2 {
		return Growth{}, false
	}
	first, last := settled[0], settled[len(settled)-1]
	over := last.at.Sub(first.at)
	if over < minTrend {
		return Growth{}, false
	}
	return Growth{BytesPerSec: float64(last.used-first.used) / over.Seconds(), Over: over,
		Basis: "DB size in use after each compaction", Compactions: len(settled)}, true
}

func usedBytes(m Member) int64 {
	if m.InUse > 0 {
		return m.InUse
	}
	return m.DBSize
}

// Forecast is when the fullest member reaches its quota at a growth.
type Forecast struct {
	Member      string
	Used, Quota int64
	Growth      Growth
	Growing     bool          // the growth is above zero
	Left        time.Duration // until the quota, when Growing
	Full        bool          // the DB is at its quota already
}

// urgentWithin is how near a forecast quota is a warning: "under a day";
// urgentOver the shortest span of growth across compactions it is said
// from: kube-apiserver compacts every 5 minutes by default
// (--etcd-compaction-interval).
const (
	urgentWithin = 24 * time.Hour
	urgentOver   = 5 * time.Minute
)

// Urgent says the quota is reached, or will be within a day at a growth of
// the size in use a SizeTrend measured: after each compaction, over
// urgentOver at least, or with none seen (which it measures over
// uncompactedOver at least). The bytes written alone are never urgent:
// kube-apiserver compacts them away.
func (f Forecast) Urgent() bool {
	g := f.Growth
	measured := g.Compactions > 0 && g.Over >= urgentOver || g.Basis == uncompactedBasis
	return f.Full || f.Growing && f.Left < urgentWithin && measured
}

// ForecastQuota is the forecast of the member that reaches its quota
// first among those that answered: one at the quota already, else the one
// whose room above its size in use lasts least at its growth (growth of
// its name), else the fullest; false when none answered. etcd refuses
// writes (NOSPACE) once its DB size reaches the quota, and the DB size
// grows once the pages in use fill the free ones: the time left is the
// room above the size in use at the growth.
func ForecastQuota(ms []Member, growth func(member string) Growth) (Forecast, bool) {
	var best Forecast
	found := false
	for _, m := range ms {
		if m.Err != nil || m.Quota <= 0 {
			continue
		}
		f := memberForecast(m, growth(m.Name))
		if !found || f.before(best) {
			best, found = f, true
		}
	}
	return best, found
}

func memberForecast(m Member, g Growth) Forecast {
	f := Forecast{Member: m.Name, Used: usedBytes(m), Quota: m.Quota, Full: m.DBSize >= m.Quota, Growth: g}
	if g.BytesPerSec > 0 && !f.Full {
		f.Growing = true
		f.Left = time.Duration(float64(f.Quota-f.Used) / g.BytesPerSec * float64(time.Second))
	}
	return f
}

// before says f reaches its quota before o: full first, then growing, the
// sooner first, then the fuller.
func (f Forecast) before(o Forecast) bool {
	switch {
	case f.Full != o.Full:
		return f.Full
	case f.Growing != o.Growing:
		return f.Growing
	case f.Growing && f.Left != o.Left:
		return f.Left < o.Left
	}
	return float64(f.Used)/float64(f.Quota) > float64(o.Used)/float64(o.Quota)
}

// minGrowthOver is the shortest measurement a growth is said from.
const minGrowthOver = time.Second

// String says the forecast in one line, in an operator's words: when the
// member refuses writes, at what growth measured how.
func (f Forecast) String() string {
	head := fmt.Sprintf("%s uses %s of its %s quota (%.0f%%)", f.Member, humanize.IBytes(uint64(f.Used)), humanize.IBytes(uint64(f.Quota)),
		100*float64(f.Used)/float64(f.Quota))
	g := f.Growth
	switch {
	case f.Full:
		return head + ": at the quota, etcd refuses writes (NOSPACE)"
	case g.Over < minGrowthOver:
		return head + "; its growth is not measured yet"
	case g.Basis == writesBasis && f.Growing:
		return fmt.Sprintf("%s; the writes, %s/s over %s, would fill it in %s were nothing compacted (an upper bound: kube-apiserver compacts them)",
			head, humanize.IBytes(uint64(g.BytesPerSec)), roundDuration(g.Over), roundDuration(f.Left))
	case g.Basis == writesBasis:
		return fmt.Sprintf("%s; nothing written over %s", head, roundDuration(g.Over))
	case f.Growing:
		return fmt.Sprintf("%s, growing %s/s (%s): it refuses writes (NOSPACE) in %s at this pace", head, humanize.IBytes(uint64(g.BytesPerSec)),
			g.measured(), roundDuration(f.Left))
	}
	return fmt.Sprintf("%s, not growing (%s)", head, g.measured())
}

// measured says what g was measured from, and over how long.
func (g Growth) measured() string {
	if g.Compactions > 0 {
		return fmt.Sprintf("%s, %d compactions over %s", g.Basis, g.Compactions, roundDuration(g.Over))
	}
	return fmt.Sprintf("%s, over %s", g.Basis, roundDuration(g.Over))
}

// roundDuration is d as a person reads it: seconds under a minute, then
// minutes, then hours and minutes, then days and hours.
func roundDuration(d time.Duration) string {
	switch {
	case d < time.Minute:
		return d.Round(time.Second).String()
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Round(time.Minute).Minutes()))
	case d < 24*time.Hour:
		m := int(d.Round(time.Minute).Minutes())
		return fmt.Sprintf("%dh%02dm", m/60, m%60)
	}
	h := int(d.Round(time.Hour).Hours())
	return fmt.Sprintf("%dd%02dh", h/24, h%24)
}

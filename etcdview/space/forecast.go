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
	// Compactions is how many falls of the size in use the growth was
	// measured across (a SizeTrend's), 0 when none was seen.
	Compactions int
}

// WriteGrowth is the growth the writes of rates would make if nothing were
// compacted: etcd keeps every revision until a compaction, so the bytes
// written are the bytes the DB gains. An upper bound where kube-apiserver
// compacts (every 5 minutes by default).
func WriteGrowth(r Rates) Growth {
	return Growth{BytesPerSec: r.Total.Bytes, Over: r.Over, Basis: "bytes written, were nothing compacted"}
}

// SizeTrend follows the members' DB size in use across Status reads. Its
// growth is what stays after compactions: between two, the size in use
// grows by every write (etcd keeps each revision until a compaction frees
// its pages), and kube-apiserver compacts every 5 minutes by default, so a
// slope drawn across that saw tooth forecasts a quota that is never
// reached.
type SizeTrend struct {
	samples []sizeSample
}

type sizeSample struct {
	at   time.Time
	used int64
}

// trendWindow is how far back a SizeTrend looks, and minTrend the shortest
// span it draws a slope over: bbolt allocates pages in steps, and a commit
// every 100 ms.
const (
	trendWindow = 15 * time.Minute
	minTrend    = 10 * time.Second
)

// Observe notes the greatest size in use among the members of cl that
// answered (the DB size where a member reports none), at now.
func (t *SizeTrend) Observe(cl etcdview.Cluster, now time.Time) {
	var used int64
	for _, m := range cl.Members {
		if m.Err == nil {
			used = max(used, usedBytes(Member{DBSize: m.DBSize, InUse: m.DBInUse}))
		}
	}
	if used == 0 {
		return
	}
	t.samples = append(t.samples, sizeSample{at: now, used: used})
	for len(t.samples) > 2 && now.Sub(t.samples[1].at) >= trendWindow {
		t.samples = t.samples[1:]
	}
}

// troughs are the samples at the bottom of each fall of the size in use:
// where a compaction (or a defragmentation) left it.
func (t *SizeTrend) troughs() []sizeSample {
	var out []sizeSample
	for i := 1; i < len(t.samples); i++ {
		falling := t.samples[i].used < t.samples[i-1].used
		if falling && (i == len(t.samples)-1 || t.samples[i+1].used >= t.samples[i].used) {
			out = append(out, t.samples[i])
		}
	}
	return out
}

// Growth is the slope from the first trough to the last when the window
// holds two or more, and from the oldest sample to the newest when it holds
// none (nothing compacted in the window: either nothing compacts, and that
// is the growth, or the first compaction has not come yet, which
// Growth.Compactions lets the caller weigh). With one trough there is no
// slope that is not the saw tooth's: false, as before minTrend.
func (t *SizeTrend) Growth() (Growth, bool) {
	first, last, basis := sizeSample{}, sizeSample{}, ""
	tr := t.troughs()
	switch {
	case len(tr) >= 2:
		first, last, basis = tr[0], tr[len(tr)-1], "DB size in use after each compaction"
	case len(tr) == 0 && len(t.samples) >= 2:
		first, last, basis = t.samples[0], t.samples[len(t.samples)-1], "DB size in use, no compaction seen"
	default:
		return Growth{}, false
	}
	over := last.at.Sub(first.at)
	if over < minTrend {
		return Growth{}, false
	}
	g := Growth{BytesPerSec: float64(last.used-first.used) / over.Seconds(), Over: over, Basis: basis, Compactions: len(tr)}
	return g, true
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

// urgentWithin is how near a forecast quota is a warning: the issue's "under
// a day".
const urgentWithin = 24 * time.Hour

// Urgent says the quota is reached, or will be within a day.
func (f Forecast) Urgent() bool { return f.Full || f.Growing && f.Left < urgentWithin }

// ForecastQuota is the forecast for the member nearest its quota among those
// that answered; false when none did. etcd refuses writes (NOSPACE) once its
// DB size reaches the quota, and the DB size grows once the pages in use
// fill the free ones: the time left is the room above the size in use at the
// growth.
func ForecastQuota(ms []Member, g Growth) (Forecast, bool) {
	var f Forecast
	found := false
	for _, m := range ms {
		if m.Err != nil || m.Quota <= 0 {
			continue
		}
		used := usedBytes(m)
		if !found || float64(used)/float64(m.Quota) > float64(f.Used)/float64(f.Quota) {
			f, found = Forecast{Member: m.Name, Used: used, Quota: m.Quota, Full: m.DBSize >= m.Quota}, true
		}
	}
	if !found {
		return f, false
	}
	f.Growth = g
	if g.BytesPerSec > 0 && !f.Full {
		f.Growing = true
		f.Left = time.Duration(float64(f.Quota-f.Used) / g.BytesPerSec * float64(time.Second))
	}
	return f, true
}

// String says the forecast in one line.
func (f Forecast) String() string {
	head := fmt.Sprintf("%s uses %s of its %s quota (%.0f%%)", f.Member, humanize.IBytes(uint64(f.Used)), humanize.IBytes(uint64(f.Quota)),
		100*float64(f.Used)/float64(f.Quota))
	switch {
	case f.Full:
		return head + ": at the quota, etcd refuses writes (NOSPACE)"
	case f.Growing:
		return fmt.Sprintf("%s, growing %s/s (%s, over %s): full in %s", head, humanize.IBytes(uint64(f.Growth.BytesPerSec)),
			f.Growth.Basis, roundDuration(f.Growth.Over), roundDuration(f.Left))
	case f.Growth.Over > 0:
		return fmt.Sprintf("%s, not growing (%s, over %s)", head, f.Growth.Basis, roundDuration(f.Growth.Over))
	}
	return head
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

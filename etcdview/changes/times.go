package changes

import (
	"cmp"
	"slices"
	"sort"
	"time"

	"github.com/etcdscope/etcdscope/decode"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
)

// Point is a time an object records, tied to the revision that wrote it.
type Point struct {
	Revision int64
	Time     time.Time
	What     string // what recorded it: "Lease renewTime", "creationTimestamp", ...
}

// What a Point can come from.
const (
	FromCreation      = "creationTimestamp"
	FromManagedFields = "managedFields time"
	FromLeaseRenew    = "Lease renewTime"
	FromEvent         = "Event timestamp"
)

// Recorded is the times o records about the revisions that wrote it: its
// creationTimestamp at createRev (0: not known), and at modRev, the
// newest of its managedFields times, a Lease's renewTime, an Event's
// lastTimestamp, eventTime and series.lastObservedTime. Each is set by the
// API server or by the writer just before the write, so each is a little
// before (never after) the moment etcd committed that revision. A
// deletionTimestamp is left out: it is in the future by the grace period.
func Recorded(o decode.Object, modRev, createRev int64) []Point {
	if o.Object == nil {
		return nil
	}
	var out []Point
	add := func(rev int64, t time.Time, what string) {
		if rev > 0 && !t.IsZero() {
			out = append(out, Point{Revision: rev, Time: t, What: what})
		}
	}
	if m, err := meta.Accessor(o.Object); err == nil {
		add(createRev, m.GetCreationTimestamp().Time, FromCreation)
		var newest time.Time
		for _, e := range m.GetManagedFields() {
			if e.Time != nil && e.Time.After(newest) {
				newest = e.Time.Time
			}
		}
		add(modRev, newest, FromManagedFields)
	}
	switch x := o.Object.(type) {
	case *coordinationv1.Lease:
		if x.Spec.RenewTime != nil {
			add(modRev, x.Spec.RenewTime.Time, FromLeaseRenew)
		}
	case *corev1.Event:
		t := latest(x.LastTimestamp.Time, x.EventTime.Time)
		if x.Series != nil {
			t = latest(t, x.Series.LastObservedTime.Time)
		}
		add(modRev, t, FromEvent)
	case *eventsv1.Event:
		t := latest(x.DeprecatedLastTimestamp.Time, x.EventTime.Time)
		if x.Series != nil {
			t = latest(t, x.Series.LastObservedTime.Time)
		}
		add(modRev, t, FromEvent)
	}
	return out
}

func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// TimeMap estimates the time of a revision. etcd stores no time: a
// revision's time is estimated from the times objects record (Recorded).
// Points are made monotone: a revision is at least as late as the latest
// time recorded at or before it, so a writer whose clock runs behind cannot
// pull a later revision back. Between two points the time is interpolated
// by revision. Every time it gives is an estimate, and says so (Estimate).
// The nil map records nothing and knows no time.
type TimeMap struct {
	points []Point
	mono   []Point // points by revision, times made monotone; nil when stale
}

// Add records p; a point without a time or revision is ignored.
func (m *TimeMap) Add(p Point) {
	if m == nil || p.Time.IsZero() || p.Revision <= 0 {
		return
	}
	m.points = append(m.points, p)
	m.mono = nil
}

// Observe records what o, written at modRev and created at createRev,
// says of time (Recorded).
func (m *TimeMap) Observe(o decode.Object, modRev, createRev int64) {
	if m == nil {
		return
	}
	for _, p := range Recorded(o, modRev, createRev) {
		m.Add(p)
	}
}

// Len is how many points the map holds.
func (m *TimeMap) Len() int {
	if m == nil {
		return 0
	}
	return len(m.points)
}

func (m *TimeMap) monotone() []Point {
	if m == nil {
		return nil
	}
	if m.mono != nil || len(m.points) == 0 {
		return m.mono
	}
	mono := slices.Clone(m.points)
	slices.SortStableFunc(mono, func(a, b Point) int { return cmp.Compare(a.Revision, b.Revision) })
	out := mono[:0]
	for _, p := range mono {
		if n := len(out); n > 0 {
			if out[n-1].Time.After(p.Time) {
				p.Time, p.What = out[n-1].Time, out[n-1].What
			}
			if out[n-1].Revision == p.Revision {
				out[n-1] = p
				continue
			}
		}
		out = append(out, p)
	}
	m.mono = out
	return out
}

// Bound is how an Estimate's time relates to its revision.
type Bound int

const (
	// Unknown: no object recorded a time to estimate from.
	Unknown Bound = iota
	// About: recorded at that revision, or between two recorded times.
	About
	// AtLeast: after the newest recorded time.
	AtLeast
	// AtMost: before the oldest recorded time.
	AtMost
)

// Estimate is the estimated time of a revision.
type Estimate struct {
	Time  time.Time
	Bound Bound
}

// String is the time with its bound, "≈ 2026-12-01T10:00:03Z", "≥ ...",
// "≤ ...", or "time unknown".
func (e Estimate) String() string {
	at := e.Time.UTC().Format(time.RFC3339)
	switch e.Bound {
	case About:
		return "≈ " + at
	case AtLeast:
		return "≥ " + at
	case AtMost:
		return "≤ " + at
	}
	return "time unknown"
}

// Word is the bound in words, for -o json: "about", "at least", "at
// most", "unknown".
func (b Bound) Word() string {
	return [...]string{"unknown", "about", "at least", "at most"}[b]
}

// At estimates the time of revision rev.
func (m *TimeMap) At(rev int64) Estimate {
	mono := m.monotone()
	i := sort.Search(len(mono), func(i int) bool { return mono[i].Revision >= rev })
	switch {
	case len(mono) == 0:
		return Estimate{}
	case i < len(mono) && mono[i].Revision == rev:
		return Estimate{mono[i].Time, About}
	case i == 0:
		return Estimate{mono[0].Time, AtMost}
	case i == len(mono):
		return Estimate{mono[i-1].Time, AtLeast}
	}
	a, b := mono[i-1], mono[i]
	frac := float64(rev-a.Revision) / float64(b.Revision-a.Revision)
	return Estimate{a.Time.Add(time.Duration(frac * float64(b.Time.Sub(a.Time)))), About}
}

// Start is the first revision of a window of what changed since t: the
// revision after the newest one recorded before t. ok is false when no
// revision is recorded before t: the window then starts where etcd's
// history does, or at the oldest revision the caller can read.
func (m *TimeMap) Start(t time.Time) (rev int64, ok bool) {
	mono := m.monotone()
	i := sort.Search(len(mono), func(i int) bool { return !mono[i].Time.Before(t) })
	if i == 0 {
		return 0, false
	}
	return mono[i-1].Revision + 1, true
}

// Newest is the newest recorded point, made monotone; ok is false when the
// map is empty.
func (m *TimeMap) Newest() (p Point, ok bool) {
	mono := m.monotone()
	if len(mono) == 0 {
		return Point{}, false
	}
	return mono[len(mono)-1], true
}

// ClockRead reads a clock, an object rewritten at a steady pace with the
// time of each write (a node's Lease, renewed every 10 s), as of revision
// rev: the revision of its newest write at or before rev, and the time
// that write records.
type ClockRead func(rev int64) (modRev int64, at time.Time, err error)

// SearchClock records the clock's writes around t, by binary search of the
// revisions lo to hi (the oldest the clock can be read at, and its newest
// write), so that Start(t) falls between two writes of the clock, however
// long the history: about log2(hi-lo) reads. It stops at the first error.
func (m *TimeMap) SearchClock(lo, hi int64, t time.Time, read ClockRead) error {
	for lo < hi {
		mid := lo + (hi-lo)/2
		modRev, at, err := read(mid)
		if err != nil {
			return err
		}
		m.Add(Point{Revision: modRev, Time: at, What: FromLeaseRenew})
		if at.Before(t) {
			lo = mid + 1
		} else {
			hi = min(modRev, mid)
		}
	}
	return nil
}

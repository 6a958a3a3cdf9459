package space

import (
	"cmp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/etcdscope/etcdscope/etcdview"
)

// Rate is a flow of writes: revisions and bytes a second.
type Rate struct {
	Revisions float64
	Bytes     float64
}

// KeyRate is one key's rate of writes.
type KeyRate struct {
	Key string
	Rate
}

// Rates are what a Meter measured over its window.
type Rates struct {
	// Over is the time they were measured over: since the first
	// observation, at most the window.
	Over  time.Duration
	Total Rate
	Nodes map[string]Rate // by node path, as the report's tree names them
	Keys  []KeyRate       // the hottest keys, by revisions a second
	// KeysCapped says some keys written in the window were not tracked one
	// by one (more than maxMeterKeys in a slot): their writes are in the
	// nodes' rates, and the key list may miss them.
	KeysCapped bool
}

// Of is the rate of the node at path; zero for a nil Rates.
func (r *Rates) Of(path string) Rate {
	if r == nil {
		return Rate{}
	}
	return r.Nodes[path]
}

// Meter measures the rate of writes below a prefix, per node of the tree a
// report of the same prefix and depth makes, and per key, from watch
// batches (the tail's), over a sliding window of slots. Safe for
// concurrent use.
type Meter struct {
	mu       sync.Mutex
	dir      string
	depth    int
	slot     time.Duration
	start    time.Time
	maxNodes int
	total    ring
	nodes    map[string]*ring
	keys     [meterSlots]keySlot
	capped   bool
}

// meterSlots is how many slots the window is cut into: rates move by a
// twelfth of it at a time.
const meterSlots = 12

// maxMeterKeys bounds the keys one slot counts one by one.
const maxMeterKeys = 4096

// ring is one series's counts per slot; id is the slot number each holds.
type ring struct {
	id     [meterSlots]int64
	counts [meterSlots]Rate
}

type keySlot struct {
	id     int64
	counts map[string]Rate
}

// DefaultWindow is the window a Meter measures over by default.
const DefaultWindow = time.Minute

// NewMeter measures writes below prefix (read as a directory) per node down
// to depth, over window (0: DefaultWindow).
func NewMeter(prefix string, depth int, window time.Duration) *Meter {
	if window <= 0 {
		window = DefaultWindow
	}
	return &Meter{dir: asDir(prefix), depth: depth, slot: window / meterSlots, maxNodes: DefaultMaxNodes, nodes: map[string]*ring{}}
}

// Observe counts the events of b, at time now. Batches that only move the
// head, and errors, count nothing.
func (m *Meter) Observe(b etcdview.Batch, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.start.IsZero() {
		m.start = now
	}
	id := int64(now.Sub(m.start) / m.slot)
	for _, ev := range b.Events {
		key := ev.KV.Key
		if !strings.HasPrefix(key, m.dir) {
			continue
		}
		w := Rate{Revisions: 1, Bytes: float64(len(key) + len(ev.KV.Value))}
		m.total.add(id, w)
		m.countKey(id, key, w)
		path, at := m.dir, len(m.dir)
		for depth := 0; ; depth++ {
			m.node(path).add(id, w)
			if depth == m.depth || at == len(key) {
				break
			}
			name, _ := Segment(key[at:])
			path, at = key[:at+len(name)], at+len(name)
		}
	}
}

func (m *Meter) node(path string) *ring {
	r := m.nodes[path]
	if r == nil {
		r = &ring{}
		if len(m.nodes) < m.maxNodes {
			m.nodes[path] = r
		}
	}
	return r
}

func (m *Meter) countKey(id int64, key string, w Rate) {
	s := &m.keys[id%meterSlots]
	if s.id != id || s.counts == nil {
		s.id, s.counts = id, map[string]Rate{}
	}
	c, ok := s.counts[key]
	if !ok && len(s.counts) == maxMeterKeys {
		m.capped = true
		return
	}
	s.counts[key] = Rate{Revisions: c.Revisions + w.Revisions, Bytes: c.Bytes + w.Bytes}
}

func (r *ring) add(id int64, w Rate) {
	i := id % meterSlots
	if r.id[i] != id {
		r.id[i], r.counts[i] = id, Rate{}
	}
	r.counts[i].Revisions += w.Revisions
	r.counts[i].Bytes += w.Bytes
}

// sum is the counts of the slots after id − meterSlots, up to id.
func (r *ring) sum(id int64) Rate {
	var s Rate
	for i := range meterSlots {
		if r.id[i] > id-meterSlots && r.id[i] <= id {
			s.Revisions += r.counts[i].Revisions
			s.Bytes += r.counts[i].Bytes
		}
	}
	return s
}

// Rates are the rates over the window up to now, with the top keys the
// hottest by revisions a second.
func (m *Meter) Rates(now time.Time, top int) Rates {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.start.IsZero() {
		return Rates{}
	}
	id := int64(now.Sub(m.start) / m.slot)
	// The slots summed start with slot id − meterSlots + 1, the current
	// one is under way: the rates are over that span exactly.
	over := now.Sub(m.start)
	if first := id - meterSlots + 1; first > 0 {
		over -= time.Duration(first) * m.slot
	}
	rs := Rates{Over: over, Nodes: map[string]Rate{}, KeysCapped: m.capped}
	per := func(c Rate) Rate {
		if over <= 0 {
			return Rate{}
		}
		return Rate{Revisions: c.Revisions / over.Seconds(), Bytes: c.Bytes / over.Seconds()}
	}
	rs.Total = per(m.total.sum(id))
	for path, r := range m.nodes {
		if c := r.sum(id); c.Revisions > 0 {
			rs.Nodes[path] = per(c)
		}
	}
	keys := map[string]Rate{}
	for _, s := range m.keys {
		if s.id > id-meterSlots && s.id <= id {
			for k, c := range s.counts {
				keys[k] = Rate{Revisions: keys[k].Revisions + c.Revisions, Bytes: keys[k].Bytes + c.Bytes}
			}
		}
	}
	for k, c := range keys {
		rs.Keys = append(rs.Keys, KeyRate{Key: k, Rate: per(c)})
	}
	slices.SortFunc(rs.Keys, func(a, b KeyRate) int {
		return cmp.Or(cmp.Compare(b.Revisions, a.Revisions), strings.Compare(a.Key, b.Key))
	})
	if len(rs.Keys) > top {
		rs.Keys = rs.Keys[:top]
	}
	return rs
}

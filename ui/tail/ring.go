package tail

import (
	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/etcdview"
)

// Row is what the tail keeps of one event: metadata only. Values stay in
// etcd (and briefly in the small recent cache); a diff of an older row reads
// them again, so a full ring of 100k rows stays near 20 MB.
type Row struct {
	Type      etcdview.EventType // "" for a note row
	Note      string             // a resume, a leader change, an error
	Key       string
	Resource  string
	Namespace string
	Name      string
	Rev       int64 // the event's revision
	PrevRev   int64 // the previous value's mod revision, 0 when unknown
	Size      int
	// Summary is the changed field paths, computed on demand for the rows
	// in view; summarised says it was computed (it may be "").
	Summary    string
	summarised bool
	pending    bool
	verdict    verdict // under the :where in force
}

func rowOf(ev etcdview.Event) Row {
	k := decode.ParseKey(ev.KV.Key)
	r := Row{Type: ev.Type, Key: ev.KV.Key, Resource: k.Resource, Namespace: k.Namespace, Name: k.Name, Rev: ev.KV.ModRevision, Size: len(ev.KV.Value)}
	if !k.IsObject {
		r.Name = k.String()
	}
	if ev.Prev != nil {
		r.PrevRev = ev.Prev.ModRevision
	}
	if ev.Type != etcdview.Modified {
		// Known without reading a value: "created" or "deleted".
		r.Summary, r.summarised = etcdview.Summary(ev.Type, nil, decode.Object{}), true
	}
	return r
}

// Ring is a fixed-capacity buffer of rows addressed by sequence number: row
// s lives at s % cap while total-cap <= s < total.
type Ring struct {
	rows  []Row
	cap   int
	total uint64
}

// NewRing is an empty ring of capacity n (at least 1).
func NewRing(n int) *Ring {
	return &Ring{cap: max(n, 1)}
}

// Push adds r as the newest row, dropping the oldest when full.
func (b *Ring) Push(r Row) {
	if len(b.rows) < b.cap {
		b.rows = append(b.rows, r)
	} else {
		b.rows[b.total%uint64(b.cap)] = r
	}
	b.total++
}

// Len is how many rows the ring holds.
func (b *Ring) Len() int { return len(b.rows) }

// Total is how many rows were ever pushed.
func (b *Ring) Total() uint64 { return b.total }

// First is the sequence number of the oldest row held.
func (b *Ring) First() uint64 { return b.total - uint64(len(b.rows)) }

// Dropped is how many rows fell out of the ring.
func (b *Ring) Dropped() uint64 { return b.First() }

// Cap is the ring's capacity.
func (b *Ring) Cap() int { return b.cap }

// At is row seq; seq must be held.
func (b *Ring) At(seq uint64) *Row { return &b.rows[seq%uint64(b.cap)] }

// Holds reports whether seq is still in the ring.
func (b *Ring) Holds(seq uint64) bool { return seq >= b.First() && seq < b.total }

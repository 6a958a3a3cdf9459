package tail

import (
	"errors"
	"fmt"
	"maps"
	"sync"
	"sync/atomic"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/decode/table"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/ui/common"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// Predicate says whether to show an event, given its object as a
// JSON-shaped map; an error means it could not be evaluated on it.
type Predicate func(map[string]any) (bool, error)

// rule is a :where filter as the model and the watch's reader share it:
// one value per :where, compared by address.
type rule struct {
	expr string
	keep Predicate
	// resources makes objects as kubectl is served them, as get --where
	// and the browse level's :where see them.
	resources *resources
}

// resources are the table makers of the resources a rule has judged
// objects of, by kubectl's name, resolved once each (a custom resource's
// CRD is read at the first event's revision): the reader of the watch and
// the sweep judge at once.
type resources struct {
	resolve table.Resolver
	mu      sync.Mutex
	byName  map[string]*table.Resource // nil: a resource not known
}

// of is the table maker of key's resource, nil when it is not known or
// cannot be resolved: its objects are then judged as stored.
func (rs *resources) of(c common.Common, key string, rev int64) *table.Resource {
	k := decode.ParseKey(key)
	if !k.IsObject {
		return nil
	}
	name := table.KubectlName(k)
	rs.mu.Lock()
	res, seen := rs.byName[name]
	rs.mu.Unlock()
	if seen {
		return res
	}
	ctx, cancel := c.Context()
	defer cancel()
	res, err := rs.resolve(ctx, name, rev)
	if err != nil {
		return nil // not remembered: the next event tries again
	}
	rs.mu.Lock()
	rs.byName[name] = res
	rs.mu.Unlock()
	return res
}

// verdict is what a rule made of one row.
type verdict uint8

const (
	unjudged verdict = iota // not yet evaluated (or under no rule)
	kept
	hidden
	failed // the rule could not be evaluated on the row's object
)

// whereState is the rule in force and its counts over the rows the ring
// holds. Rows held when it was set are judged by a sweep, newest first,
// off the Update loop: their values are read again from etcd, as for a
// diff. sweepAt is the sequence number the sweep has reached: rows below
// it, from the ring's first, are still to judge; late are rows read from
// the watch before the rule was set but added after, judged first.
type whereState struct {
	rule     *rule
	counts   [4]int // by verdict
	sweepAt  uint64
	late     []uint64
	sweeping bool
	lastErr  string // the newest failure: its row and reason
}

// noteErr keeps err, if any, as the newest failure, on r.
func (w *whereState) noteErr(r *Row, err error) {
	if err != nil {
		w.lastErr = fmt.Sprintf("%s: %v", rowName(r), err)
	}
}

// count adds delta rows of verdict v.
func (w *whereState) count(v verdict, delta int) {
	if v != unjudged {
		w.counts[v] += delta
	}
}

// sweepChunk is how many rows one sweep command judges.
const sweepChunk = 256

// SetWhere filters the rows to the events whose object keep keeps: the
// value after the event, or before it for a DELETE; expr is what the
// header shows. SetWhere("", nil) clears the filter.
func (m *Model) SetWhere(expr string, keep Predicate) tea.Cmd {
	for seq := m.ring.First(); seq < m.ring.Total(); seq++ {
		m.ring.At(seq).verdict = unjudged
	}
	if keep == nil {
		m.where = whereState{}
		m.current.Store(nil)
		m.reindex()
		return m.summariseVisible()
	}
	rs := &resources{resolve: m.resolve, byName: map[string]*table.Resource{}}
	m.where = whereState{rule: &rule{expr: expr, keep: keep, resources: rs}, sweepAt: m.ring.Total()}
	m.current.Store(m.where.rule)
	m.reindex()
	return m.sweep()
}

// judge sets r's verdict and counts it.
func (m *Model) judge(r *Row, v verdict, err error) {
	m.where.count(r.verdict, -1)
	r.verdict = v
	m.where.count(v, 1)
	m.where.noteErr(r, err)
}

func rowName(r *Row) string {
	if r.Name == "" {
		return r.Key // a singleton (/registry/ranges/serviceips) has no name
	}
	if r.Namespace != "" {
		return r.Namespace + "/" + r.Name
	}
	return r.Name
}

// sweep judges the next chunk of rows held from before the rule, newest
// first.
func (m *Model) sweep() tea.Cmd {
	w := &m.where
	if w.rule == nil || w.sweeping {
		return nil
	}
	var changes []change
	for len(w.late) > 0 && len(changes) < sweepChunk {
		if seq := w.late[0]; m.ring.Holds(seq) {
			changes = append(changes, m.changeOf(seq))
		}
		w.late = w.late[1:]
	}
	for w.sweepAt > m.ring.First() && len(changes) < sweepChunk {
		w.sweepAt--
		if m.ring.At(w.sweepAt).Type != "" {
			changes = append(changes, m.changeOf(w.sweepAt))
		}
	}
	if len(changes) == 0 {
		return nil
	}
	w.sweeping = true
	c, rl := m.common, w.rule
	return func() tea.Msg {
		msg := verdictsMsg{rule: rl, seqs: make([]uint64, len(changes)), verdicts: make([]verdict, len(changes)), errs: make([]error, len(changes))}
		for i, ch := range changes {
			msg.seqs[i] = ch.seq
			msg.verdicts[i], msg.errs[i] = rl.judge(c, ch)
		}
		return msg
	}
}

// verdictsMsg carries a sweep's verdicts.
type verdictsMsg struct {
	rule     *rule
	seqs     []uint64
	verdicts []verdict
	errs     []error
}

func (m *Model) onVerdicts(msg verdictsMsg) tea.Cmd {
	if msg.rule != m.where.rule {
		return nil // a rule since replaced
	}
	m.where.sweeping = false
	for i, seq := range msg.seqs {
		if m.ring.Holds(seq) {
			m.judge(m.ring.At(seq), msg.verdicts[i], msg.errs[i])
		}
	}
	m.reindex()
	return tea.Batch(m.sweep(), m.summariseVisible())
}

// judge evaluates the rule on the object of a change.
func (rl *rule) judge(c common.Common, ch change) (verdict, error) {
	obj, err := ch.subject(c, rl.resources)
	if err != nil {
		return failed, err
	}
	ok, err := rl.keep(obj)
	switch {
	case err != nil:
		return failed, err
	case ok:
		return kept, nil
	}
	return hidden, nil
}

// judgeEvents judges a drained batch's events under the rule in force
// when they were read, off the Update loop: the events carry their
// values, which the ring does not keep.
func judgeEvents(c common.Common, current *atomic.Pointer[rule], bs []etcdview.Batch) (*rule, [][]verdict, [][]error) {
	rl := current.Load()
	if rl == nil {
		return nil, nil, nil
	}
	verdicts, errs := make([][]verdict, len(bs)), make([][]error, len(bs))
	for i, b := range bs {
		verdicts[i], errs[i] = make([]verdict, len(b.Events)), make([]error, len(b.Events))
		for j, ev := range b.Events {
			verdicts[i][j], errs[i][j] = rl.judge(c, changeOfEvent(ev))
		}
	}
	return rl, verdicts, errs
}

// changeOfEvent is an event as a change, with the values it carries.
func changeOfEvent(ev etcdview.Event) change {
	ch := change{typ: ev.Type, key: ev.KV.Key, rev: ev.KV.ModRevision, newV: ev.KV.Value, haveNew: ev.Type != etcdview.Deleted}
	if ev.Prev != nil {
		ch.oldV, ch.haveOld, ch.prevRevKnown = ev.Prev.Value, true, ev.Prev.ModRevision
	}
	return ch
}

// subject is the object a :where judges a change by, as a JSON-shaped
// map: the value after it, or the value before a DELETE, as kubectl is
// served it (as stored when its resource is not known).
func (ch change) subject(c common.Common, rs *resources) (map[string]any, error) {
	value, have, readAt, modRev := ch.newV, ch.haveNew, ch.rev, ch.rev
	if ch.typ == etcdview.Deleted {
		// The value before is read as of the revision before the delete.
		value, have, readAt, modRev = ch.oldV, ch.haveOld, ch.rev-1, ch.prevRevKnown
	}
	if !have {
		var err error
		if value, err = ch.read(c, readAt); err != nil {
			return nil, err
		}
	}
	if value == nil {
		return nil, errors.New("no value to evaluate")
	}
	o := c.Decoder.DecodeAt(ch.key, value, modRev)
	if o.Object == nil {
		return nil, fmt.Errorf("not an object: %s", o.Label())
	}
	if res := rs.of(c, ch.key, readAt); res != nil {
		return res.ServedContentOf(c.Decoder, o, modRev)
	}
	return objectMap(c.Decoder, o)
}

// objectMap is o's object as a JSON-shaped map, with what the decoder
// hides hidden (Secret data, unless shown), as get --where sees it.
func objectMap(d decode.Decoder, o decode.Object) (map[string]any, error) {
	var m map[string]any
	if u, ok := o.Object.(*unstructured.Unstructured); ok {
		m = maps.Clone(u.Object) // Hide changes the top level only
	} else {
		var err error
		if m, err = runtime.DefaultUnstructuredConverter.ToUnstructured(o.Object); err != nil {
			return nil, err
		}
	}
	d.Hide(o.GVK, m)
	return m, nil
}

package space

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/etcdview"
)

func batchOf(keys ...string) etcdview.Batch {
	var b etcdview.Batch
	for _, k := range keys {
		b.Events = append(b.Events, etcdview.Event{Type: etcdview.Modified, KV: etcdview.KV{Key: k, Value: make([]byte, 90)}})
	}
	return b
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-6 }

func TestMeterRatesPerNodeAndKeyOverItsWindow(t *testing.T) {
	const lease = "/registry/leases/kube-node-lease/node-1"
	const event = "/registry/events/default/e1"
	m := NewMeter("/registry", 2, time.Minute)
	start := time.Unix(1_000_000, 0)
	// A lease renewed every 10 s and an event written every second, for
	// 60 s: 6 and 60 writes.
	for s := range 60 {
		keys := []string{event}
		if s%10 == 0 {
			keys = append(keys, lease)
		}
		m.Observe(batchOf(keys...), start.Add(time.Duration(s)*time.Second))
	}
	// Just before the window's thirteenth slot begins, the first is
	// still in it: the rates are over the 60 s written.
	r := m.Rates(start.Add(time.Minute-time.Nanosecond), 10)
	if r.Over != time.Minute-time.Nanosecond {
		t.Fatalf("over %v, want 60s", r.Over)
	}
	leaseBytes := float64(len(lease) + 90)
	for path, want := range map[string]Rate{
		"/registry/":                        {Revisions: 66.0 / 60, Bytes: (6*leaseBytes + 60*float64(len(event)+90)) / 60},
		"/registry/leases/":                 {Revisions: 0.1, Bytes: 6 * leaseBytes / 60},
		"/registry/leases/kube-node-lease/": {Revisions: 0.1, Bytes: 6 * leaseBytes / 60},
		"/registry/events/default/":         {Revisions: 1, Bytes: float64(len(event) + 90)},
	} {
		if got := r.Of(path); !near(got.Revisions, want.Revisions) || !near(got.Bytes, want.Bytes) {
			t.Errorf("%s: %+v, want %+v", path, got, want)
		}
	}
	if _, deeper := r.Nodes[lease]; deeper {
		t.Errorf("a node below depth 2 was measured: %s", lease)
	}
	if len(r.Keys) != 2 || r.Keys[0].Key != event || !near(r.Keys[1].Revisions, 0.1) {
		t.Errorf("keys %+v, want the event first, then the lease at 0.1/s", r.Keys)
	}
	// Two minutes later with nothing written, the window holds nothing.
	if r := m.Rates(start.Add(3*time.Minute), 10); r.Total.Revisions != 0 || len(r.Keys) != 0 || r.Over > time.Minute {
		t.Errorf("after a silent window: %+v, want no writes over at most 1m", r)
	}
}

func TestMeterBoundsTheKeysItTracks(t *testing.T) {
	m := NewMeter("/registry", 1, time.Minute)
	now := time.Unix(1_000_000, 0)
	var keys []string
	for i := range maxMeterKeys + 10 {
		keys = append(keys, fmt.Sprintf("/registry/events/ns/e%d", i))
	}
	m.Observe(batchOf(keys...), now)
	r := m.Rates(now.Add(10*time.Second), 5)
	if !r.KeysCapped || len(r.Keys) != 5 || !near(r.Of("/registry/events/").Revisions*10, float64(len(keys))) {
		t.Errorf("capped %v, %d keys, events %v; want capped, 5 keys, every write in the node", r.KeysCapped, len(r.Keys), r.Of("/registry/events/"))
	}
}

package changes

import (
	"fmt"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/etcdview"
)

// BenchmarkWindow100kRenewals is the model's part of `changes` over the
// bench's window: 100k renewals of 5,000 node Leases, counted, then
// reported (two decodes a Lease).
func BenchmarkWindow100kRenewals(b *testing.B) {
	const leases, revisions = 5_000, 100_000
	values := make([][]byte, leases)
	keys := make([]string, leases)
	for i := range leases {
		l := lease(t0.Add(time.Duration(i) * time.Millisecond))
		l.Name = fmt.Sprintf("node-%04d", i)
		keys[i], values[i] = encode(b, l)
	}
	// The watch delivers the events; building them is not the model's part.
	events := make([]etcdview.Event, revisions)
	for rev := range revisions {
		i := rev % leases
		events[rev] = event(etcdview.Modified, keys[i], int64(rev+1), values[i], values[i], int64(rev))
		events[rev].KV.CreateRevision = 1
	}
	b.ReportAllocs()
	for b.Loop() {
		w := Window{Times: &TimeMap{}}
		for _, ev := range events {
			w.add(ev)
		}
		w.report(decode.Decoder{})
	}
}

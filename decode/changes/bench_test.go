package changes

import (
	"fmt"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/decode"
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
	b.ReportAllocs()
	for b.Loop() {
		w := NewWindow()
		for rev := range revisions {
			i := rev % leases
			w.Add(Event{Type: Modified, Key: keys[i], Revision: int64(rev + 1), Value: values[i], Prev: values[i], PrevRevision: int64(rev), CreateRevision: 1})
		}
		var times TimeMap
		w.Report(decode.Decoder{}, &times)
	}
}

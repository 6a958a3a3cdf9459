package record

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/etcdview"
)

// BenchmarkWriteBatches measures the writer alone, without etcd: batches of
// 100 updates of 1 KiB values to 10,000 keys, each with its previous value
// as a live watch brings it, grouped as they wait. ns/op is per event.
func BenchmarkWriteBatches(b *testing.B) {
	f, err := Open(filepath.Join(b.TempDir(), "rec.db"), "")
	if err != nil {
		b.Fatal(err)
	}
	r := &run{f: f, opts: Options{Now: time.Now, Status: func(Status) {}}, db: b.Context()}
	value := []byte(strings.Repeat("x", 1024))
	const keys, batch = 10000, 100
	rev := int64(0)
	b.SetBytes(int64(len(value)))
	b.ResetTimer()
	for done := 0; done < b.N; {
		var group []etcdview.Batch
		for range maxGroup / batch {
			var evs []etcdview.Event
			for range batch {
				rev++
				kv := etcdview.KV{Key: fmt.Sprintf("/registry/configmaps/ns/cm-%05d", rev%keys), Value: value, ModRevision: rev, CreateRevision: 1}
				ev := etcdview.Event{Type: etcdview.Modified, KV: kv, Prev: &etcdview.KV{Key: kv.Key, Value: value, ModRevision: rev - keys}}
				if rev <= keys {
					ev.Type, ev.Prev, ev.KV.CreateRevision = etcdview.Added, nil, rev
				}
				evs = append(evs, ev)
			}
			group = append(group, etcdview.Batch{Events: evs, Revision: rev})
			done += batch
		}
		if err := r.write(group); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
	// Closed, the log is folded into the file: its size is the file's.
	f.Close()
	b.ReportMetric(float64(f.Size())/float64(rev)/float64(len(value)), "file-bytes/value-byte")
}

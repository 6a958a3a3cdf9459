package etcdview

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"go.etcd.io/etcd/server/v3/lease"
	"go.etcd.io/etcd/server/v3/storage/backend"
	"go.etcd.io/etcd/server/v3/storage/mvcc"
	"go.uber.org/zap"
)

// change is a put of key (a deletion when value is "") in a data file.
type change struct{ key, value string }

// dataFile writes a data file as an etcd member does, through etcd's own
// storage (its mvcc store over its bbolt backend, without Raft, with a lessor
// that holds no lease): one revision per change, from revision 2.
func dataFile(t testing.TB, changes []change) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "db")
	b := backend.NewDefaultBackend(zap.NewNop(), path)
	s := mvcc.NewStore(zap.NewNop(), b, &lease.FakeLessor{}, mvcc.StoreConfig{})
	for _, c := range changes {
		if c.value == "" {
			s.DeleteRange([]byte(c.key), nil)
		} else {
			s.Put([]byte(c.key), []byte(c.value), 0)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// renewals are n changes of one lease key, as a kubelet renews its node's
// lease every 10 s, among changes of other keys, with a deletion and a
// re-creation of the lease in the middle.
func renewals(n int) []change {
	const lease = "/registry/leases/kube-node-lease/node-0"
	var changes []change
	for i := range n {
		v := fmt.Sprint("renew-", i)
		switch {
		case i == n/2:
			v = ""
		case i%10 == 0:
			changes = append(changes, change{fmt.Sprintf("/registry/pods/default/p-%d", i), "pod"})
		}
		changes = append(changes, change{lease, v})
	}
	return changes
}

// replayed is every event of a watch of prefix from revision from.
func replayed(t testing.TB, f *File, prefix string, from int64) []Event {
	var events []Event
	for b := range f.Watch(testCtx(t.(*testing.T)), prefix, WatchOptions{Rev: from}) {
		if b.Err != nil {
			t.Fatal(b.Err)
		}
		events = append(events, b.Events...)
	}
	return events
}

func TestFileReplaysAKeyOfManyRevisions(t *testing.T) {
	changes := renewals(3000)
	f, err := OpenFile(dataFile(t, changes))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const from = 100
	events := replayed(t, f, "/registry/leases/", from)
	// The changes that were made, from revision from on, in order, each
	// with the value before it.
	var want []Event
	var prev *KV
	for i, c := range changes {
		rev := int64(i + 2)
		if c.key != "/registry/leases/kube-node-lease/node-0" {
			continue
		}
		ev := Event{Type: Modified, KV: KV{Key: c.key, Value: []byte(c.value), ModRevision: rev}, Prev: prev}
		switch {
		case c.value == "":
			ev.Type, ev.KV.Value = Deleted, nil
		case prev == nil:
			ev.Type = Added
		}
		if rev >= from {
			want = append(want, ev)
		}
		prev = nil
		if c.value != "" {
			prev = &KV{Key: c.key, Value: []byte(c.value), ModRevision: rev}
		}
	}
	if len(events) != len(want) {
		t.Fatalf("%d events, want %d", len(events), len(want))
	}
	for i, ev := range events {
		w := want[i]
		if ev.Type != w.Type || ev.KV.ModRevision != w.KV.ModRevision || string(ev.KV.Value) != string(w.KV.Value) ||
			(ev.Prev == nil) != (w.Prev == nil) || ev.Prev != nil && (ev.Prev.ModRevision != w.Prev.ModRevision || string(ev.Prev.Value) != string(w.Prev.Value)) {
			t.Fatalf("event %d = %s %d %q prev %+v, want %s %d %q prev %+v", i, ev.Type, ev.KV.ModRevision, ev.KV.Value, ev.Prev, w.Type, w.KV.ModRevision, w.KV.Value, w.Prev)
		}
	}
}

func TestFileReplaysARevisionMissingFromItsIndex(t *testing.T) {
	f, err := OpenFile(dataFile(t, []change{{"/registry/a", "1"}, {"/registry/a", "2"}, {"/registry/a", "3"}, {"/registry/a", "4"}}))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// The index is built once, when the file opens; the bucket is read
	// again by the replay. Take the last two revisions out of the index
	// to see that the replay stands on what the bucket holds.
	f.index.revs, f.index.entries[0].revEnd = f.index.revs[:2], 2
	var got []string
	for _, ev := range replayed(t, f, "/registry/", 2) {
		prev := "-"
		if ev.Prev != nil {
			prev = string(ev.Prev.Value)
		}
		got = append(got, fmt.Sprintf("%s %d %s after %s", ev.Type, ev.KV.ModRevision, ev.KV.Value, prev))
	}
	want := []string{"ADDED 2 1 after -", "MODIFIED 3 2 after 1", "MODIFIED 4 3 after 2", "MODIFIED 5 4 after 2"}
	if !slices.Equal(got, want) {
		t.Errorf("replayed %q, want %q", got, want)
	}
}

// BenchmarkFileReplayPerEvent replays every renewal of one lease key: the
// time per event stays the same whatever the number of revisions of the
// key.
func BenchmarkFileReplayPerEvent(b *testing.B) {
	for _, n := range []int{1000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("revisions=%d", n), func(b *testing.B) {
			f, err := OpenFile(dataFile(b, renewals(n)))
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			b.ResetTimer()
			var events int
			for range b.N {
				for batch := range f.Watch(b.Context(), "/registry/leases/", WatchOptions{Rev: 1}) {
					events += len(batch.Events)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(events), "ns/event")
		})
	}
}

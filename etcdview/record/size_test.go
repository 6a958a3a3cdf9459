package record

import (
	"iter"
	"path/filepath"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/bench/fill"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/etcdview/etcdviewtest"
	"k8s.io/apimachinery/pkg/runtime"
)

// kubeStream is what a recording of a busy cluster writes, as the watch
// brings it: the bench fill's objects created (protobuf values as
// kube-apiserver stores them: Pods, Events, ReplicaSets, Secrets...), then
// its history (node leases renewed, Pods restarted: updates, each with its
// previous value), then every tenth Event deleted, as they expire. It
// returns the bytes of the keys and values the events hold.
func kubeStream(t testing.TB, r *run, p fill.Plan) int64 {
	t.Helper()
	var rev, held int64
	mods := map[string]etcdview.KV{}
	var batch []etcdview.Event
	flush := func() {
		if len(batch) == 0 {
			return
		}
		if err := r.write([]etcdview.Batch{{Events: batch, Revision: rev}}); err != nil {
			t.Fatal(err)
		}
		batch = nil
	}
	emit := func(ev etcdview.Event) {
		rev++
		ev.KV.ModRevision = rev
		if prev, ok := mods[ev.KV.Key]; ok {
			ev.Prev = &prev
			ev.KV.CreateRevision = prev.CreateRevision
		} else {
			ev.Type, ev.KV.CreateRevision = etcdview.Added, rev
		}
		held += int64(len(ev.KV.Key) + len(ev.KV.Value))
		if ev.Type == etcdview.Deleted {
			delete(mods, ev.KV.Key)
		} else {
			mods[ev.KV.Key] = ev.KV
		}
		if batch = append(batch, ev); len(batch) == 100 {
			flush()
		}
	}
	put := func(objs iter.Seq[runtime.Object]) {
		for o := range objs {
			key, err := etcdviewtest.Key(o)
			if err != nil {
				t.Fatal(err)
			}
			value, err := etcdviewtest.Encode(o)
			if err != nil {
				t.Fatal(err)
			}
			emit(etcdview.Event{Type: etcdview.Modified, KV: etcdview.KV{Key: key, Value: value}})
		}
	}
	put(p.Objects())
	put(p.History())
	for key := range p.Expired() {
		emit(etcdview.Event{Type: etcdview.Deleted, KV: etcdview.KV{Key: key}})
	}
	flush()
	return held
}

// TestAFileHoldsLittleMoreThanItsKeysAndValues: a recording of the bench
// fill's stream is at most 1.2 bytes of file per byte of the keys and
// values it holds, its log folded in.
func TestAFileHoldsLittleMoreThanItsKeysAndValues(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "rec.db")
	f, err := Open(path, "/registry/")
	if err != nil {
		t.Fatal(err)
	}
	r := &run{f: f, opts: Options{Now: time.Now, Status: func(Status) {}}, db: t.Context()}
	p := fill.NewPlan(100_000)
	p.LeaseRenewals = 30
	held := kubeStream(t, r, p)
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	ratio := float64(f.Size()) / float64(held)
	t.Logf("%d bytes of file for %d bytes of keys and values: %.2f", f.Size(), held, ratio)
	if ratio > 1.2 {
		t.Errorf("%.2f bytes of file per byte of keys and values, want at most 1.2", ratio)
	}
}

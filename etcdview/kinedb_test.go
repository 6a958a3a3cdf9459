package etcdview

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/etcdscope/etcdscope/embedded/etcdtest"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// kineFixture is a state.db written by a real kine, and what that kine
// answered about it before it stopped.
type kineFixture struct {
	path      string
	head      int64 // kine's revision when it stopped
	compacted int64
	// atHead and atCompacted are every key below /registry/configmaps/ as
	// kine served it at its head and at the compaction revision.
	atHead, atCompacted map[string]KV
	// writes are the revisions of each configmap written after the
	// compaction, in order, and after every write of it, its value.
	writes map[string][]KV
	// versions are the writes each configmap at the head took since it
	// was last created, as etcd would count its version.
	versions map[string]int64
	// events are the writes below /registry/configmaps/ after the
	// compaction, in revision order, a deletion with no value.
	events []Event
}

const kineCMs = "/registry/configmaps/"

// writeKineFixture runs kine on a new state.db and writes configmaps that
// are created, updated, deleted and created again, renews four Leases more
// than 1000 times in all (kine never compacts its newest 1000 revisions),
// compacts, and writes some configmaps again. It records what kine served
// before stopping it: kine stops with its log checkpointed into the file.
func writeKineFixture(t *testing.T) kineFixture {
	t.Helper()
	k := etcdtest.StartKine(t, etcdtest.KineOptions{})
	cli := k.Client(t)
	ctx := testCtx(t)
	value := func(key string, n int) string {
		return fmt.Sprintf(`{"key":%q,"n":%d,"pad":%q}`, key, n, strings.Repeat("x", (n*37)%900))
	}
	cm := func(i int) string { return fmt.Sprintf("%sns-%d/cm-%02d", kineCMs, i%3, i) }
	versions := map[string]int64{}
	for i := range 30 {
		put(t, cli, cm(i), value(cm(i), 0))
		versions[cm(i)]++
		if i%3 == 0 {
			put(t, cli, cm(i), value(cm(i), 1))
			versions[cm(i)]++
		}
		if i%5 == 0 {
			if err := etcdtest.Delete(ctx, cli, cm(i)); err != nil {
				t.Fatal(err)
			}
			delete(versions, cm(i))
		}
		if i%10 == 0 {
			put(t, cli, cm(i), value(cm(i), 2))
			versions[cm(i)]++
		}
	}
	fx := kineFixture{path: k.DB, writes: map[string][]KV{}, versions: versions}
	fx.compacted, fx.atCompacted = kineState(t, cli, 0)
	var wg sync.WaitGroup
	for l := range 4 {
		wg.Go(func() {
			for n := range 270 {
				if _, err := cli.Put(ctx, fmt.Sprintf("/registry/leases/kube-node-lease/node-%d", l), value("lease", n)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if _, err := cli.Compact(ctx, fx.compacted); err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{1, 3, 10, 11, 11, 20} {
		if i == 20 {
			if err := etcdtest.Delete(ctx, cli, cm(i)); err != nil {
				t.Fatal(err)
			}
			// Nothing else writes now: kine's revision is the deletion's.
			got, _ := cli.Get(ctx, "x")
			fx.writes[cm(i)] = append(fx.writes[cm(i)], KV{Key: cm(i), ModRevision: got.Header.Revision})
			delete(fx.versions, cm(i))
			continue
		}
		rev := put(t, cli, cm(i), value(cm(i), 3+len(fx.writes[cm(i)])))
		fx.versions[cm(i)]++
		fx.writes[cm(i)] = append(fx.writes[cm(i)], KV{Key: cm(i), Value: []byte(value(cm(i), 3+len(fx.writes[cm(i)]))), ModRevision: rev})
	}
	fx.head, fx.atHead = kineState(t, cli, 0)
	fx.events = kineEvents(t, cli, fx.compacted+1)
	k.Stop()
	return fx
}

// kineState is every configmap kine serves at rev (0: its head), and the
// revision it answered at.
func kineState(t *testing.T, cli *clientv3.Client, rev int64) (int64, map[string]KV) {
	t.Helper()
	resp, err := cli.Get(testCtx(t), kineCMs, clientv3.WithPrefix(), clientv3.WithRev(rev))
	if err != nil {
		t.Fatal(err)
	}
	kvs := map[string]KV{}
	for _, kv := range resp.Kvs {
		kvs[string(kv.Key)] = KV{Key: string(kv.Key), Value: kv.Value, CreateRevision: kv.CreateRevision,
			ModRevision: kv.ModRevision, Version: kv.Version, Lease: kv.Lease}
	}
	return resp.Header.Revision, kvs
}

// kineEvents is what kine's own watch replays below the configmaps from
// revision from: the events the file's replay must give again.
func kineEvents(t *testing.T, cli *clientv3.Client, from int64) []Event {
	t.Helper()
	ctx := testCtx(t)
	// The last write of the fixture is below the configmaps.
	last, _ := kineState(t, cli, 0)
	var evs []Event
	wch := cli.Watch(ctx, kineCMs, clientv3.WithPrefix(), clientv3.WithRev(from), clientv3.WithPrevKV())
	for resp := range wch {
		if err := resp.Err(); err != nil {
			t.Fatal(err)
		}
		for _, e := range resp.Events {
			ev := Event{Type: Modified, KV: KV{Key: string(e.Kv.Key), Value: e.Kv.Value, CreateRevision: e.Kv.CreateRevision,
				ModRevision: e.Kv.ModRevision, Lease: e.Kv.Lease}}
			switch {
			case e.Type == clientv3.EventTypeDelete:
				ev.Type, ev.KV = Deleted, KV{Key: ev.KV.Key, ModRevision: e.Kv.ModRevision}
			case e.IsCreate():
				ev.Type = Added
			}
			if e.PrevKv != nil {
				ev.Prev = &KV{Key: string(e.PrevKv.Key), Value: e.PrevKv.Value, CreateRevision: e.PrevKv.CreateRevision,
					ModRevision: e.PrevKv.ModRevision, Lease: e.PrevKv.Lease}
			}
			evs = append(evs, ev)
			if e.Kv.ModRevision >= last {
				return evs
			}
		}
	}
	t.Fatal("kine's watch ended before its head")
	return nil
}

func openKine(t *testing.T, path string) *KineFile {
	t.Helper()
	f, err := OpenKineFile(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// TestKineFileReadsWhatKineServed opens a state.db a real kine wrote and
// reads from it what that kine answered: every key at its head and at the
// compaction revision, the count of keys, the revisions kept of each key,
// and the watch's replay of the writes after the compaction.
func TestKineFileReadsWhatKineServed(t *testing.T) {
	fx := writeKineFixture(t)
	f := openKine(t, fx.path)
	ctx := testCtx(t)
	st, err := f.Status(ctx)
	if err != nil || st.Revision != fx.head || st.CompactRevision != fx.compacted {
		t.Fatalf("Status: revision %d, compacted %d, %v: want kine's %d and %d", st.Revision, st.CompactRevision, err, fx.head, fx.compacted)
	}
	for name, want := range map[int64]map[string]KV{0: fx.atHead, fx.compacted: fx.atCompacted} {
		n, err := f.Count(ctx, kineCMs, name)
		if err != nil || n != int64(len(want)) {
			t.Errorf("Count at %d: %d, %v: kine served %d keys", name, n, err, len(want))
		}
		p, err := f.List(ctx, kineCMs, name, PageToken{Values: true, Limit: 7})
		for err == nil {
			for _, kv := range p.Keys {
				if w := want[kv.Key]; !sameKV(kv, w) {
					t.Errorf("at revision %d: %s reads %+v, kine served %+v", name, kv.Key, brief(kv), brief(w))
				}
			}
			if p.Next == nil {
				break
			}
			p, err = f.List(ctx, kineCMs, p.Revision, *p.Next)
		}
		if err != nil {
			t.Errorf("List at %d: %v", name, err)
		}
	}
	if _, err := f.Get(ctx, kineCMs+"ns-0/cm-03", fx.compacted-1); !errors.Is(err, ErrCompacted) ||
		!strings.Contains(err.Error(), fmt.Sprintf("the oldest revision kine still holds is %d", fx.compacted)) {
		t.Errorf("Get below the compaction: %v, want it said compacted by kine", err)
	}
	if !st.Kine {
		t.Errorf("Status: %+v, want it said kine's", st)
	}
	t.Run("history", func(t *testing.T) { testKineHistory(t, f, fx) })
	t.Run("replay", func(t *testing.T) { testKineReplay(t, f, fx) })
	t.Run("scan", func(t *testing.T) { testKineScan(t, f, fx) })
	t.Run("scan in spans", func(t *testing.T) {
		defer func(n int64) { kineSpan = n }(kineSpan)
		kineSpan = 7
		testKineScan(t, f, fx)
	})
}

// testKineHistory: kine's compaction leaves of each key its revision as of
// the compaction and the ones after: History gives those, newest first.
func testKineHistory(t *testing.T, f *KineFile, fx kineFixture) {
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range fx.atCompacted {
			yield(k)
		}
		for k := range fx.writes {
			yield(k)
		}
	})
	for _, key := range slices.Compact(keys) {
		var want []int64
		if kv, ok := fx.atCompacted[key]; ok {
			want = append(want, kv.ModRevision)
		}
		for _, w := range fx.writes[key] {
			want = append(want, w.ModRevision)
		}
		slices.Reverse(want)
		h, err := f.History(testCtx(t), key, HistoryOptions{})
		if err != nil {
			t.Fatalf("History(%s): %v", key, err)
		}
		var got []int64
		for _, e := range h.Entries {
			got = append(got, e.KV.ModRevision)
		}
		if !slices.Equal(got, want) {
			t.Errorf("History(%s): revisions %v, want %v", key, got, want)
		}
		if head, ok := fx.atHead[key]; ok && (len(h.Entries) == 0 || !sameKV(unversioned(h.Entries[0].KV), head)) {
			t.Errorf("History(%s) starts with %+v, want the head kine served, %+v", key, h.Entries, brief(head))
		}
		if _, ok := fx.atHead[key]; !ok && (len(h.Entries) == 0 || !h.Entries[0].Deleted) {
			t.Errorf("History(%s) of a deleted key does not start with its deletion: %+v", key, h.Entries)
		}
	}
	// cm-01 was created, compacted with nothing after it, and written once
	// after: the file holds its creation, and counts from it.
	h, err := f.History(testCtx(t), kineCMs+"ns-1/cm-01", HistoryOptions{})
	if err != nil || len(h.Entries) != 2 || h.Entries[0].KV.Version != 2 || h.Entries[1].KV.Version != 1 || h.Entries[1].Type() != Added {
		t.Errorf("History of a key whose creation the file holds: %+v, %v: want versions 2 and 1, the first ADDED", h.Entries, err)
	}
	// cm-03 was written twice before the compaction: its creation is gone.
	h, err = f.History(testCtx(t), kineCMs+"ns-0/cm-03", HistoryOptions{})
	if err != nil || len(h.Entries) != 2 || h.Entries[0].KV.Version != 0 || h.Entries[1].Type() != Modified {
		t.Errorf("History of a key whose creation was compacted: %+v, %v: want no versions, and no ADDED", h.Entries, err)
	}
}

// unversioned is kv with no version, as kine serves every key.
func unversioned(kv KV) KV {
	kv.Version = 0
	return kv
}

// testKineReplay: a replay from after the compaction gives the events kine's
// own watch gave, with their previous values.
func testKineReplay(t *testing.T, f *KineFile, fx kineFixture) {
	var got []Event
	for b := range f.Watch(testCtx(t), kineCMs, WatchOptions{Rev: fx.compacted + 1}) {
		if b.Err != nil {
			t.Fatal(b.Err)
		}
		got = append(got, b.Events...)
	}
	if len(got) != len(fx.events) {
		t.Fatalf("replay: %d events, kine's watch gave %d", len(got), len(fx.events))
	}
	for i, want := range fx.events {
		g := got[i]
		if g.Type != want.Type || !sameKV(g.KV, want.KV) || (g.Prev == nil) != (want.Prev == nil) || g.Prev != nil && !sameKV(*g.Prev, *want.Prev) {
			t.Errorf("event %d: %s %+v prev %+v, kine's watch gave %s %+v prev %+v", i, g.Type, brief(g.KV), g.Prev, want.Type, brief(want.KV), want.Prev)
		}
	}
	var first Batch
	for b := range f.Watch(testCtx(t), kineCMs, WatchOptions{Rev: fx.compacted - 1}) {
		first = b
		break
	}
	if !errors.Is(first.Err, ErrCompacted) {
		t.Errorf("a replay from below the compaction starts with %+v, want it said compacted", first)
	}
}

// testKineScan: a scan counts each key once as current, with the bytes of
// its name and value, and every revision History reads as retained.
func testKineScan(t *testing.T, f *KineFile, fx kineFixture) {
	var current, retained int
	var bytes int64
	versions := map[string]int64{}
	res, err := f.Scan(testCtx(t), kineCMs, ScanOptions{}, func(recs []ScanRecord) error {
		for _, r := range recs {
			if r.Current {
				current++
				bytes += r.Size
				versions[r.Key] = r.Version
			}
			if r.Retained {
				retained++
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var want int64
	for _, kv := range fx.atHead {
		want += int64(len(kv.Key) + len(kv.Value))
	}
	if current != len(fx.atHead) || bytes != want {
		t.Errorf("Scan: %d current keys of %d bytes, kine served %d of %d", current, bytes, len(fx.atHead), want)
	}
	checkKineVersions(t, f, fx, versions)
	var held int
	p, err := f.List(testCtx(t), kineCMs, 0, PageToken{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range p.Keys {
		h, _ := f.History(testCtx(t), kv.Key, HistoryOptions{})
		held += len(h.Entries)
	}
	for key := range fx.writes {
		if _, ok := fx.atHead[key]; !ok {
			h, _ := f.History(testCtx(t), key, HistoryOptions{})
			held += len(h.Entries)
		}
	}
	if retained != held || !res.History || res.Layout == nil || res.Layout.Size != f.pages*f.pageSize {
		t.Errorf("Scan: %d retained revisions, History reads %d; result %+v", retained, held, res)
	}
}

func sameKV(a, b KV) bool {
	return a.Key == b.Key && bytes.Equal(a.Value, b.Value) && a.CreateRevision == b.CreateRevision &&
		a.ModRevision == b.ModRevision && a.Version == b.Version && a.Lease == b.Lease
}

// brief is kv with its value cut short, for a failure message.
func brief(kv KV) KV {
	if len(kv.Value) > 20 {
		kv.Value = kv.Value[:20]
	}
	return kv
}

// checkKineVersions checks the versions a scan gave the configmaps at the
// head: the writes since each was created, where the file still holds its
// creation's row, and VersionUnknown where compaction deleted it (kine
// keeps no version to read instead).
func checkKineVersions(t *testing.T, f *KineFile, fx kineFixture, got map[string]int64) {
	t.Helper()
	var known, unknown int
	for key, kv := range fx.atHead {
		h, err := f.History(testCtx(t), key, HistoryOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want := int64(VersionUnknown)
		if slices.ContainsFunc(h.Entries, func(e Entry) bool { return e.KV.ModRevision == kv.CreateRevision }) {
			want = fx.versions[key]
			known++
		} else {
			unknown++
		}
		if got[key] != want {
			t.Errorf("Scan: %s at version %d, want %d (%d writes since its creation at %d, compacted at %d)",
				key, got[key], want, fx.versions[key], kv.CreateRevision, fx.compacted)
		}
	}
	if known == 0 || unknown == 0 {
		t.Errorf("the fixture has %d keys of known versions and %d of unknown: want both", known, unknown)
	}
}

package etcdview

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/pkg/v3/traceutil"
	"go.etcd.io/etcd/server/v3/lease"
	"go.etcd.io/etcd/server/v3/storage/backend"
	"go.etcd.io/etcd/server/v3/storage/mvcc"
	"go.etcd.io/etcd/server/v3/storage/schema"
	"go.uber.org/zap"
	"google.golang.org/protobuf/proto"
)

// storyFile writes a data file through etcd's own mvcc store: keys put,
// deleted and re-created, transactions of several changes (sub-revisions),
// a range deletion, leases, a key that is also a directory, a binary key,
// a lease renewed many times, and a compaction in the middle.
func storyFile(t testing.TB) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "db")
	b := backend.NewDefaultBackend(zap.NewNop(), path)
	s := mvcc.NewStore(zap.NewNop(), b, &lease.FakeLessor{}, mvcc.StoreConfig{})
	type op struct {
		key, value string // a deletion when value is ""; of [key, end) when end is set
		end        string
		lease      lease.LeaseID
	}
	txn := func(ops ...op) {
		w := s.Write(traceutil.TODO())
		for _, o := range ops {
			switch {
			case o.value != "":
				w.Put([]byte(o.key), []byte(o.value), o.lease)
			case o.end != "":
				w.DeleteRange([]byte(o.key), []byte(o.end))
			default:
				w.DeleteRange([]byte(o.key), nil)
			}
		}
		w.End()
	}
	txn(op{key: "/registry/pods/default/a", value: "a1"})
	txn(op{key: "/registry/pods/default/b", value: "b1"}, op{key: "/registry/configmaps/kube-system/c", value: "c1", lease: 7},
		op{key: "/registry/pods/kube-system/d", value: "d1"})
	txn(op{key: "/registry/pods/default/a", value: "a2"})
	txn(op{key: "/registry/pods/default/b"})
	txn(op{key: "/registry/pods/default/b", value: "b2"})
	txn(op{key: "/registry/pods/default/a"}, op{key: "/registry/leases/kube-node-lease/n0", value: "renew-0", lease: 9})
	for i := range 20 {
		txn(op{key: "/registry/leases/kube-node-lease/n0", value: fmt.Sprint("renew-", i+1), lease: 9})
		if i%5 == 0 {
			txn(op{key: fmt.Sprintf("/registry/events/default/e%02d", i), value: "event"})
		}
	}
	txn(op{key: "/registry/events/", end: "/registry/events0"})
	done, err := s.Compact(traceutil.TODO(), 12)
	if err != nil {
		t.Fatal(err)
	}
	<-done
	txn(op{key: "/registry/pods/default/a", value: "a3"}, op{key: "/registry/pods/default/a/b", value: "under a"})
	txn(op{key: "/registry/\xff\x00bin", value: "binary"}, op{key: "/registry", value: "the prefix itself"})
	txn(op{key: "/registry/pods/kube-system/d", value: "d2", lease: 3})
	txn(op{key: "/registry/configmaps/kube-system/c"})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// reference answers every read of a data file from a dump of its "key"
// bucket, each value decoded whole by proto.Unmarshal, by scanning the
// dump: etcd's own rules, with no index.
type reference struct {
	entries         []refEntry // in the bucket's order
	rev, compacted  int64
	keysEverWritten []string
}

type refEntry struct {
	rev revision
	kv  *mvccpb.KeyValue
}

func newReference(t *testing.T, f *File) reference {
	t.Helper()
	ref := reference{rev: f.rev, compacted: f.compacted}
	seen := map[string]bool{}
	err := f.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(schema.Key.Name()).ForEach(func(k, v []byte) error {
			r, err := parseRevision(k)
			kv := &mvccpb.KeyValue{}
			if err == nil {
				err = proto.Unmarshal(v, kv)
			}
			ref.entries = append(ref.entries, refEntry{r, kv})
			if !seen[string(kv.Key)] {
				seen[string(kv.Key)] = true
				ref.keysEverWritten = append(ref.keysEverWritten, string(kv.Key))
			}
			return err
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(ref.keysEverWritten)
	return ref
}

// get is key as of rev, from the last entry of it at or before rev.
func (r reference) get(key string, rev int64) (KV, bool) {
	var last *refEntry
	for i, e := range r.entries {
		if e.rev.main <= rev && string(e.kv.Key) == key {
			last = &r.entries[i]
		}
	}
	if last == nil || last.rev.tombstone {
		return KV{}, false
	}
	return refKV(*last), true
}

func refKV(e refEntry) KV {
	return KV{Key: string(e.kv.Key), Value: e.kv.Value, CreateRevision: e.kv.CreateRevision, ModRevision: e.rev.main,
		Version: e.kv.Version, Lease: e.kv.Lease}
}

// keys are the keys that start with prefix as of rev, sorted.
func (r reference) keys(prefix string, rev int64) []string {
	var keys []string
	for _, k := range r.keysEverWritten {
		if _, ok := r.get(k, rev); ok && strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	return keys
}

// history is every entry of key, newest first.
func (r reference) history(key string) []Entry {
	var h []Entry
	for _, e := range slices.Backward(r.entries) {
		if string(e.kv.Key) != key {
			continue
		}
		kv := refKV(e)
		if e.rev.tombstone {
			kv = KV{Key: key, ModRevision: e.rev.main}
		}
		h = append(h, Entry{KV: kv, Deleted: e.rev.tombstone})
	}
	return h
}

// prefixes are every directory of the keys ever written, and "".
func (r reference) prefixes() []string {
	set := map[string]bool{"": true}
	for _, k := range r.keysEverWritten {
		for i := 1; i < len(k); i++ {
			if k[i] == '/' {
				set[k[:i+1]] = true
			}
		}
	}
	var prefixes []string
	for p := range set {
		prefixes = append(prefixes, p)
	}
	sort.Strings(prefixes)
	return prefixes
}

// TestFileIndexAnswersAsTheBucket reads everything a data file holds,
// through the index built from its bucket and through the index read back
// from its sidecar, and compares each answer with the bucket's own: the
// kube-1.7 file, a generated one with deletions, re-creations,
// transactions and a compaction, and one where nothing was written.
func TestFileIndexAnswersAsTheBucket(t *testing.T) {
	kube := filepath.Join(t.TempDir(), "db")
	copyFile(t, kube17+"boltdb-db", kube, 0o444)
	for name, path := range map[string]string{"kube-1.7": kube, "generated": storyFile(t), "no key written": dataFile(t, nil)} {
		t.Run(name, func(t *testing.T) {
			o := sidecarOptions{cacheDir: t.TempDir()} // every file gets a sidecar
			for _, from := range []string{"bucket", "sidecar"} {
				t.Run(from, func(t *testing.T) {
					f, err := openFile(path, o)
					if err != nil {
						t.Fatal(err)
					}
					defer f.Close()
					checkReads(t, f, newReference(t, f))
				})
			}
		})
	}
}

// checkReads compares every read of f with ref's answer, at every
// revision where something changed, and at 0 (the head).
func checkReads(t *testing.T, f *File, ref reference) {
	ctx := testCtx(t)
	revs := []int64{0, ref.compacted}
	for _, e := range ref.entries {
		if e.rev.main >= ref.compacted && e.rev.main != revs[len(revs)-1] {
			revs = append(revs, e.rev.main)
		}
	}
	for _, rev := range revs {
		at := rev
		if rev == 0 {
			at = ref.rev
		}
		for _, prefix := range ref.prefixes() {
			lvl, err := f.Children(ctx, prefix, rev)
			if err == nil {
				err = CountChildren(ctx, f, &lvl)
			}
			if want := wantChildren(ref.keys(prefix, at), prefix); err != nil || !slices.Equal(lvl.Children, want) {
				t.Fatalf("children of %q at %d: %+v, %v; want %+v", prefix, rev, lvl.Children, err, want)
			}
			n, err := f.Count(ctx, prefix, rev)
			if want := ref.keys(prefix, at); err != nil || n != int64(len(want)) {
				t.Fatalf("count of %q at %d: %d, %v; want %d", prefix, rev, n, err, len(want))
			}
			checkList(t, f, ref, prefix, rev, at)
		}
		for _, key := range ref.keysEverWritten {
			kv, err := f.Get(ctx, key, rev)
			want, ok := ref.get(key, at)
			if ok != (err == nil) || ok && kvString(*kv) != kvString(want) {
				t.Fatalf("get %q at %d: %+v, %v; want %+v (found %v)", key, rev, kv, err, want, ok)
			}
		}
		if rev != 0 {
			checkWatch(t, f, ref, rev)
		}
	}
	for _, key := range ref.keysEverWritten {
		h, err := f.History(ctx, key, HistoryOptions{})
		if want := ref.history(key); err != nil || entriesString(h.Entries) != entriesString(want) {
			t.Fatalf("history of %q: %s, %v; want %s", key, entriesString(h.Entries), err, entriesString(want))
		}
	}
}

// checkList pages the keys below prefix two at a time, with values every
// other page.
func checkList(t *testing.T, f *File, ref reference, prefix string, rev, at int64) {
	var got, want []string
	page := PageToken{Limit: 2}
	for {
		p, err := f.List(testCtx(t), prefix, rev, page)
		if err != nil {
			t.Fatalf("list %q at %d: %v", prefix, rev, err)
		}
		for _, kv := range p.Keys {
			w, _ := ref.get(kv.Key, at)
			if !page.Values {
				w.Value = nil
			}
			got, want = append(got, kvString(kv)), append(want, kvString(w))
		}
		if p.Next == nil {
			break
		}
		page, rev = *p.Next, p.Revision
		page.Values = !page.Values
	}
	if len(got) != len(ref.keys(prefix, at)) || !slices.Equal(got, want) {
		t.Fatalf("list %q at %d: %q, want %q", prefix, rev, got, want)
	}
}

// checkWatch replays every change from rev on and compares it with the
// bucket's entries from rev on, each with the entry of its key before it.
func checkWatch(t *testing.T, f *File, ref reference, rev int64) {
	var want []string
	for i, e := range ref.entries {
		if e.rev.main < rev {
			continue
		}
		ev := Event{Type: Modified, KV: refKV(e)}
		switch {
		case e.rev.tombstone:
			ev.Type, ev.KV = Deleted, KV{Key: ev.KV.Key, ModRevision: e.rev.main}
		case e.kv.CreateRevision == e.rev.main:
			ev.Type = Added
		}
		for _, p := range slices.Backward(ref.entries[:i]) {
			if string(p.kv.Key) == ev.KV.Key {
				if !p.rev.tombstone {
					prev := refKV(p)
					ev.Prev = &prev
				}
				break
			}
		}
		want = append(want, eventString(ev))
	}
	var got []string
	for _, ev := range replayed(t, f, "", rev) {
		got = append(got, eventString(ev))
	}
	if !slices.Equal(got, want) {
		t.Fatalf("watch from %d:\n%s\nwant\n%s", rev, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func kvString(kv KV) string {
	return fmt.Sprintf("%q=%q c%d m%d v%d l%d", kv.Key, kv.Value, kv.CreateRevision, kv.ModRevision, kv.Version, kv.Lease)
}

func eventString(ev Event) string {
	prev := "-"
	if ev.Prev != nil {
		prev = kvString(*ev.Prev)
	}
	return fmt.Sprintf("%s %s after %s", ev.Type, kvString(ev.KV), prev)
}

func entriesString(entries []Entry) string {
	var s []string
	for _, e := range entries {
		s = append(s, fmt.Sprintf("%s deleted=%v", kvString(e.KV), e.Deleted))
	}
	return strings.Join(s, "; ")
}

// TestFileIndexOfManyAndLongKeys holds keys enough to grow the index's hash
// table several times, and keys long enough to fill the arena's chunks and
// to need one of their own, some written twice, some deleted.
func TestFileIndexOfManyAndLongKeys(t *testing.T) {
	var changes []change
	writes := map[string]int{}
	final := map[string]string{}
	do := func(key, value string) {
		changes = append(changes, change{key, value})
		writes[key]++
		if value == "" {
			delete(final, key)
		} else {
			final[key] = value
		}
	}
	for i := range 3000 {
		do(fmt.Sprintf("/registry/configmaps/ns-%d/cm-%d", i%7, i), fmt.Sprint("v", i))
	}
	for i := range 3000 {
		switch key := fmt.Sprintf("/registry/configmaps/ns-%d/cm-%d", i%7, i); {
		case i%3 == 0:
			do(key, fmt.Sprint("w", i))
		case i%5 == 0:
			do(key, "")
		}
	}
	for i, n := range []int{700 << 10, 700 << 10, 700 << 10, arenaChunk + 1} {
		do(fmt.Sprintf("/registry/long/%d/%s", i, strings.Repeat("k", n)), fmt.Sprint("long", i))
	}
	f, err := openFile(dataFile(t, changes), sidecarOptions{minSize: 1 << 62})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if len(f.index.arena.chunks) < 4 {
		t.Errorf("the keys took %d arena chunks: the test no longer fills one", len(f.index.arena.chunks))
	}
	want := sorted(slices.Collect(maps.Keys(final)))
	if got := allKeys(t, f, 0); !slices.Equal(got, want) {
		t.Fatalf("%d keys, want %d", len(got), len(want))
	}
	for key, n := range writes {
		h, err := f.History(testCtx(t), key, HistoryOptions{})
		if err != nil || len(h.Entries) != n {
			t.Fatalf("history of %.40q: %d entries, %v; want %d", key, len(h.Entries), err, n)
		}
		kv, err := f.Get(testCtx(t), key, 0)
		if v, ok := final[key]; ok != (err == nil) || ok && string(kv.Value) != v {
			t.Fatalf("get %.40q: %v; want %q", key, err, v)
		}
	}
}

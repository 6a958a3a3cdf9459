package etcdview

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/embedded/etcdtest"
	"github.com/etcdscope/etcdscope/etcdview/etcdviewtest"
	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// step is one entry of a history as a test states it.
type step struct {
	rev   int64
	value string // "" for a deletion
}

func steps(h History) []step {
	var out []step
	for _, e := range h.Entries {
		if e.Deleted != (e.KV.Value == nil) {
			panic(fmt.Sprintf("entry at %d: deleted %v with value %q", e.KV.ModRevision, e.Deleted, e.KV.Value))
		}
		out = append(out, step{e.KV.ModRevision, string(e.KV.Value)})
	}
	return out
}

// wantHistory is a key's history as a test states it.
type wantHistory struct {
	all       []step // every revision etcd holds, newest first
	current   int    // how many of all are the current incarnation
	compacted int64  // CompactedAt of all
	// currentCompacted is CompactedAt of the current incarnation alone:
	// set only when compaction cut into it.
	currentCompacted int64
	earlier          Earlier // what the current incarnation's history knows of the others
}

// recreate writes versions of key, deletes it, and writes it again with
// versions of its own; it returns the history newest first.
func recreate(t *testing.T, cli *clientv3.Client, key string, incarnations ...[]string) []step {
	var want []step
	for i, values := range incarnations {
		if i > 0 {
			want = append(want, step{del(t, cli, key), ""})
		}
		for _, v := range values {
			want = append(want, step{put(t, cli, key, v), v})
		}
	}
	slices.Reverse(want)
	return want
}

func TestHistory(t *testing.T) {
	eachServer(t, func(t *testing.T, cli *clientv3.Client) {
		src := NewLive(cli, 0)
		// The cases share one etcd, in order: the first runs on a store of
		// a few revisions, the last two compact it.
		tests := []struct {
			name  string
			write func(key string) wantHistory
		}{
			{"a key new to a short store has no earlier incarnation", func(key string) wantHistory {
				for i := range 5 {
					put(t, cli, fmt.Sprintf("%s-other-%d", key, i), "x")
				}
				return wantHistory{all: recreate(t, cli, key, versions("v", 3)), current: 3, earlier: EarlierNone}
			}},
			{"five updates, a delete and a re-creation", func(key string) wantHistory {
				return wantHistory{all: recreate(t, cli, key, versions("v", 6), []string{"again"}), current: 1, earlier: EarlierUnread}
			}},
			{"a deleted key's last incarnation ends in its deletion", func(key string) wantHistory {
				want := recreate(t, cli, key, []string{"a", "b"}, nil)
				put(t, cli, key+"-sibling", "another key's change after the deletion")
				return wantHistory{all: want, current: 3, earlier: EarlierNone}
			}},
			{"100 versions, too many revisions after the first to probe each", func(key string) wantHistory {
				for i := range denseProbes {
					put(t, cli, fmt.Sprintf("%s-other-%d", key, i), "x")
				}
				return wantHistory{all: recreate(t, cli, key, versions("v", 100)), current: 100, earlier: EarlierUnknown}
			}},
			{"versions among other keys' writes, read a window at a time", func(key string) wantHistory {
				var all []step
				for i := range 21 {
					all = append(all, step{put(t, cli, key, fmt.Sprint("v", i)), fmt.Sprint("v", i)})
					for range i % 3 {
						put(t, cli, key+"-other", "x")
					}
				}
				slices.Reverse(all)
				return wantHistory{all: all, current: 21, earlier: EarlierUnknown}
			}},
			{"a key deleted long ago, its end found by bisection", func(key string) wantHistory {
				// The probes back from the head, 1, 2, 4, ... revisions
				// below it, meet the incarnation that lived longest.
				others := func(n int) {
					for i := range n {
						put(t, cli, fmt.Sprintf("%s-other-%d", key, i), "x")
					}
				}
				first := recreate(t, cli, key, []string{"a1"}, []string{"b1"})
				others(denseProbes + 8)
				b2 := put(t, cli, key, "b2")
				deleted := del(t, cli, key)
				others(3 * denseProbes)
				all := append([]step{{deleted, ""}, {b2, "b2"}}, first...)
				return wantHistory{all: all, current: 3, earlier: EarlierUnread}
			}},
			{"a key that never existed", func(key string) wantHistory {
				return wantHistory{earlier: EarlierUnknown}
			}},
			{"deleted and re-created twice", func(key string) wantHistory {
				all := recreate(t, cli, key, []string{"a1", "a2"}, []string{"b1", "b2", "b3"}, []string{"c1", "c2"})
				return wantHistory{all: all, current: 2, earlier: EarlierUnread}
			}},
			{"compaction in the middle of an earlier incarnation", func(key string) wantHistory {
				put(t, cli, key, "a1")
				kept := put(t, cli, key, "a2")
				compact(t, cli, kept)
				all := recreate(t, cli, key, []string{"a3"}, []string{"b1", "b2"})
				all = append(all, step{kept, "a2"})
				return wantHistory{all: all, current: 2, compacted: kept, earlier: EarlierUnread}
			}},
			{"compaction in the middle of the current incarnation", func(key string) wantHistory {
				recreate(t, cli, key, []string{"a1"}, nil)
				put(t, cli, key, "gone")
				kept := put(t, cli, key, "kept")
				after := put(t, cli, key+"-other", "x")
				compact(t, cli, after)
				all := []step{{put(t, cli, key, "new"), "new"}, {kept, "kept"}}
				return wantHistory{all: all, current: 2, compacted: after, currentCompacted: after, earlier: EarlierNone}
			}},
			{"a key deleted after a compaction in its last incarnation", func(key string) wantHistory {
				put(t, cli, key, "a1")
				kept := put(t, cli, key, "a2")
				compact(t, cli, kept)
				all := []step{{del(t, cli, key), ""}, {kept, "a2"}}
				return wantHistory{all: all, current: 2, compacted: kept, currentCompacted: kept, earlier: EarlierNone}
			}},
		}
		for i, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				key := fmt.Sprintf("/registry/history/%d", i)
				want := tc.write(key)
				checkCurrentIncarnation(t, src, key, want)
				checkAllIncarnations(t, src, key, want)
			})
		}
	})
}

func checkCurrentIncarnation(t *testing.T, src *Live, key string, want wantHistory) {
	t.Helper()
	h, err := src.History(testCtx(t), key, HistoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := steps(h); !slices.Equal(got, want.all[:want.current]) {
		t.Errorf("current incarnation %v, want %v", got, want.all[:want.current])
	}
	if h.CompactedAt != want.currentCompacted || h.Earlier != want.earlier {
		t.Errorf("current incarnation compacted at %d, earlier %s; want %d, %s", h.CompactedAt, h.Earlier, want.currentCompacted, want.earlier)
	}
	if h.Earlier == EarlierUnread {
		if kv, err := src.Get(testCtx(t), key, h.EarlierSeenAt); err != nil || (want.current > 0 && kv.CreateRevision == h.Entries[len(h.Entries)-1].KV.CreateRevision) {
			t.Errorf("an earlier incarnation was seen at %d, where etcd has %+v, %v", h.EarlierSeenAt, kv, err)
		}
	}
}

func checkAllIncarnations(t *testing.T, src *Live, key string, want wantHistory) {
	t.Helper()
	var progress []ReplayProgress
	h, err := src.History(testCtx(t), key, HistoryOptions{AllIncarnations: true, Progress: func(p ReplayProgress) { progress = append(progress, p) }})
	if err != nil {
		t.Fatal(err)
	}
	if got := steps(h); !slices.Equal(got, want.all) {
		t.Errorf("all incarnations %v, want %v", got, want.all)
	}
	if h.CompactedAt != want.compacted || h.Earlier != EarlierRead {
		t.Errorf("all incarnations compacted at %d, earlier %s; want %d, %s", h.CompactedAt, h.Earlier, want.compacted, EarlierRead)
	}
	if want.compacted != 0 && h.Truncated() != fmt.Sprintf("history before revision %d was compacted", want.compacted) {
		t.Errorf("truncation note %q", h.Truncated())
	}
	if len(progress) == 0 || progress[0].Head != h.Revision || progress[0].Reached != progress[0].From-1 {
		t.Errorf("the replay reported %+v, want a start at its first revision up to %d", progress, h.Revision)
	}
}

// TestTheRevisionBeforeACreationHoldsNoEarlierIncarnation checks the fact
// History's probing starts from: a range at the revision before a
// re-creation finds the key absent, since the deletion came at or before
// it; the incarnation before is found earlier.
func TestTheRevisionBeforeACreationHoldsNoEarlierIncarnation(t *testing.T) {
	eachServer(t, func(t *testing.T, cli *clientv3.Client) {
		src := NewLive(cli, 0)
		key := "/registry/history/recreated"
		last := put(t, cli, key, "a")
		put(t, cli, key+"-other", "x")
		deleted := del(t, cli, key)
		put(t, cli, key+"-other", "y")
		created := put(t, cli, key, "b")
		for rev, want := range map[int64]string{created - 1: "", deleted: "", deleted - 1: "a", last: "a"} {
			kv, err := src.Get(testCtx(t), key, rev)
			switch {
			case want == "" && !errors.Is(err, ErrNotFound):
				t.Errorf("at %d: %+v, %v; want not found", rev, kv, err)
			case want != "" && (err != nil || string(kv.Value) != want || kv.ModRevision != last):
				t.Errorf("at %d: %+v, %v; want %q written at %d", rev, kv, err, want, last)
			}
		}
	})
}

// watchCounter counts the ranges and watches the live Source makes.
type watchCounter struct {
	Client
	gets, watches atomic.Int64
}

func (c *watchCounter) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	c.gets.Add(1)
	return c.Client.Get(ctx, key, opts...)
}

func (c *watchCounter) Watch(ctx context.Context, key string, opts ...clientv3.OpOption) clientv3.WatchChan {
	c.watches.Add(1)
	return c.Client.Watch(ctx, key, opts...)
}

// TestCurrentIncarnationReadsNoHistory: the current incarnation costs a
// range per version and a few probes, and no watch, whose replay would
// make etcd read every revision since the first.
func TestCurrentIncarnationReadsNoHistory(t *testing.T) {
	_, cli := etcdtest.StartBundled(t, 1)
	for i := range 200 {
		put(t, cli, fmt.Sprintf("/registry/other/%d", i), "x")
	}
	key := "/registry/history/busy"
	recreate(t, cli, key, []string{"old"}, versions("v", 100))
	c := &watchCounter{Client: cli}
	h, err := NewLive(c, 0).History(testCtx(t), key, HistoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Entries) != 100 || h.Earlier != EarlierUnread {
		t.Fatalf("%d entries, earlier %s; want 100, %s", len(h.Entries), h.Earlier, EarlierUnread)
	}
	// 1 read of the head, 99 of the versions before, probes of the
	// revisions before it: absent-1, -2, -4, ... and the oldest.
	probes := int64(math.Log2(float64(h.Revision))) + 2
	if gets, watches := c.gets.Load(), c.watches.Load(); gets > 100+probes || watches != 0 {
		t.Errorf("%d ranges and %d watches; want at most %d ranges and no watch", gets, watches, 100+probes)
	}
}

// versions are n values: prefix0, prefix1, ...
func versions(prefix string, n int) []string {
	var vs []string
	for i := range n {
		vs = append(vs, fmt.Sprint(prefix, i))
	}
	return vs
}

func TestCancelledReplayEnds(t *testing.T) {
	eachServer(t, func(t *testing.T, cli *clientv3.Client) {
		key := "/registry/history/cancelled"
		recreate(t, cli, key, []string{"a"}, []string{"b"})
		ctx, cancel := context.WithCancel(testCtx(t))
		defer cancel()
		calls := 0
		_, err := NewLive(cli, 0).History(ctx, key, HistoryOptions{AllIncarnations: true, Progress: func(ReplayProgress) {
			calls++
			cancel() // the watch is open: the replay has begun
		}})
		if !errors.Is(err, context.Canceled) || calls != 1 {
			t.Errorf("a replay cancelled at its start: %v after %d progress reports; want context.Canceled after 1", err, calls)
		}
	})
}

func TestProbeRevisions(t *testing.T) {
	tests := []struct {
		oldest, absent int64
		dense          bool
		want           []int64
	}{
		{1, 1, true, nil},
		{1, 4, true, []int64{3, 2, 1}},
		{10, 10 + denseProbes, true, nil},
		{1, 1000, false, []int64{999, 998, 996, 992, 984, 968, 936, 872, 744, 488, 1}},
	}
	for _, tc := range tests {
		revs, dense := probeRevisions(tc.oldest, tc.absent)
		if tc.want == nil && tc.dense && len(revs) == int(tc.absent-tc.oldest) {
			continue // every revision of the span, checked below
		}
		if dense != tc.dense || !slices.Equal(revs, tc.want) {
			t.Errorf("probes between %d and %d: %v (dense %v), want %v (dense %v)", tc.oldest, tc.absent, revs, dense, tc.want, tc.dense)
		}
	}
	revs, dense := probeRevisions(10, 10+denseProbes)
	if !dense || len(revs) != denseProbes || revs[0] != 9+denseProbes || revs[len(revs)-1] != 10 {
		t.Errorf("a span of %d revisions is probed at %v (dense %v), want each one", denseProbes, revs, dense)
	}
}

func TestHistoryDecodesEachRevision(t *testing.T) {
	_, cli := etcdtest.StartBundled(t, 1)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "default", Labels: map[string]string{"v": "1"}}}
	etcdviewtest.Put(t, cli, pod)
	pod.Labels["v"] = "2"
	rev := etcdviewtest.Put(t, cli, pod)
	h, err := NewLive(cli, 0).History(testCtx(t), "/registry/pods/default/web-0", HistoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Entries) != 2 {
		t.Fatalf("%d entries, want 2", len(h.Entries))
	}
	if typ := h.Entries[0].Type(); typ != Modified {
		t.Errorf("newest entry is %s, want %s", typ, Modified)
	}
	if typ := h.Entries[1].Type(); typ != Added {
		t.Errorf("oldest entry is %s, want %s", typ, Added)
	}
	o := h.Entries[0].Object(decode.Decoder{})
	if o.GVK.Kind != "Pod" || o.Problem != "" {
		t.Fatalf("newest entry decoded as %s", o.Label())
	}
	if got := o.Object.(*corev1.Pod); got.Labels["v"] != "2" || got.ResourceVersion != fmt.Sprint(rev) {
		t.Errorf("newest entry has labels %v, resourceVersion %s; want v=2 at %d", got.Labels, got.ResourceVersion, rev)
	}
}

func TestGet(t *testing.T) {
	eachServer(t, func(t *testing.T, cli *clientv3.Client) {
		src := NewLive(cli, 0)
		first := put(t, cli, "/registry/get/a", "1")
		second := put(t, cli, "/registry/get/a", "2")
		put(t, cli, "/registry/get/b", "1")
		tests := []struct {
			name      string
			key       string
			rev       int64
			want      *KV
			wantErr   error
			compacted bool
		}{
			{"newest", "/registry/get/a", 0, &KV{Key: "/registry/get/a", Value: []byte("2"), CreateRevision: first, ModRevision: second, Version: 2}, nil, false},
			{"as of an earlier revision", "/registry/get/a", first, &KV{Key: "/registry/get/a", Value: []byte("1"), CreateRevision: first, ModRevision: first, Version: 1}, nil, false},
			{"absent then", "/registry/get/b", second, nil, ErrNotFound, false},
			{"never written", "/registry/get/c", 0, nil, ErrNotFound, false},
		}
		kine := onKine(t, cli)
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				if kine && tc.want != nil {
					tc.want.Version = 0 // kine counts no versions
				}
				kv, err := src.Get(testCtx(t), tc.key, tc.rev)
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("error %v, want %v", err, tc.wantErr)
				}
				if tc.want != nil && (kv.Key != tc.want.Key || string(kv.Value) != string(tc.want.Value) ||
					kv.CreateRevision != tc.want.CreateRevision || kv.ModRevision != tc.want.ModRevision || kv.Version != tc.want.Version) {
					t.Errorf("got %+v, want %+v", kv, tc.want)
				}
			})
		}
		t.Run("compacted revision names the compaction", func(t *testing.T) {
			compact(t, cli, second)
			_, err := src.Get(testCtx(t), "/registry/get/a", first)
			var ce *CompactedError
			if !errors.As(err, &ce) || ce.Compacted != second || ce.Rev != first {
				t.Fatalf("error %v, want a CompactedError for %d naming compaction at %d", err, first, second)
			}
		})
	})
}

// TestFileHistoryHoldsEveryIncarnation reads a stopped member's file: its
// history of a key deleted and re-created, compacted in an earlier
// incarnation, is what the live replay of every incarnation gave.
func TestFileHistoryHoldsEveryIncarnation(t *testing.T) {
	c, cli := etcdtest.StartBundled(t, 1)
	key := "/registry/history/file"
	put(t, cli, key, "a1")
	kept := put(t, cli, key, "a2")
	compact(t, cli, kept)
	recreate(t, cli, key, []string{"a3"}, []string{"b1", "b2"}, []string{"c1"})
	live, err := NewLive(cli, 0).History(testCtx(t), key, HistoryOptions{AllIncarnations: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.StopMember(0); err != nil {
		t.Fatal(err)
	}
	f, err := OpenFile(filepath.Join(c.DataDir(), c.Members()[0].Name, "member", "snap", "db"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, err := f.History(testCtx(t), key, HistoryOptions{})
	if err != nil || !slices.Equal(steps(h), steps(live)) || h.CompactedAt != kept || h.Earlier != EarlierRead {
		t.Errorf("file: %v compacted at %d, earlier %s, %v; live replay: %v compacted at %d", steps(h), h.CompactedAt, h.Earlier, err, steps(live), live.CompactedAt)
	}
	if len(h.Entries) != 7 {
		t.Errorf("file: %d revisions, want 7 (c1, a deletion, b2, b1, a deletion, a3, a2)", len(h.Entries))
	}
}

package etcdview

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/embedded"
	"github.com/etcdscope/etcdscope/embedded/etcdtest"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// next receives the next batch, failing the test after a deadline.
func next(t *testing.T, wc <-chan Batch) (Batch, bool) {
	t.Helper()
	select {
	case b, ok := <-wc:
		return b, ok
	case <-time.After(30 * time.Second):
		t.Fatal("no batch within 30s")
		return Batch{}, false
	}
}

// TestWatchReportsEachChangeWithItsPreviousValue, unless the watcher
// asked for none (WithoutPrevious, the recorder's watch) of an etcd: kine
// sends them all the same.
func TestWatchReportsEachChangeWithItsPreviousValue(t *testing.T) {
	eachServer(t, func(t *testing.T, cli *clientv3.Client) {
		for _, without := range []bool{false, true} {
			ctx := testCtx(t)
			prefix := fmt.Sprintf("/registry/w-%t/", without)
			// The watch starts from a revision of its own: one "from now"
			// starts when etcd creates it, which may come after the first
			// write below.
			start := put(t, cli, "/registry/before", "not watched")
			wc := NewLive(cli, 0).Watch(ctx, prefix, WatchOptions{Rev: start + 1, WithoutPrevious: without})
			first := put(t, cli, prefix+"a", "1")
			put(t, cli, prefix+"a", "2")
			put(t, cli, "/registry/other", "outside")
			del(t, cli, prefix+"a")
			type seen struct {
				typ       EventType
				value     string
				prevValue string
			}
			want := []seen{{Added, "1", ""}, {Modified, "2", "1"}, {Deleted, "", "2"}}
			if without && !onKine(t, cli) {
				want = []seen{{Added, "1", ""}, {Modified, "2", ""}, {Deleted, "", ""}}
			}
			var got []seen
			for len(got) < len(want) {
				b, ok := next(t, wc)
				if !ok || b.Err != nil {
					t.Fatalf("stream ended: %v", b.Err)
				}
				for _, ev := range b.Events {
					s := seen{typ: ev.Type, value: string(ev.KV.Value)}
					if ev.Prev != nil {
						s.prevValue = string(ev.Prev.Value)
					}
					if ev.KV.ModRevision < first {
						t.Errorf("event at %d, before the first write at %d", ev.KV.ModRevision, first)
					}
					got = append(got, s)
				}
			}
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("WithoutPrevious %t: event %d = %+v, want %+v", without, i, got[i], want[i])
				}
			}
		}
	})
}

func TestWatchProgressKeepsHeadCurrent(t *testing.T) {
	eachServer(t, func(t *testing.T, cli *clientv3.Client) {
		ctx := testCtx(t)
		if st, err := cli.Status(ctx, cli.Endpoints()[0]); err != nil || !progressOrdered(st.Version) {
			t.Skipf("etcd %s may answer a progress request ahead of pending events (etcd-io/etcd#15220): the watch does not ask (%v)", st.Version, err)
		}
		start := put(t, cli, "/registry/quiet/x", "1")
		wc := NewLive(cli, 0).Watch(ctx, "/registry/quiet/", WatchOptions{Rev: start + 1, ProgressInterval: 100 * time.Millisecond})
		head := put(t, cli, "/registry/busy/y", "a change outside the watched prefix")
		for {
			b, ok := next(t, wc)
			if !ok || b.Err != nil || len(b.Events) > 0 {
				t.Fatalf("got %+v, want only progress", b)
			}
			if b.Progress && b.Revision >= head {
				return
			}
		}
	})
}

func TestWatchFromCompactedRevision(t *testing.T) {
	eachServer(t, func(t *testing.T, cli *clientv3.Client) {
		old := put(t, cli, "/registry/c/a", "1")
		compacted := put(t, cli, "/registry/c/a", "2")
		compact(t, cli, compacted)
		after := put(t, cli, "/registry/c/a", "3")
		for _, cont := range []bool{false, true} {
			t.Run(fmt.Sprintf("continue=%v", cont), func(t *testing.T) {
				wc := NewLive(cli, 0).Watch(testCtx(t), "/registry/c/", WatchOptions{Rev: old, ContinueAfterCompaction: cont})
				b, _ := next(t, wc)
				var ce *CompactedError
				if !errors.As(b.Err, &ce) || ce.Compacted != compacted || ce.Rev != old {
					t.Fatalf("first batch %+v, want a CompactedError naming revision %d", b, compacted)
				}
				if !strings.Contains(b.Err.Error(), fmt.Sprint(compacted)) {
					t.Errorf("error %q does not name the compaction revision", b.Err)
				}
				b, ok := next(t, wc)
				if !cont {
					if ok {
						t.Fatalf("stream went on after compaction with %+v", b)
					}
					return
				}
				for ok && len(b.Events) == 0 {
					b, ok = next(t, wc)
				}
				if !ok || b.Events[0].KV.ModRevision != compacted {
					t.Fatalf("after the error got %+v, want events from revision %d", b, compacted)
				}
				for ok && b.Events[len(b.Events)-1].KV.ModRevision < after {
					b, ok = next(t, wc)
				}
			})
		}
	})
}

func TestProgressIsAskedOnlyOfEtcdThatOrdersIt(t *testing.T) {
	for version, want := range map[string]bool{
		"3.4.23": false, "3.4.30": false, "3.4.31": true,
		"3.5.12": false, "3.5.13": true, "3.5.35": true,
		"3.6.0": true, "3.6.16": true, "3.7.3": true, "4.0.0": true,
		"3.3.27": false, "": false, "not a version": false,
	} {
		if got := progressOrdered(version); got != want {
			t.Errorf("progressOrdered(%q) = %v, want %v", version, got, want)
		}
	}
}

// writes is how many writes the fault tests make while faults happen.
const writes = 2000

func TestWatchDeliversEveryRevisionOnceAcrossFaults(t *testing.T) {
	tests := []struct {
		name string
		// faults says what to do to the cluster after how many writes: the
		// writer waits for each step, then writes on while a member is
		// down.
		faults func(ctx context.Context, c *embedded.Cluster) map[int]func() error
		note   string // a note the watch must have shown
	}{
		{"leader killed", func(ctx context.Context, c *embedded.Cluster) map[int]func() error {
			leader := -1
			return map[int]func() error{
				writes / 4: func() error {
					for i, m := range c.Members() {
						if m.Leader {
							leader = i
						}
					}
					return c.StopMember(leader)
				},
				writes / 2: func() error { return c.RestartMember(ctx, leader) },
			}
		}, "leader changed"},
		{"every member restarted in turn", func(ctx context.Context, c *embedded.Cluster) map[int]func() error {
			steps := map[int]func() error{}
			for i := range c.Members() {
				at := (2*i + 1) * writes / 7
				steps[at] = func() error { return c.StopMember(i) }
				steps[at+writes/7] = func() error { return c.RestartMember(ctx, i) }
			}
			return steps
		}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, writer := etcdtest.StartBundled(t, 3)
			watcher := client(t, c)
			ctx, cancel := context.WithTimeout(testCtx(t), 120*time.Second)
			defer cancel()
			start := put(t, writer, "/registry/faults/start", "")
			wc := NewLive(watcher, 0).Watch(ctx, "/registry/faults/", WatchOptions{Rev: start + 1})

			type result struct {
				last int64
				err  error
			}
			written := make(chan result, 1)
			go func() {
				last, err := writeWithFaults(ctx, writer, writes, tc.faults(ctx, c))
				written <- result{last, err}
			}()

			var (
				final, prev int64 = 0, start
				notes       []string
				events      int
			)
			for final == 0 || prev < final {
				select {
				case b, ok := <-wc:
					if !ok {
						t.Fatalf("stream ended at revision %d", prev)
					}
					if b.Err != nil {
						t.Fatalf("stream error at revision %d: %v", prev, b.Err)
					}
					if b.Note != "" {
						notes = append(notes, b.Note)
					}
					for _, ev := range b.Events {
						if ev.KV.ModRevision != prev+1 {
							t.Fatalf("revision %d after %d: want every revision once, in order", ev.KV.ModRevision, prev)
						}
						prev = ev.KV.ModRevision
						events++
					}
				case r := <-written:
					if r.err != nil {
						t.Fatal(r.err)
					}
					final = r.last
				case <-ctx.Done():
					t.Fatalf("at revision %d of %d when time ran out", prev, final)
				}
			}
			t.Logf("%d events, revisions %d..%d; notes: %q", events, start+1, final, notes)
			if tc.note != "" && !strings.Contains(strings.Join(notes, "\n"), tc.note) {
				t.Errorf("no note saying %q among %q", tc.note, notes)
			}
		})
	}
}

// writeWithFaults makes n writes, and after write i runs faults[i]. It
// retries each write that fails while the cluster has no leader (a retried
// write that had in fact been applied only adds a revision), and returns
// the revision of the last write.
func writeWithFaults(ctx context.Context, cli *clientv3.Client, n int, faults map[int]func() error) (int64, error) {
	var last int64
	for i := 1; i <= n; i++ {
		for {
			wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			resp, err := cli.Put(wctx, fmt.Sprintf("/registry/faults/k%04d", i), fmt.Sprint(i))
			cancel()
			if err == nil {
				last = resp.Header.Revision
				break
			}
			if ctx.Err() != nil {
				return last, fmt.Errorf("write %d: %w", i, err)
			}
		}
		if fault, ok := faults[i]; ok {
			if err := fault(); err != nil {
				return last, fmt.Errorf("after write %d: %w", i, err)
			}
		}
	}
	return last, nil
}

// breakingClient cuts every watch stream after a few responses, as a
// broken connection does, so that Watch has to resume it itself.
type breakingClient struct {
	Client
	after int
}

func (c breakingClient) Watch(ctx context.Context, key string, opts ...clientv3.OpOption) clientv3.WatchChan {
	ctx, cancel := context.WithCancel(ctx)
	in := c.Client.Watch(ctx, key, opts...)
	out := make(chan clientv3.WatchResponse)
	go func() {
		defer close(out)
		defer cancel()
		for i := 0; i < c.after; i++ {
			resp, ok := <-in
			if !ok {
				return
			}
			select {
			case out <- resp:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}

func TestWatchResumesABrokenStreamAfterTheLastRevision(t *testing.T) {
	_, cli := etcdtest.StartBundled(t, 1)
	start := put(t, cli, "/registry/broken/start", "")
	wc := NewLive(breakingClient{Client: cli, after: 20}, 0).Watch(testCtx(t), "/registry/broken/", WatchOptions{Rev: start + 1})
	// Each write waits for its event, so every response carries one and the
	// client breaks the stream every 20 of them, however loaded the machine.
	prev, resumes := start, 0
	for i := range 200 {
		rev := put(t, cli, fmt.Sprintf("/registry/broken/k%03d", i), "v")
		for prev < rev {
			b, ok := next(t, wc)
			if !ok || b.Err != nil {
				t.Fatalf("stream ended at %d: %v", prev, b.Err)
			}
			if strings.Contains(b.Note, "resumed at revision") {
				resumes++
			}
			for _, ev := range b.Events {
				if ev.KV.ModRevision != prev+1 {
					t.Fatalf("revision %d after %d: want every revision once, in order", ev.KV.ModRevision, prev)
				}
				prev = ev.KV.ModRevision
			}
		}
	}
	if resumes == 0 {
		t.Error("the stream was never resumed: the test did not break it")
	}
}

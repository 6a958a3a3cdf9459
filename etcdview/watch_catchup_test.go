package etcdview

import (
	"context"
	"fmt"
	"sync"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// TestACatchingUpWatchDeliversTheBacklogAsOneWatchDoes: a backlog of
// several windows, with puts, deletions, txns of two keys in one revision,
// a stretch of writes outside the prefix longer than a window, and writes
// outside it after the prefix's last one (windows with no sign that they
// are whole), read by a watch that catches up through windows, gives the
// events one watch gives, in the same order, each once.
func TestACatchingUpWatchDeliversTheBacklogAsOneWatchDoes(t *testing.T) {
	eachServer(t, func(t *testing.T, cli *clientv3.Client) {
		if onKine(t, cli) {
			t.Skip("kine reads a backlog in its own way: a watch on kine does not catch up through windows")
		}
		ctx := testCtx(t)
		const prefix = "/registry/leases/backlog/"
		start := put(t, cli, "/registry/before", "x") + 1
		many := func(n int, key func(i int) string) {
			var wg sync.WaitGroup
			for w := range 8 {
				wg.Go(func() {
					for i := w; i < n; i += 8 {
						if _, err := cli.Put(ctx, key(i), fmt.Sprint(i)); err != nil {
							t.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
		}
		inPrefix := func(i int) string { return fmt.Sprintf("%snode-%d", prefix, i%300) }
		many(2500, inPrefix)
		for i := range 5 {
			if _, err := cli.Txn(ctx).Then(clientv3.OpPut(prefix+"txn-a", fmt.Sprint(i)), clientv3.OpPut(prefix+"txn-b", fmt.Sprint(i))).Commit(); err != nil {
				t.Fatal(err)
			}
			del(t, cli, inPrefix(i))
		}
		many(1500, func(i int) string { return fmt.Sprintf("/registry/leases/other/%d", i%50) })
		many(2500, inPrefix)
		last := del(t, cli, inPrefix(7))
		many(2500, func(i int) string { return fmt.Sprintf("/registry/leases/other/%d", i%50) })

		one := readBacklog(t, ctx, NewLive(cli, 0), prefix, WatchOptions{Rev: start, WithoutPrevious: true}, last)
		live := NewLive(cli, 0)
		windows := readBacklog(t, ctx, live, prefix, WatchOptions{Rev: start, WithoutPrevious: true, CatchUp: true}, last)
		if len(one) != 2500+10+5+2500+1 {
			t.Fatalf("one watch gave %d events, want %d", len(one), 2500+10+5+2500+1)
		}
		if len(windows) != len(one) {
			t.Fatalf("the catching-up watch gave %d events, one watch %d", len(windows), len(one))
		}
		for i := range one {
			if windows[i] != one[i] {
				t.Fatalf("event %d: catching up %+v, one watch %+v", i, windows[i], one[i])
			}
		}
		if live.windowsRead.Load() == 0 {
			t.Error("no window was read: the watch caught up as one watch")
		}
	})
}

// seenEvent is what a test compares of an event.
type seenEvent struct {
	typ      EventType
	key, val string
	rev      int64
}

// readBacklog watches prefix with opts until it delivered the event of
// revision last, and returns the events.
func readBacklog(t *testing.T, ctx context.Context, l *Live, prefix string, opts WatchOptions, last int64) []seenEvent {
	t.Helper()
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wc := l.Watch(wctx, prefix, opts)
	var seen []seenEvent
	for len(seen) == 0 || seen[len(seen)-1].rev < last {
		b, ok := next(t, wc)
		if !ok || b.Err != nil {
			t.Fatalf("the watch ended: %v", b.Err)
		}
		for _, ev := range b.Events {
			seen = append(seen, seenEvent{ev.Type, ev.KV.Key, string(ev.KV.Value), ev.KV.ModRevision})
		}
	}
	return seen
}

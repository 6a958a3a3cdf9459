package etcdview

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/embedded/etcdtest"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// gatedClient lets a test cut every watch stream and hold the watch off
// etcd until it lets it through again, and tells when a count-only range
// has been answered.
type gatedClient struct {
	Client
	mu      sync.Mutex
	open    chan struct{} // closed while watches may reach etcd
	cutc    chan struct{} // closed to end the streams forwarded so far
	counted chan struct{} // closed once a count-only range answered
	once    sync.Once
}

func newGatedClient(c Client) *gatedClient {
	g := &gatedClient{Client: c, open: make(chan struct{}), cutc: make(chan struct{}), counted: make(chan struct{})}
	close(g.open)
	return g
}

func (g *gatedClient) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	resp, err := g.Client.Get(ctx, key, opts...)
	if err == nil && clientv3.OpGet(key, opts...).IsCountOnly() {
		g.once.Do(func() { close(g.counted) })
	}
	return resp, err
}

func (g *gatedClient) Watch(ctx context.Context, key string, opts ...clientv3.OpOption) clientv3.WatchChan {
	g.mu.Lock()
	open, cut := g.open, g.cutc
	g.mu.Unlock()
	out := make(chan clientv3.WatchResponse)
	go func() {
		defer close(out)
		select {
		case <-open:
		case <-ctx.Done():
			return
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		in := g.Client.Watch(ctx, key, opts...)
		for {
			select {
			case resp, ok := <-in:
				if !ok {
					return
				}
				select {
				case out <- resp:
				case <-cut:
					return
				}
			case <-cut:
				return
			}
		}
	}()
	return out
}

// cut ends the streams and holds new ones until release.
func (g *gatedClient) cut() {
	g.mu.Lock()
	defer g.mu.Unlock()
	close(g.cutc)
	g.cutc, g.open = make(chan struct{}), make(chan struct{})
}

func (g *gatedClient) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	close(g.open)
}

// tailed is what a test has received from a watch.
type tailed struct {
	t      *testing.T
	wc     <-chan Batch
	events []Event
	gaps   []Gap
	notes  []string
}

// until receives batches until done says so, failing the test when the
// stream ends, errs, repeats or reorders a revision, or after 30s.
func (r *tailed) until(done func(b Batch) bool) {
	r.t.Helper()
	for {
		b, ok := next(r.t, r.wc)
		if !ok || b.Err != nil {
			r.t.Fatalf("the watch ended: %v", b.Err)
		}
		if b.Note != "" {
			r.notes = append(r.notes, b.Note)
		}
		if b.Gap != nil {
			r.gaps = append(r.gaps, *b.Gap)
		}
		for _, ev := range b.Events {
			if n := len(r.events); n > 0 && ev.KV.ModRevision <= r.events[n-1].KV.ModRevision {
				r.t.Fatalf("event at revision %d after one at %d", ev.KV.ModRevision, r.events[n-1].KV.ModRevision)
			}
			r.events = append(r.events, ev)
		}
		if done(b) {
			return
		}
	}
}

// untilEventAt receives until the event of revision rev.
func (r *tailed) untilEventAt(rev int64) {
	r.t.Helper()
	r.until(func(Batch) bool { return len(r.events) > 0 && r.events[len(r.events)-1].KV.ModRevision >= rev })
}

func (r *tailed) since(i int) []string {
	var out []string
	for _, ev := range r.events[i:] {
		out = append(out, fmt.Sprintf("%s %s=%s", ev.Type, strings.TrimPrefix(ev.KV.Key, "/registry/quiet/"), ev.KV.Value))
	}
	return out
}

func TestWatchOnAQuietPrefixGoesOnAfterCompactionAndARestart(t *testing.T) {
	etcdtest.EachServer(t, func(t *testing.T, e etcdtest.Etcd) {
		ctx := testCtx(t)
		st, err := e.Client.Status(ctx, e.Client.Endpoints()[0])
		if err != nil {
			t.Fatal(err)
		}
		ordered := progressOrdered(st.Version)
		start := put(t, e.Client, "/registry/quiet/a", "1") + 1
		gc := newGatedClient(e.Client)
		r := &tailed{t: t, wc: NewLive(gc, 0).Watch(ctx, "/registry/quiet/", WatchOptions{Rev: start, ProgressInterval: 50 * time.Millisecond})}
		// An event tells that the stream runs; the prefix is quiet after it.
		r.untilEventAt(put(t, e.Client, "/registry/quiet/b", "1"))
		var head int64
		for i := range 100 {
			head = put(t, e.Client, fmt.Sprintf("/registry/busy/k%03d", i), "a write outside the prefix")
		}
		waitClosed(t, gc.counted, "the watch's key count")
		if ordered {
			r.until(func(b Batch) bool { return b.Delivered >= head })
		}
		compact(t, e.Client, head)
		if err := e.Restart(); err != nil {
			t.Fatal(err)
		}
		after := put(t, e.Client, "/registry/quiet/c", "1")
		r.untilEventAt(after)
		if got := r.since(1); len(got) != 1 || got[0] != "ADDED c=1" {
			t.Errorf("after the restart the watch delivered %q, want the one write below the prefix", got)
		}
		if len(r.gaps) > 0 {
			t.Errorf("gaps %+v marked, but no change below the prefix was lost", r.gaps)
		}
		// Where progress notifications cannot move the resume point, the
		// watch resumes from before the compaction and re-reads instead.
		reread := strings.Contains(strings.Join(r.notes, "\n"), "no key below /registry/quiet/* changed in them")
		if reread == ordered {
			t.Errorf("etcd %s, progress ordered %v: notes %q", st.Version, ordered, r.notes)
		}
	})
}

func TestWatchMarksTheChangesCompactionTookWhileItWasCutOff(t *testing.T) {
	etcdtest.EachServer(t, func(t *testing.T, e etcdtest.Etcd) {
		ctx := testCtx(t)
		var start int64
		for _, k := range []string{"a", "b", "gone"} {
			start = put(t, e.Client, "/registry/quiet/"+k, "1") + 1
		}
		gc := newGatedClient(e.Client)
		r := &tailed{t: t, wc: NewLive(gc, 0).Watch(ctx, "/registry/quiet/", WatchOptions{Rev: start, ProgressInterval: 50 * time.Millisecond})}
		r.untilEventAt(put(t, e.Client, "/registry/quiet/a", "2"))
		waitClosed(t, gc.counted, "the watch's key count")

		gc.cut()
		from := put(t, e.Client, "/registry/quiet/a", "3")
		put(t, e.Client, "/registry/busy/x", "outside")
		put(t, e.Client, "/registry/quiet/new", "1")
		put(t, e.Client, "/registry/quiet/a", "4")
		del(t, e.Client, "/registry/quiet/gone")
		to := put(t, e.Client, "/registry/busy/y", "outside")
		compact(t, e.Client, to)
		gc.release()

		seen := len(r.events)
		after := put(t, e.Client, "/registry/quiet/b", "2")
		r.untilEventAt(after)
		want := []string{"ADDED new=1", "MODIFIED a=4", "MODIFIED b=2"}
		if got := r.since(seen); strings.Join(got, ", ") != strings.Join(want, ", ") {
			t.Errorf("after the gap the watch delivered %q, want %q", got, want)
		}
		wantGap := Gap{From: from, To: to, Written: 2, Deleted: 1}
		if len(r.gaps) != 1 || r.gaps[0] != wantGap {
			t.Errorf("gaps %+v, want %+v", r.gaps, wantGap)
		}
		note := strings.Join(r.notes, "\n")
		for _, want := range []string{fmt.Sprintf("revisions %d to %d were compacted", from, to), "2 keys written", "1 keys deleted"} {
			if !strings.Contains(note, want) {
				t.Errorf("notes %q do not say %q", r.notes, want)
			}
		}
	})
}

func waitClosed(t *testing.T, c <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(30 * time.Second):
		t.Fatalf("no %s within 30s", what)
	}
}

func TestWatchFromTheCompactionRevisionDeliversItsWrite(t *testing.T) {
	eachServer(t, func(t *testing.T, cli *clientv3.Client) {
		put(t, cli, "/registry/w/a", "1")
		at := put(t, cli, "/registry/w/b", "1")
		compact(t, cli, at)
		r := &tailed{t: t, wc: NewLive(cli, 0).Watch(testCtx(t), "/registry/w/", WatchOptions{Rev: at})}
		after := put(t, cli, "/registry/w/c", "1")
		r.untilEventAt(after)
		var got []string
		for _, ev := range r.events {
			got = append(got, fmt.Sprintf("%s %s@%d", ev.Type, ev.KV.Key, ev.KV.ModRevision))
		}
		want := []string{fmt.Sprintf("ADDED /registry/w/b@%d", at), fmt.Sprintf("ADDED /registry/w/c@%d", after)}
		if strings.Join(got, ", ") != strings.Join(want, ", ") || len(r.gaps) > 0 || len(r.notes) > 0 {
			t.Errorf("a watch from the compaction revision %d delivered %q, gaps %v, notes %q; want %q and no gap", at, got, r.gaps, r.notes, want)
		}
	})
}

// TestWatchMarksAGapWhoseDeletionsItCouldNotCheck: a gap in which nothing
// below the prefix was written, cut before the watch had counted its keys,
// may have lost deletions: it reaches consumers as a Gap whose Deleted is
// unknown, before the events after it, and not as a note alone.
func TestWatchMarksAGapWhoseDeletionsItCouldNotCheck(t *testing.T) {
	etcdtest.EachServer(t, func(t *testing.T, e etcdtest.Etcd) {
		ctx := testCtx(t)
		var start int64
		for _, k := range []string{"a", "gone"} {
			start = put(t, e.Client, "/registry/quiet/"+k, "1") + 1
		}
		gc := newGatedClient(e.Client)
		// No progress tick within the test: the keys are never counted.
		r := &tailed{t: t, wc: NewLive(gc, 0).Watch(ctx, "/registry/quiet/", WatchOptions{Rev: start, ProgressInterval: time.Hour})}
		r.untilEventAt(put(t, e.Client, "/registry/quiet/a", "2"))

		gc.cut()
		from := del(t, e.Client, "/registry/quiet/gone")
		to := put(t, e.Client, "/registry/busy/x", "outside")
		compact(t, e.Client, to)
		gc.release()

		seen := len(r.events)
		after := put(t, e.Client, "/registry/quiet/b", "1")
		r.untilEventAt(after)
		if got := r.since(seen); len(got) != 1 || got[0] != "ADDED b=1" {
			t.Errorf("after the gap the watch delivered %q, want the one write after it", got)
		}
		wantGap := Gap{From: from, To: to, Written: 0, Deleted: -1}
		if len(r.gaps) != 1 || r.gaps[0] != wantGap {
			t.Errorf("gaps %+v, want %+v", r.gaps, wantGap)
		}
		if note := strings.Join(r.notes, "\n"); !strings.Contains(note, "deletions could not be checked") {
			t.Errorf("notes %q do not say the deletions could not be checked", r.notes)
		}
	})
}

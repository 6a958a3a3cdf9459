package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/etcdscope/etcdscope/etcdview"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// tailWriters is how many clients put at once: enough to keep etcd at its
// maximum rate on this machine.
const tailWriters = 32

// tailLag puts as fast as etcd takes them for d while etcdview's watch (the
// TUI's tail) follows the head, and reports the worst delay between a put's
// answer and its event's delivery, and whether every revision arrived once.
func tailLag(e env, d time.Duration) row {
	const figure, goal = "tail lag, writer at etcd's maximum rate", "lag < 1 s, no event lost"
	res, err := measureTail(e, d)
	if err != nil {
		return failed(figure, goal, err)
	}
	ok := res.maxLag < time.Second && res.lost == 0 && res.repeated == 0
	return row{
		figure: fmt.Sprintf("%s for %v", figure, d),
		ours: fmt.Sprintf("max %v, p99 %v; %d events, %d lost, %d repeated", res.maxLag.Round(time.Millisecond),
			res.p99.Round(time.Millisecond), res.events, res.lost, res.repeated),
		theirs: fmt.Sprintf("head revision, %.0f puts/s", float64(res.events)/d.Seconds()),
		goal:   goal, met: ok, measured: true,
	}
}

type tailResult struct {
	events, lost, repeated int
	maxLag, p99            time.Duration
}

func measureTail(e env, d time.Duration) (tailResult, error) {
	var res tailResult
	writer, err := clientv3.New(clientv3.Config{Endpoints: []string{e.endpoint}, DialTimeout: 5 * time.Second})
	if err != nil {
		return res, err
	}
	defer writer.Close()
	// The reader connects as etcdscope does, with its client settings.
	reader, err := etcdview.Connect(context.Background(), etcdview.Config{Endpoints: []string{e.endpoint}})
	if err != nil {
		return res, err
	}
	defer reader.Close()
	prefix := fmt.Sprintf("/registry/leases/bench-tail-%d/", time.Now().UnixNano())
	// The fill is kept for the next run: take the writer's keys out again,
	// so that every run lists the same keys.
	defer writer.Delete(context.Background(), prefix, clientv3.WithPrefix())
	start, err := writer.Get(context.Background(), "compact_rev_key")
	if err != nil {
		return res, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	batches := reader.Watch(ctx, prefix, etcdview.WatchOptions{Rev: start.Header.Revision + 1})
	w := startTailWriters(ctx, writer, prefix, d)
	seen, lags, err := readTail(batches, w, d+30*time.Second, &res)
	if err != nil {
		return res, err
	}
	cancel()
	<-w.done // the writers' puts end with ctx; then written is theirs no more
	res.events = int(w.puts.Load())
	for rev := range w.written {
		if !seen[rev] {
			res.lost++
		}
	}
	res.maxLag, res.p99 = quantiles(lags)
	return res, nil
}

// tailLoad is the writers' side of the tail figure: when each revision's put
// was answered, how many puts there were, and when the writers stopped.
type tailLoad struct {
	mu      sync.Mutex
	written map[int64]time.Time
	puts    atomic.Int64
	done    chan struct{}
}

// startTailWriters puts node-lease-sized values below prefix from
// tailWriters goroutines for d.
func startTailWriters(ctx context.Context, writer *clientv3.Client, prefix string, d time.Duration) *tailLoad {
	w := &tailLoad{written: map[int64]time.Time{}, done: make(chan struct{})}
	var wg sync.WaitGroup
	stop := time.Now().Add(d)
	value := string(make([]byte, 300)) // a node lease's size
	for n := range tailWriters {
		wg.Go(func() {
			for i := 0; time.Now().Before(stop); i++ {
				r, err := writer.Put(ctx, fmt.Sprintf("%snode-%02d-%d", prefix, n, i%500), value)
				if err != nil {
					return
				}
				w.mu.Lock()
				w.written[r.Header.Revision] = time.Now()
				w.mu.Unlock()
				w.puts.Add(1)
			}
		})
	}
	go func() { wg.Wait(); close(w.done) }()
	return w
}

// readTail reads the watch until it has seen every put once the writers
// stopped, or until timeout: the revisions it saw, and each one's lag from
// its put's answer. Repeated revisions are counted in res.
func readTail(batches <-chan etcdview.Batch, w *tailLoad, timeout time.Duration, res *tailResult) (map[int64]bool, []time.Duration, error) {
	seen := map[int64]bool{}
	var lags []time.Duration
	deadline := time.After(timeout)
	for done := false; !done; {
		select {
		case b, ok := <-batches:
			if !ok {
				return nil, nil, fmt.Errorf("watch ended early")
			}
			if b.Err != nil {
				return nil, nil, b.Err
			}
			now := time.Now()
			w.mu.Lock()
			for _, ev := range b.Events {
				rev := ev.KV.ModRevision
				if seen[rev] {
					res.repeated++
				}
				seen[rev] = true
				if at, ok := w.written[rev]; ok {
					lags = append(lags, now.Sub(at))
				}
			}
			w.mu.Unlock()
		case <-deadline:
			done = true
		}
		select {
		case <-w.done:
			done = done || len(seen) >= int(w.puts.Load())
		default:
		}
	}
	return seen, lags, nil
}

// quantiles are the largest and the 99th percentile of ds.
func quantiles(ds []time.Duration) (maxD, p99 time.Duration) {
	if len(ds) == 0 {
		return 0, 0
	}
	fs := make([]float64, len(ds))
	for i, d := range ds {
		fs[i] = float64(d)
	}
	sortFloats(fs)
	return time.Duration(fs[len(fs)-1]), time.Duration(fs[len(fs)*99/100])
}

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
	from := start.Header.Revision + 1

	// written[rev] is when the put of rev was answered.
	var mu sync.Mutex
	written := map[int64]time.Time{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	batches := reader.Watch(ctx, prefix, etcdview.WatchOptions{Rev: from})

	var puts atomic.Int64
	var wg sync.WaitGroup
	stop := time.Now().Add(d)
	value := string(make([]byte, 300)) // a node lease's size
	for w := range tailWriters {
		wg.Go(func() {
			for i := 0; time.Now().Before(stop); i++ {
				r, err := writer.Put(ctx, fmt.Sprintf("%snode-%02d-%d", prefix, w, i%500), value)
				if err != nil {
					return
				}
				mu.Lock()
				written[r.Header.Revision] = time.Now()
				mu.Unlock()
				puts.Add(1)
			}
		})
	}
	writersDone := make(chan struct{})
	go func() { wg.Wait(); close(writersDone) }()

	seen := map[int64]bool{}
	var lags []time.Duration
	deadline := time.After(d + 30*time.Second)
	for done := false; !done; {
		select {
		case b, ok := <-batches:
			if !ok {
				return res, fmt.Errorf("watch ended early")
			}
			if b.Err != nil {
				return res, b.Err
			}
			now := time.Now()
			mu.Lock()
			for _, ev := range b.Events {
				rev := ev.KV.ModRevision
				if seen[rev] {
					res.repeated++
				}
				seen[rev] = true
				if at, ok := written[rev]; ok {
					lags = append(lags, now.Sub(at))
				}
			}
			mu.Unlock()
		case <-deadline:
			done = true
		}
		select {
		case <-writersDone:
			done = done || len(seen) >= int(puts.Load())
		default:
		}
	}
	cancel()
	res.events = int(puts.Load())
	for rev := range written {
		if !seen[rev] {
			res.lost++
		}
	}
	res.maxLag, res.p99 = quantiles(lags)
	return res, nil
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

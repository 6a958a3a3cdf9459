package space_test

import (
	"context"
	"fmt"
	"time"

	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/etcdview/space"
)

// A screen reads a report in the background and draws its progress on each
// tick, feeds the tail's batches to a Meter for the live rates, and reads a
// fresh report with the same Options to refresh. (Compiled, not run: it
// needs an etcd.)
func Example_screen() {
	var src interface {
		space.Source
		Watch(context.Context, string, etcdview.WatchOptions) <-chan etcdview.Batch
	} // an *etcdview.Live
	ctx := context.Background()
	opts := space.Options{Prefix: "/registry", Depth: 2}
	job := space.Start(ctx, src, opts)
	meter := space.NewMeter(opts.Prefix, opts.Depth, 0)
	go func() {
		for b := range src.Watch(ctx, "/registry/", etcdview.WatchOptions{}) {
			meter.Observe(b, time.Now())
		}
	}()
	for {
		select {
		case <-job.Done():
			r, err := job.Result()
			if err != nil {
				return
			}
			rates := meter.Rates(time.Now(), r.Options.Top)
			for _, n := range space.Sorted(r.Root.Children, space.ByBytes, &rates, r.History) {
				ofParent, _ := space.Share(n, space.ByBytes, &rates, r.History)
				fmt.Printf("%s %d keys, %.0f%%, %.1f writes/s\n", n.Name, n.Keys, 100*ofParent, rates.Of(n.Path).Revisions)
			}
			job = space.Start(ctx, src, r.Options) // refresh
		case <-time.After(100 * time.Millisecond):
			p := job.Progress()
			fmt.Printf("reading %s: %d of %d\n", p.Phase, p.Done, p.Total)
		}
	}
}

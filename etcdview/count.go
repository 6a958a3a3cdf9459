package etcdview

import (
	"context"

	"golang.org/x/sync/errgroup"
)

// countWorkers is how many Count ranges CountChildren keeps in flight: etcd
// counts each on a core of its own, and more than a few only queue there.
const countWorkers = 4

// CountChildren fills in the Count of every child of lvl that Children left
// CountUnknown, a few Count ranges at a time, at the level's revision. Each
// costs etcd a walk of that directory's keys, so the whole costs a walk of
// every key below the level: ask it only to show the counts.
func CountChildren(ctx context.Context, src Source, lvl *Level) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(countWorkers)
	for i := range lvl.Children {
		c := &lvl.Children[i]
		if c.Count != CountUnknown {
			continue
		}
		g.Go(func() error {
			n, err := src.Count(ctx, c.Prefix, lvl.Revision)
			if err != nil {
				return err
			}
			c.Count = n
			return nil
		})
	}
	return g.Wait()
}

package space

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/embedded/etcdtest"
	"github.com/etcdscope/etcdscope/etcdview"
)

// TestKineFileReport reads du's report of a state.db a real kine wrote:
// kine keeps no version, so a key's writes are counted from its rows, and
// unknown (not 0) where the compaction deleted its creation; kine has no
// quota, so no forecast of one.
func TestKineFileReport(t *testing.T) {
	const (
		once  = "/registry/configmaps/default/once"
		twice = "/registry/configmaps/default/twice"
		moved = "/registry/configmaps/default/moved"
	)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	k := etcdtest.StartKine(t, etcdtest.KineOptions{})
	cli := k.Client(t)
	put := func(key string) int64 {
		resp, err := cli.Put(ctx, key, fmt.Sprintf(`{"key":%q}`, key))
		if err != nil {
			t.Fatal(err)
		}
		return resp.Header.Revision
	}
	put(once)
	put(moved)
	put(moved)
	compactAt := put(twice)
	// kine never compacts its newest 1000 revisions.
	var wg sync.WaitGroup
	for l := range 2 {
		wg.Go(func() {
			for range 510 {
				if _, err := cli.Put(ctx, fmt.Sprintf("/registry/leases/kube-node-lease/node-%d", l), "renewed"); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if _, err := cli.Compact(ctx, compactAt); err != nil {
		t.Fatal(err)
	}
	put(twice)
	k.Stop()

	f, err := etcdview.OpenOffline(k.DB, etcdview.FileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := Run(ctx, f.(Source), Options{Prefix: "/registry/configmaps/", Depth: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// once: 1 write; twice: 2, its creation kept (the compaction's
	// revision); moved: its creation replaced before the compaction.
	if root := r.Root; root.Keys != 3 || root.Writes != 3 || root.WritesUnknown != 1 {
		t.Errorf("configmaps: %d keys, %d writes, %d of unknown writes; want 3 keys, 3 writes and 1 unknown",
			root.Keys, root.Writes, root.WritesUnknown)
	}
	hot := map[string]int64{}
	for _, ks := range r.Root.Hottest {
		hot[ks.Key] = ks.Version
	}
	if len(hot) != 2 || hot[once] != 1 || hot[twice] != 2 {
		t.Errorf("hottest: %v, want %s at 1 and %s at 2, and not %s, whose writes are not known", hot, once, twice, moved)
	}
	if len(r.Members) != 1 || r.Members[0].Quota != 0 {
		t.Errorf("members: %+v, want kine's file, without a quota", r.Members)
	}
	if fc, ok := ForecastQuota(r.Members, func(string) Growth { return Growth{BytesPerSec: 1} }); ok {
		t.Errorf("ForecastQuota on kine: %+v, want none: kine has no quota", fc)
	}
}

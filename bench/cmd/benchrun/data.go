package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/etcdscope/etcdscope/bench/fill"
	"github.com/etcdscope/etcdscope/embedded/etcdtest"
)

// fillVersion names the generator's output: bump it when the objects or
// proportions change, so an old fill is not measured as the new one.
const fillVersion = "1"

// openData starts etcd on the cached data dir for keys, filling it first
// when there is no complete fill (a "filled" marker is written last, so an
// interrupted fill starts over).
func openData(etcdBin string, keys int, logf func(string, ...any)) (*etcdtest.External, error) {
	// etcd's on-disk format moves between minor versions (3.7 does not open
	// a 3.4 data dir), so each version has a fill of its own.
	dir := filepath.Join(cacheDir(), fmt.Sprintf("etcd%s-%d-v%s", serverVersion(etcdBin), keys, fillVersion))
	marker := filepath.Join(dir, "filled")
	warm := true
	if _, err := os.Stat(marker); err != nil {
		warm = false
		if err := os.RemoveAll(dir); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	e, err := startEtcd(etcdBin, dir)
	if err != nil {
		return nil, err
	}
	if warm {
		logf("reusing the fill in %s", dir)
		return e, nil
	}
	plan := fill.NewPlan(keys)
	logf("filling %s with %d keys (paid once per machine)", dir, keys)
	cli, err := client(e)
	if err != nil {
		e.Stop()
		return nil, err
	}
	defer cli.Close()
	start := time.Now()
	rev, err := fill.Fill(context.Background(), cli, plan)
	if err != nil {
		e.Stop()
		return nil, fmt.Errorf("fill: %w", err)
	}
	logf("filled to revision %d in %v", rev, time.Since(start).Round(time.Second))
	if err := os.WriteFile(marker, fmt.Appendf(nil, "%d keys, revision %d\n", keys, rev), 0o644); err != nil {
		e.Stop()
		return nil, err
	}
	return e, nil
}

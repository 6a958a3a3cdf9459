package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/etcdscope/etcdscope/bench/fill"
	"github.com/etcdscope/etcdscope/embedded/etcdtest"
)

// fillVersion names the generator's output: bump it when the objects or
// proportions change, so an old fill is not measured as the new one.
const fillVersion = "2"

// benchEtcd is the etcd a bench run measures: a copy of the kept fill, so that
// what the run writes (the tail figure puts for 30 s, and etcd keeps every
// revision) is gone with it, and every run starts from the same store.
type benchEtcd struct {
	*etcdtest.External
	dir string // the copy's directory, removed by Stop
}

func (r *benchEtcd) Stop() {
	r.External.Stop()
	os.RemoveAll(r.dir)
}

// openData starts etcd on a copy of the kept fill for keys, filling it first
// when there is no complete fill (a "filled" marker is written last, so an
// interrupted fill starts over). fillOnly stops after the fill.
func openData(etcdBin string, layout fill.Layout, keys int, fillOnly bool, logf func(string, ...any)) (*benchEtcd, error) {
	// etcd's on-disk format moves between minor versions (3.7 does not open
	// a 3.4 data dir), so each version has a fill of its own, and so does
	// each layout (the first keeps the name it had before there were
	// others).
	name := fmt.Sprintf("etcd%s-%d-v%s", serverVersion(etcdBin), keys, fillVersion)
	if layout.Name != fill.Layouts[0].Name {
		name = fmt.Sprintf("etcd%s-%d-%s-v%s", serverVersion(etcdBin), keys, layout.Name, fillVersion)
	}
	dir := filepath.Join(cacheDir(), name)
	if _, err := os.Stat(filepath.Join(dir, "filled")); err != nil {
		if err := makeFill(etcdBin, dir, layout.Plan(keys), logf); err != nil {
			return nil, err
		}
	} else {
		logf("reusing the fill in %s", dir)
	}
	if fillOnly {
		return nil, nil
	}
	work, err := os.MkdirTemp(cacheDir(), "run-")
	if err != nil {
		return nil, err
	}
	// cp, for its reflinks where the file system has them: 1.3 GiB for 1M
	// keys takes a few seconds otherwise.
	if out, err := exec.Command("cp", "-a", "--reflink=auto", filepath.Join(dir, "data"), work).CombinedOutput(); err != nil {
		os.RemoveAll(work)
		return nil, fmt.Errorf("copy the fill: %v: %s", err, out)
	}
	e, err := startEtcd(etcdBin, work)
	if err != nil {
		os.RemoveAll(work)
		return nil, err
	}
	return &benchEtcd{External: e, dir: work}, nil
}

// makeFill fills a new etcd in dir with plan, and stops it.
func makeFill(etcdBin, dir string, plan fill.Plan, logf func(string, ...any)) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	e, err := startEtcd(etcdBin, dir)
	if err != nil {
		return err
	}
	defer e.Stop()
	logf("filling %s with %d keys, layout %s (paid once per machine)", dir, plan.Keys, plan.Layout.Name)
	cli, err := client(e)
	if err != nil {
		return err
	}
	defer cli.Close()
	start := time.Now()
	rev, err := fill.Fill(context.Background(), cli, plan)
	if err != nil {
		return fmt.Errorf("fill: %w", err)
	}
	logf("filled to revision %d in %v", rev, time.Since(start).Round(time.Second))
	return os.WriteFile(filepath.Join(dir, "filled"), fmt.Appendf(nil, "%d keys, layout %s, revision %d\n", plan.Keys, plan.Layout.Name, rev), 0o644)
}

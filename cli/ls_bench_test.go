package cli

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/embedded/etcdtest"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/etcdview/etcdviewtest"
)

// BenchmarkLsRegistry100k runs, on one etcd holding 100,000 keys below
// /registry, `etcdscope ls /registry` and `etcdctl get /registry --prefix
// --keys-only` as processes, and the first-level Children call in-process.
// Each reports the median of its runs as median-ms:
//
//	go test -run '^$' -bench LsRegistry100k -benchtime 20x .
func BenchmarkLsRegistry100k(b *testing.B) {
	etcdctl := etcdtest.Etcdctl(b)
	c, endpoints, cli := startEtcd(b, 1)
	var keys []string
	for r := range 20 {
		for ns := range 50 {
			for n := range 100 {
				keys = append(keys, fmt.Sprintf("/registry/resource%02d/namespace%02d/object-%03d", r, ns, n))
			}
		}
	}
	etcdviewtest.PutKeys(b, cli, keys, "v")

	median := func(b *testing.B, run func() error) {
		var ds []time.Duration
		for b.Loop() {
			start := time.Now()
			if err := run(); err != nil {
				b.Fatal(err)
			}
			ds = append(ds, time.Since(start))
		}
		slices.Sort(ds)
		b.ReportMetric(float64(ds[len(ds)/2].Microseconds())/1000, "median-ms")
	}
	process := func(newCmd func() *exec.Cmd) func() error {
		return func() error {
			cmd := newCmd()
			cmd.Stdout = io.Discard
			return cmd.Run()
		}
	}
	b.Run("etcdscope ls /registry", func(b *testing.B) {
		median(b, process(func() *exec.Cmd {
			return etcdscope(append(tlsFlags(c.TLS()), "--endpoints", endpoints, "ls", "/registry"))
		}))
	})
	b.Run("etcdctl get /registry --prefix --keys-only", func(b *testing.B) {
		median(b, process(func() *exec.Cmd {
			cmd := exec.Command(etcdctl, append(tlsFlags(c.TLS()), "--endpoints", endpoints, "get", "/registry", "--prefix", "--keys-only")...)
			cmd.Env = []string{"ETCDCTL_API=3"}
			return cmd
		}))
	})
	b.Run("Children /registry/ in-process", func(b *testing.B) {
		src := etcdview.NewLive(cli, 0)
		median(b, func() error {
			_, err := src.Children(context.Background(), "/registry/", 0)
			return err
		})
	})
}

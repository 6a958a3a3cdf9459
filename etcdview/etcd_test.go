package etcdview

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/embedded"
	"github.com/etcdscope/etcdscope/embedded/etcdtest"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// eachEtcd runs fn against each etcd of the version matrix, in subtests
// named for the version (etcdtest.EachVersion).
func eachEtcd(t *testing.T, fn func(t *testing.T, cli *clientv3.Client)) {
	t.Helper()
	etcdtest.EachVersion(t, func(t *testing.T, e etcdtest.Etcd) { fn(t, e.Client) })
}

// liveConfig is how Connect reaches e as user (none when ""), with the
// client certificate the bundled etcd requires.
func liveConfig(e etcdtest.Etcd, user, password string) Config {
	cfg := Config{Endpoints: e.Endpoints, Username: user, Password: password}
	if e.TLS != nil {
		cfg.CACert, cfg.Cert, cfg.Key = e.TLS.CA, e.TLS.Cert, e.TLS.Key
	}
	return cfg
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// countingClient counts the range requests the live Source makes.
type countingClient struct {
	Client
	gets    atomic.Int64
	streams atomic.Int64
}

func (c *countingClient) GetStream(ctx context.Context, key string, opts ...clientv3.OpOption) (clientv3.GetStreamChan, error) {
	c.streams.Add(1)
	return c.Client.GetStream(ctx, key, opts...)
}

func (c *countingClient) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	c.gets.Add(1)
	return c.Client.Get(ctx, key, opts...)
}

func put(t *testing.T, cli *clientv3.Client, key, val string) int64 {
	t.Helper()
	resp, err := cli.Put(testCtx(t), key, val)
	if err != nil {
		t.Fatal(err)
	}
	return resp.Header.Revision
}

func del(t *testing.T, cli *clientv3.Client, key string) int64 {
	t.Helper()
	resp, err := cli.Delete(testCtx(t), key)
	if err != nil {
		t.Fatal(err)
	}
	return resp.Header.Revision
}

func compact(t *testing.T, cli *clientv3.Client, rev int64) {
	t.Helper()
	if _, err := cli.Compact(testCtx(t), rev, clientv3.WithCompactPhysical()); err != nil {
		t.Fatal(err)
	}
}

// client is another client of c: of the members given, or of all.
func client(t *testing.T, c *embedded.Cluster, members ...int) *clientv3.Client {
	t.Helper()
	cfg, err := c.ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	if len(members) > 0 {
		cfg.Endpoints = nil
		for _, i := range members {
			cfg.Endpoints = append(cfg.Endpoints, c.Endpoints()[i])
		}
	}
	cli, err := clientv3.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

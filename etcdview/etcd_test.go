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

// eachServer is eachEtcd and then kine, in a subtest named "kine"
// (etcdtest.EachServer).
func eachServer(t *testing.T, fn func(t *testing.T, cli *clientv3.Client)) {
	t.Helper()
	etcdtest.EachServer(t, func(t *testing.T, e etcdtest.Etcd) { fn(t, e.Client) })
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

// del deletes key as kube-apiserver does (kine refuses DeleteRange), and
// returns the revision of the deletion: the test is the only writer.
func del(t *testing.T, cli *clientv3.Client, key string) int64 {
	t.Helper()
	if err := etcdtest.Delete(testCtx(t), cli, key); err != nil {
		t.Fatal(err)
	}
	resp, err := cli.Get(testCtx(t), key)
	if err != nil {
		t.Fatal(err)
	}
	return resp.Header.Revision
}

// kineRetains is kine's --compact-min-retain default: it never compacts
// the newest 1000 revisions.
const kineRetains = 1000

// compact compacts to rev. kine caps a compaction kineRetains revisions
// below its head: on kine, writes of another key first move the head far
// enough.
func compact(t *testing.T, cli *clientv3.Client, rev int64) {
	t.Helper()
	if onKine(t, cli) {
		for range kineRetains {
			put(t, cli, "/compaction-padding", "x")
		}
	}
	if _, err := cli.Compact(testCtx(t), rev, clientv3.WithCompactPhysical()); err != nil {
		t.Fatal(err)
	}
}

// onKine says whether cli is a client of kine.
func onKine(t *testing.T, cli *clientv3.Client) bool {
	t.Helper()
	list, err := cli.MemberList(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	return isKine(list)
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

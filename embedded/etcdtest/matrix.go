package etcdtest

import (
	"context"
	"testing"

	"github.com/etcdscope/etcdscope/embedded"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Etcd is one etcd of the version matrix, serving.
type Etcd struct {
	Version   string // the release line: "3.4" to "3.7", or "kine"
	Endpoints []string
	Client    *clientv3.Client // closed when the test ends
	// TLS are the client's files for the bundled etcd, which serves TLS
	// only; nil for the others, which serve plain HTTP.
	TLS *embedded.TLSFiles
	// Restart stops etcd and starts it again on its data and endpoints:
	// Client's streams break, and Client reconnects by itself.
	Restart func() error
}

// EachVersion runs fn against a new single-member etcd of every release
// line Kubernetes runs, each in a subtest named for it: 3.4 (Debian's), 3.5
// and 3.6 as separate processes (Versions), and 3.7, the bundled etcd this
// build links, in-process, in a subtest named "embedded_3.7".
func EachVersion(t *testing.T, fn func(t *testing.T, e Etcd)) {
	t.Helper()
	t.Run("embedded_3.7", func(t *testing.T) { fn(t, startBundled(t)) })
	for _, v := range Versions {
		t.Run("etcd_"+v, func(t *testing.T) {
			e := StartVersion(t, v, Options{})
			fn(t, Etcd{Version: v, Endpoints: []string{e.Endpoint}, Client: e.Client(t), Restart: e.Restart})
		})
	}
}

// EachServer is EachVersion and then kine (KineEtcd), in a subtest named
// "kine": every server that serves a Kubernetes cluster's etcd API. kine
// answers some requests differently (see etcdview's kine notes) and
// refuses others (DeleteRange: use Delete; most transactions).
func EachServer(t *testing.T, fn func(t *testing.T, e Etcd)) {
	t.Helper()
	EachVersion(t, fn)
	t.Run("kine", func(t *testing.T) { fn(t, KineEtcd(t)) })
}

func startBundled(t *testing.T) Etcd {
	t.Helper()
	c, cli := StartBundled(t, 1)
	return Etcd{Version: "3.7", Endpoints: c.Endpoints(), Client: cli, TLS: c.TLS(), Restart: func() error {
		if err := c.StopMember(0); err != nil {
			return err
		}
		return c.RestartMember(t.Context(), 0)
	}}
}

// StartBundled runs a bundled cluster of members, in-process, until the test
// ends, and returns it with a client of all its members.
func StartBundled(t testing.TB, members int) (*embedded.Cluster, *clientv3.Client) {
	t.Helper()
	c, err := embedded.Start(context.Background(), embedded.Options{Members: members})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, Client(t, c)
}

// Client is a client of all of c's members, with its client certificate,
// closed when the test ends.
func Client(t testing.TB, c *embedded.Cluster) *clientv3.Client {
	t.Helper()
	cfg, err := c.ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	cli, err := clientv3.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

package cli

import (
	"context"
	"errors"

	"github.com/etcdscope/etcdscope/embedded"
	"github.com/etcdscope/etcdscope/embedded/controlplane"
	"github.com/etcdscope/etcdscope/etcdview"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// openSource opens what the connection flags name: a live etcd (--endpoints
// or ETCDCTL_ENDPOINTS), an offline data file (--db), or else the bundled
// cluster, started in-process on --data-dir. closeFn releases it.
func openSource(ctx context.Context, conn *connFlags) (src etcdview.Source, closeFn func(), err error) {
	kind, err := conn.kind()
	if err != nil {
		return nil, nil, err
	}
	switch kind {
	case fileSource:
		f, err := etcdview.OpenFileWith(conn.db, etcdview.FileOptions{NoIndexFile: !conn.dbIndex})
		if err != nil {
			return nil, nil, err
		}
		return f, func() { f.Close() }, nil
	case liveSource:
		cfg, err := conn.etcdConfig()
		if err != nil {
			return nil, nil, err
		}
		l, err := etcdview.Connect(ctx, cfg)
		if err != nil {
			return nil, nil, err
		}
		return l, func() { l.Close() }, nil
	}
	_, l, closeFn, err := openBundled(ctx, conn, controlplane.Options{}, 0)
	if err != nil {
		return nil, nil, err
	}
	return l, closeFn, nil
}

// openBundled starts the bundled control plane of opts, with members etcd
// members (0: as many as --data-dir holds, or 3) in --data-dir, and reads
// its cluster. closeFn stops it all.
func openBundled(ctx context.Context, conn *connFlags, opts controlplane.Options, members int) (*controlplane.ControlPlane, *etcdview.Live, func(), error) {
	opts.Cluster = embedded.Options{Members: members, DataDir: conn.dataDir}
	cp, err := controlplane.Start(ctx, opts)
	if err != nil {
		return nil, nil, nil, err
	}
	cfg, err := cp.Cluster().ClientConfig()
	if err == nil {
		var cli *clientv3.Client
		if cli, err = clientv3.New(cfg); err == nil {
			return cp, etcdview.NewLive(cli, conn.commandTimeout), func() { cli.Close(); cp.Close() }, nil
		}
	}
	return nil, nil, nil, errors.Join(err, cp.Close())
}

// withSource runs fn on the source the flags name, and closes it after.
func withSource(ctx context.Context, conn *connFlags, fn func(etcdview.Source) error) error {
	src, closeFn, err := openSource(ctx, conn)
	if err != nil {
		return err
	}
	defer closeFn()
	return fn(src)
}

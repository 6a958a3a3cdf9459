package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/etcdscope/etcdscope/embedded"
	"github.com/etcdscope/etcdscope/embedded/controlplane"
	"github.com/etcdscope/etcdscope/etcdview"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// ErrNoSource is what a command says when nothing names an etcd and no
// bundled cluster runs: it never starts a throwaway one, whose empty
// answer would read as the truth.
var ErrNoSource = errors.New("no etcd to read: give --endpoints (or ETCDCTL_ENDPOINTS), --db FILE, or start the bundled cluster (etcdscope, or etcdscope serve --apiserver)")

// origin is where a source that no flag named came from, and why: the
// command says it on stderr, so that a user knows which etcd answered.
type origin struct {
	what string // "the bundled cluster in /tmp/x (pid 4567, started by etcdscope serve)"
	from string // the state file, or the variable
}

func (o origin) String() string { return "etcdscope: reading " + o.what + ", from " + o.from }

// say prints o on the command's stderr when that is a terminal: a script
// reading stderr gets only errors.
func (f *ConnFlags) say(o origin) {
	if f.errOut == nil || !IsTerminal(f.errOut) {
		return
	}
	fmt.Fprintln(f.errOut, PaletteFor(f.errOut).Text(o.String()))
}

// OpenSource opens what the connection flags name: a live etcd (--endpoints
// or ETCDCTL_ENDPOINTS), an offline data file (--db), or else the bundled
// cluster that runs (on --data-dir, when given). closeFn releases it.
func OpenSource(ctx context.Context, conn *ConnFlags) (src etcdview.Source, closeFn func(), err error) {
	kind, err := conn.Kind()
	if err != nil {
		return nil, nil, err
	}
	var cfg etcdview.Config
	switch kind {
	case FileSource:
		f, err := etcdview.OpenOffline(conn.DB, etcdview.FileOptions{NoIndexFile: !conn.dbIndex})
		if err != nil {
			return nil, nil, err
		}
		return f, func() { f.Close() }, nil
	case LiveSource:
		if cfg, err = conn.etcdConfig(); err != nil {
			return nil, nil, err
		}
		if env, ok := conn.FromEnv["endpoints"]; ok {
			conn.say(origin{what: "etcd at " + strings.Join(conn.Endpoints, ","), from: env})
		}
	default:
		s, err := findBundled(ctx, conn.DataDir)
		if err != nil {
			return nil, nil, err
		}
		conn.say(origin{what: fmt.Sprintf("the bundled cluster in %s (pid %d, started by %s)", s.DataDir, s.PID, s.By), from: s.Path})
		cfg = etcdview.Config{Endpoints: s.Endpoints, CACert: s.CA, Cert: s.Cert, Key: s.Key,
			DialTimeout: conn.dialTimeout, CommandTimeout: conn.CommandTimeout}
	}
	l, err := etcdview.Connect(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	return l, func() { l.Close() }, nil
}

// findBundled is the one bundled cluster of this user that runs, the one
// on dataDir when given. It never starts one.
func findBundled(ctx context.Context, dataDir string) (controlplane.State, error) {
	running, err := controlplane.Running(ctx, controlplane.StateDir())
	if err != nil {
		return controlplane.State{}, err
	}
	if dataDir != "" {
		var on []controlplane.State
		for _, s := range running {
			if sameDir(s.DataDir, dataDir) {
				on = append(on, s)
			}
		}
		if len(on) == 0 {
			return controlplane.State{}, fmt.Errorf("no bundled cluster runs in %s (--data-dir picks a running one, and starts none): start it there with etcdscope --data-dir %[1]s or etcdscope serve --data-dir %[1]s", dataDir)
		}
		running = on
	}
	switch len(running) {
	case 0:
		return controlplane.State{}, ErrNoSource
	case 1:
		return running[0], nil
	}
	var list []string
	for _, s := range running {
		list = append(list, fmt.Sprintf("%s (pid %d)", s.DataDir, s.PID))
	}
	return controlplane.State{}, fmt.Errorf("%d bundled clusters run: %s; add --data-dir to pick one", len(running), strings.Join(list, ", "))
}

// sameDir says whether a and b are one directory, however each is spelt.
func sameDir(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return os.SameFile(fa, fb)
	}
	absB, err := filepath.Abs(b)
	return err == nil && filepath.Clean(a) == absB
}

// OpenBundled starts the bundled control plane of opts, with members etcd
// members (0: as many as --data-dir holds, or 3) in --data-dir, and reads
// its cluster. closeFn stops it all.
func OpenBundled(ctx context.Context, conn *ConnFlags, opts controlplane.Options, members int) (*controlplane.ControlPlane, *etcdview.Live, func(), error) {
	opts.Cluster = embedded.Options{Members: members, DataDir: conn.DataDir}
	cp, err := controlplane.Start(ctx, opts)
	if err != nil {
		return nil, nil, nil, err
	}
	cfg, err := cp.Cluster().ClientConfig()
	if err == nil {
		var cli *clientv3.Client
		if cli, err = clientv3.New(cfg); err == nil {
			return cp, etcdview.NewLive(cli, conn.CommandTimeout), func() { cli.Close(); cp.Close() }, nil
		}
	}
	return nil, nil, nil, errors.Join(err, cp.Close())
}

// WithSource runs fn on the source the flags name, and closes it after.
func WithSource(ctx context.Context, conn *ConnFlags, fn func(etcdview.Source) error) error {
	src, closeFn, err := OpenSource(ctx, conn)
	if err != nil {
		return err
	}
	defer closeFn()
	return fn(src)
}

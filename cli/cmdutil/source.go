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
var ErrNoSource = errors.New("no etcd to read: no bundled cluster runs and this node has none (no kube-apiserver or etcd manifest, no k3s): give --endpoints (or ETCDCTL_ENDPOINTS), --db FILE, --cluster NAME, or start the bundled cluster (etcdscope, or etcdscope serve --apiserver)")

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
	t, err := conn.Target(ctx)
	if err != nil {
		return nil, nil, err
	}
	conn.Say(t)
	return t.Open(ctx)
}

// Say says on stderr where t came from, when no flag on the command line
// named it.
func (f *ConnFlags) Say(t *Target) {
	if t.said != nil {
		f.say(*t.said)
	}
}

// noneOnDataDir is a --data-dir where no bundled cluster runs: the
// explorer starts one there, the other commands fail with it.
type noneOnDataDir string

func (d noneOnDataDir) Error() string {
	return fmt.Sprintf("no bundled cluster runs in %s (--data-dir picks a running one, and starts none): start it there with etcdscope --data-dir %[1]s or etcdscope serve --data-dir %[1]s", string(d))
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
			return controlplane.State{}, noneOnDataDir(dataDir)
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
			l := etcdview.NewLive(cli, conn.CommandTimeout)
			l.SetMemberDialer(func(_ context.Context, endpoint string) (*clientv3.Client, error) {
				one := cfg
				one.Endpoints = []string{endpoint}
				return clientv3.New(one)
			})
			return cp, l, func() { cli.Close(); cp.Close() }, nil
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

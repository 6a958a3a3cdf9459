package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/etcdscope/etcdscope/cli/clusters"
	"github.com/etcdscope/etcdscope/embedded"
	"github.com/etcdscope/etcdscope/embedded/controlplane"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/etcdview/discover"
)

// Target is what a command reads once the flags, the named cluster, the
// running bundled cluster and the node's files have been looked at, in
// that order.
type Target struct {
	// Kind is LiveSource or FileSource; BundledSource when nothing was
	// found: the explorer then starts the bundled cluster, and the other
	// commands fail with NoSource.
	Kind   SourceKind
	Config etcdview.Config // of LiveSource
	DB     string          // of FileSource
	// fileOptions are --db-index's.
	fileOptions etcdview.FileOptions
	// Bundled is the running bundled cluster read, nil for another etcd.
	Bundled *controlplane.State
	// Found is what discovery found on the node, nil when it was not
	// read from the node's files.
	Found *discover.Found
	// Description names it in the explorer's header: "etcd of this
	// kubeadm node, from /etc/kubernetes/manifests/kube-apiserver.yaml".
	Description string
	// Export are the shell assignments that point etcdctl at it; nil for
	// a file.
	Export []string
	// EncryptionConfig is the encryption config found with it (the node's
	// kube-apiserver's, the named cluster's); --encryption-config wins.
	EncryptionConfig string
	// NoSource is why there is none, when Kind is BundledSource.
	NoSource error
	// said is the stderr line that says where it came from, when no flag
	// on the command line named it; nil says nothing.
	said *origin
}

// Target resolves what the flags name, once per command: the decoder (for
// the encryption config found) and the source both ask.
func (f *ConnFlags) Target(ctx context.Context) (*Target, error) {
	if f.target == nil && f.targetErr == nil {
		f.target, f.targetErr = f.resolve(ctx)
	}
	return f.target, f.targetErr
}

func (f *ConnFlags) resolve(ctx context.Context) (*Target, error) {
	kind, err := f.Kind()
	if err != nil {
		return nil, err
	}
	switch {
	case kind == FileSource:
		return f.named(&Target{Kind: FileSource, DB: f.DB, Description: "data file " + f.DB,
			fileOptions: etcdview.FileOptions{NoIndexFile: !f.dbIndex}}), nil
	case kind == LiveSource:
		cfg, err := f.etcdConfig()
		if err != nil {
			return nil, err
		}
		t := f.named(liveTarget(cfg, "etcd at "+strings.Join(cfg.Endpoints, ",")))
		if env, ok := f.FromEnv["endpoints"]; ok {
			t.said = &origin{what: t.Description, from: env}
			t.Description += " (" + env + ")"
		}
		return t, nil
	case f.StartBundled:
		return &Target{Kind: BundledSource}, nil
	case f.hostRootGiven:
		// --host-root asks for the node's etcd: a bundled cluster that
		// runs is not what was asked, nor one started instead.
		if f.DataDir != "" {
			return nil, fmt.Errorf("--host-root reads the node's etcd and --data-dir the bundled cluster: give one")
		}
		return f.NodeTarget(nil)
	}
	t, err := f.bundledTarget(ctx)
	if err != nil || t.Kind != BundledSource || f.DataDir != "" {
		return t, err
	}
	return f.NodeTarget(t)
}

// NodeTarget is the etcd the node's files under --host-root describe
// (kube-apiserver's or etcd's static pod manifest, k3s' files). With none
// there it is notFound when given, else discovery's error; a file it
// cannot read is an error, never none.
func (f *ConnFlags) NodeTarget(notFound *Target) (*Target, error) {
	found, err := discover.Find(f.HostRoot)
	switch {
	case errors.Is(err, discover.ErrNotFound) && notFound != nil:
		return notFound, nil
	case err != nil:
		return nil, err
	}
	t := &Target{Kind: FileSource, DB: found.DB, fileOptions: etcdview.FileOptions{NoIndexFile: !f.dbIndex}}
	if len(found.Endpoints) > 0 {
		if err := etcdview.CheckTimeouts(f.dialTimeout, f.CommandTimeout); err != nil {
			return nil, err
		}
		// The node's etcd may still want a user of etcd's own auth.
		cfg := found.Config()
		if cfg.Username, cfg.Password, err = f.credentials(); err != nil {
			return nil, err
		}
		cfg.DialTimeout, cfg.CommandTimeout = f.dialTimeout, f.CommandTimeout
		t = liveTarget(cfg, "")
	}
	t.Description, t.EncryptionConfig, t.Found = found.String(), found.EncryptionConfig, &found
	t.said = &origin{what: found.What, from: found.From}
	if found.Prefix != discover.DefaultPrefix {
		// The screens and resource names read kube-apiserver's default
		// prefix; the keys are there under the node's, for ls and get.
		note := fmt.Sprintf(" (its kube-apiserver stores under --etcd-prefix=%s, which etcdscope's screens do not follow: give %[1]s/ as the path)", found.Prefix)
		t.Description += note
		t.said.what += note
	}
	return t, nil
}

// ClusterName is --cluster, "" when not given.
func (f *ConnFlags) ClusterName() string { return f.cluster }

// ClusterTarget is the config file's cluster cl, as --cluster would name it
// with no other connection flag, for :ctx. It never asks for a password:
// the terminal is the UI's.
func (f *ConnFlags) ClusterTarget(ctx context.Context, cl clusters.Cluster) (*Target, error) {
	g := &ConnFlags{Endpoints: cl.Endpoints, DB: cl.DB, CACert: cl.CACert, Cert: cl.Cert, Key: cl.Key,
		user: cl.User, password: f.password, noPrompt: true, dialTimeout: f.dialTimeout, CommandTimeout: f.CommandTimeout,
		dbIndex: f.dbIndex, cluster: cl.Name, clusterEncryption: cl.EncryptionConfig}
	return g.resolve(ctx)
}

// BundledTarget is the bundled cluster that runs, or, with none, a
// BundledSource target, for :ctx.
func (f *ConnFlags) BundledTarget(ctx context.Context) (*Target, error) {
	return (&ConnFlags{dialTimeout: f.dialTimeout, CommandTimeout: f.CommandTimeout}).bundledTarget(ctx)
}

// named says, in the header, which of the config file's clusters the
// flags came from.
func (f *ConnFlags) named(t *Target) *Target {
	if f.cluster != "" {
		t.Description = "cluster " + f.cluster + ": " + t.Description
		if t.EncryptionConfig == "" {
			t.EncryptionConfig = f.clusterEncryption
		}
	}
	return t
}

// liveTarget is a live etcd reached with cfg.
func liveTarget(cfg etcdview.Config, description string) *Target {
	return &Target{Kind: LiveSource, Config: cfg, Description: description,
		Export: ExportVars(cfg.Endpoints, &embedded.TLSFiles{CA: cfg.CACert, Cert: cfg.Cert, Key: cfg.Key})}
}

// bundledTarget is the running bundled cluster (the one on --data-dir,
// when given), or, with none, what NoSource says.
func (f *ConnFlags) bundledTarget(ctx context.Context) (*Target, error) {
	s, err := findBundled(ctx, f.DataDir)
	var none noneOnDataDir
	switch {
	case errors.As(err, &none), errors.Is(err, ErrNoSource):
		return &Target{Kind: BundledSource, NoSource: err}, nil
	case err != nil:
		return nil, err
	}
	return f.attachTarget(s), nil
}

// attachTarget reads the bundled cluster s describes, which another
// process runs.
func (f *ConnFlags) attachTarget(s controlplane.State) *Target {
	t := liveTarget(etcdview.Config{Endpoints: s.Endpoints, CACert: s.CA, Cert: s.Cert, Key: s.Key,
		DialTimeout: f.dialTimeout, CommandTimeout: f.CommandTimeout},
		fmt.Sprintf("the bundled cluster in %s (pid %d, started by %s)", s.DataDir, s.PID, s.By))
	if s.Kubeconfig != "" {
		t.Export = append(t.Export, "KUBECONFIG="+ShellQuote(s.Kubeconfig))
	}
	t.Bundled, t.EncryptionConfig = &s, s.EncryptionConfig
	t.said = &origin{what: t.Description, from: s.Path}
	return t
}

// Open opens the source t names; closeFn releases it. It never starts the
// bundled cluster: a BundledSource target fails with its NoSource.
func (t *Target) Open(ctx context.Context) (src etcdview.Source, closeFn func(), err error) {
	switch t.Kind {
	case FileSource:
		f, err := etcdview.OpenOffline(t.DB, t.fileOptions)
		if err != nil {
			return nil, nil, err
		}
		return f, func() { f.Close() }, nil
	case LiveSource:
		l, err := etcdview.Connect(ctx, t.Config)
		if err != nil {
			return nil, nil, err
		}
		return l, func() { l.Close() }, nil
	}
	return nil, nil, t.NoSource
}

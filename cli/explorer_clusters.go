package cli

import (
	"context"

	"github.com/etcdscope/etcdscope/cli/clusters"
	"github.com/etcdscope/etcdscope/cli/cmdutil"
	"github.com/etcdscope/etcdscope/ui"
)

// The names :ctx gives the clusters that are not in the config file.
const (
	bundledName = "bundled"
	nodeName    = "node"
	// flagsName is the cluster the command line named, when it is none
	// of the others.
	flagsName = "flags"
)

// clusterList is what :ctx lists and switches to: the config file's named
// clusters, the node's etcd when discovery finds one, the bundled cluster
// (the one that runs, or one to start), and the one the command line
// named.
type clusterList struct {
	ex *explorer
	// initial is what the explorer opened first, named current until the
	// first switch.
	initial *cmdutil.Target
	current string
}

// initialName is the name :ctx gives what the explorer opened first.
func initialName(conn *cmdutil.ConnFlags, t *cmdutil.Target) string {
	switch {
	case conn.ClusterName() != "":
		return conn.ClusterName()
	case t.Kind == cmdutil.BundledSource || t.Bundled != nil:
		return bundledName
	case t.Found != nil:
		return nodeName
	}
	return flagsName
}

// List reads the config file at each call, so that a cluster added while
// the explorer runs shows.
func (c *clusterList) List(ctx context.Context) ([]ui.NamedCluster, error) {
	cfg, err := loadConfig()
	if err != nil {
		return nil, err
	}
	var out []ui.NamedCluster
	for _, cl := range cfg.Clusters {
		out = append(out, ui.NamedCluster{Name: cl.Name, What: cl.Source()})
	}
	bundled := "start the bundled cluster"
	if c.ex.started != nil {
		bundled = "the bundled cluster this explorer runs, in " + c.ex.started.cp.Cluster().DataDir()
	} else if t, err := c.ex.conn.BundledTarget(ctx); err == nil && t.Bundled != nil {
		bundled = t.Description
	}
	if t, err := c.ex.conn.NodeTarget(nil); err == nil {
		out = append(out, ui.NamedCluster{Name: nodeName, What: t.Description})
	}
	out = append(out, ui.NamedCluster{Name: bundledName, What: bundled})
	if initialName(c.ex.conn, c.initial) == flagsName {
		out = append(out, ui.NamedCluster{Name: flagsName, What: c.initial.Description})
	}
	for i := range out {
		out[i].Current = out[i].Name == c.current
	}
	return out, nil
}

// Open builds the options the explorer would for the cluster named name.
func (c *clusterList) Open(ctx context.Context, name string) (ui.Options, func(), error) {
	t, err := c.target(ctx, name)
	if err != nil {
		return ui.Options{}, nil, err
	}
	opts, closeFn, err := c.ex.open(ctx, t)
	if err != nil {
		return ui.Options{}, nil, err
	}
	opts.Clusters = c
	c.current = name
	return opts, closeFn, nil
}

func (c *clusterList) target(ctx context.Context, name string) (*cmdutil.Target, error) {
	switch name {
	case bundledName:
		if c.ex.started != nil {
			return &cmdutil.Target{Kind: cmdutil.BundledSource}, nil
		}
		return c.ex.conn.BundledTarget(ctx)
	case nodeName:
		return c.ex.conn.NodeTarget(nil)
	case flagsName:
		if initialName(c.ex.conn, c.initial) == flagsName {
			return c.initial, nil
		}
	}
	cfg, err := loadConfig()
	if err != nil {
		return nil, err
	}
	cl, err := cfg.Get(name)
	if err != nil {
		return nil, err
	}
	return c.ex.conn.ClusterTarget(ctx, cl)
}

// loadConfig is the user's config file, an empty one when there is none.
func loadConfig() (*clusters.Config, error) {
	path, err := clusters.Path()
	if err != nil {
		return nil, err
	}
	cfg, err := clusters.Load(path)
	if cfg == nil && err == nil {
		cfg = &clusters.Config{Path: path}
	}
	return cfg, err
}

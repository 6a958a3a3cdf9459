package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/etcdscope/etcdscope/embedded"
	"github.com/etcdscope/etcdscope/ui"
)

// explorerFlags are the root command's own flags: what the TUI needs beyond
// the connection.
type explorerFlags struct {
	members    int
	tailBuffer int
}

// runExplorer opens the source the flags name and shows it in the TUI.
func runExplorer(ctx context.Context, conn *connFlags, flags explorerFlags) error {
	kind, err := conn.kind()
	if err != nil {
		return err
	}
	dec, err := conn.decoding.decoder()
	if err != nil {
		return err
	}
	opts := ui.Options{TailBuffer: flags.tailBuffer, Timeout: conn.commandTimeout, Decoder: dec}
	var closeFn func()
	switch kind {
	case bundledSource:
		c, src, closeSrc, err := openBundled(ctx, conn, flags.members)
		if err != nil {
			return err
		}
		src.Decoder = dec
		opts.Source, closeFn = src, closeSrc
		opts.Description = fmt.Sprintf("bundled %d-member cluster in %s", len(c.Members()), c.DataDir())
		opts.Members = bundledMembers{c}
	default:
		src, closeSrc, err := openSource(ctx, conn)
		if err != nil {
			return err
		}
		opts.Source, closeFn = src, closeSrc
		opts.Description = "etcd at " + strings.Join(conn.endpoints, ",")
		opts.MembersOff = "k and r stop and restart members of the bundled cluster only: etcdscope never writes to a live etcd"
		if kind == fileSource {
			opts.Description = "data file " + conn.db
			opts.MembersOff = "an offline data file has no members to stop or restart"
		}
	}
	defer closeFn()
	// The UI's watch and reads end with ctx, before the source closes.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	return ui.Run(ctx, opts)
}

// bundledMembers stops and restarts members of the bundled cluster by name,
// the name the cluster pane shows.
type bundledMembers struct{ c *embedded.Cluster }

func (b bundledMembers) index(name string) (int, error) {
	for i, m := range b.c.Members() {
		if m.Name == name {
			return i, nil
		}
	}
	return 0, fmt.Errorf("no member %q in the bundled cluster", name)
}

func (b bundledMembers) StopMember(name string) error {
	i, err := b.index(name)
	if err != nil {
		return err
	}
	return b.c.StopMember(i)
}

func (b bundledMembers) RestartMember(ctx context.Context, name string) error {
	i, err := b.index(name)
	if err != nil {
		return err
	}
	return b.c.RestartMember(ctx, i)
}

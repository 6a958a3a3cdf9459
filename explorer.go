package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/etcdscope/etcdscope/demo"
	"github.com/etcdscope/etcdscope/embedded"
	"github.com/etcdscope/etcdscope/embedded/apiserver"
	"github.com/etcdscope/etcdscope/ui"
	"github.com/etcdscope/etcdscope/ui/writepath"
	"k8s.io/client-go/rest"
)

// explorerFlags are the root command's own flags: what the TUI needs beyond
// the connection.
type explorerFlags struct {
	members    int
	tailBuffer int
	// demo is the load of the simulated control plane in bundled mode
	// (calm, busy, off); demoNodes its number of kubelets.
	demo      string
	demoNodes int
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
	profile, err := demo.ParseProfile(flags.demo)
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
		cp, err := startControlPlane(ctx, c, profile, flags.demoNodes)
		if err != nil {
			closeSrc()
			return err
		}
		opts.Source = src
		closeFn = func() { cp.Close(); closeSrc() }
		opts.Description = fmt.Sprintf("bundled %d-member cluster in %s", len(c.Members()), c.DataDir())
		opts.Members = bundledMembers{c}
		opts.WritePath = cp.feed(c)
	default:
		src, closeSrc, err := openSource(ctx, conn)
		if err != nil {
			return err
		}
		opts.Source, closeFn = src, closeSrc
		opts.Description = "etcd at " + strings.Join(conn.endpoints, ",")
		opts.MembersOff = "k and r stop and restart members of the bundled cluster only: etcdscope never writes to a live etcd"
		opts.WritePath.Note = "the write path shows in bundled mode, where etcdscope runs the API server"
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

// controlPlane is the built-in API server in front of the bundled cluster
// and the simulated components around it.
type controlPlane struct {
	api    *bundledAPIServer
	demo   *demo.Demo // nil with --demo=off
	traces <-chan apiserver.WriteTrace
	stop   []func()
}

// startControlPlane starts the API server, with a token for the admin,
// the viewer and each identity of the demo, writes its kubeconfig into
// the data dir, and starts the demo on it.
func startControlPlane(ctx context.Context, c *embedded.Cluster, profile demo.Profile, nodes int) (*controlPlane, error) {
	if nodes <= 0 {
		nodes = 3
	}
	tokens := map[string]string{}
	list := []apiserver.Token{
		{Token: newToken(), User: "admin", UID: "admin", Groups: []string{apiserver.AdminGroup}},
		{Token: newToken(), User: "viewer", UID: "viewer", Groups: []string{apiserver.ViewerGroup}},
	}
	for _, u := range demo.Users(nodes) {
		group := apiserver.AdminGroup
		if u.ReadOnly {
			group = apiserver.ViewerGroup
		}
		tokens[u.Name] = newToken()
		list = append(list, apiserver.Token{Token: tokens[u.Name], User: u.Name, UID: u.Name, Groups: []string{group}})
	}
	api, err := startAPIServer(ctx, c, list)
	if err != nil {
		return nil, err
	}
	cp := &controlPlane{api: api}
	traces, cancel := api.Subscribe()
	cp.traces, cp.stop = traces, append(cp.stop, cancel)
	if profile == demo.Off {
		return cp, nil
	}
	log, err := os.OpenFile(filepath.Join(c.DataDir(), "demo.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		cp.Close()
		return nil, err
	}
	cp.stop = append(cp.stop, func() { log.Close() })
	cp.demo, err = demo.Start(ctx, demo.Options{
		Config:  func(user string) *rest.Config { return api.RESTConfig(tokens[user]) },
		Nodes:   nodes,
		Profile: profile,
		Log:     log,
	})
	if err != nil {
		cp.Close()
		return nil, fmt.Errorf("start the demo: %w", err)
	}
	return cp, nil
}

func newToken() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return base64.RawURLEncoding.EncodeToString(b)
}

// Close stops the demo first (its leaders release their Leases through the
// API server), then the API server.
func (cp *controlPlane) Close() {
	if cp.demo != nil {
		cp.demo.Close()
	}
	cp.api.Close()
	for i := len(cp.stop) - 1; i >= 0; i-- {
		cp.stop[i]()
	}
}

// feed adapts the API server's trace, the demo's reactions and the
// cluster's members to the write-path pane's types.
func (cp *controlPlane) feed(c *embedded.Cluster) writepath.Feed {
	writes := make(chan writepath.Write, 256)
	go func() {
		defer close(writes)
		for t := range cp.traces {
			w := writepath.Write{Start: t.Start, Verb: t.Verb, Resource: t.Resource, Namespace: t.Namespace, Name: t.Name,
				User: t.User, Key: t.Key, Revision: t.Revision, Code: t.Code}
			for _, st := range t.Stages {
				w.Stages = append(w.Stages, writepath.Stage{Name: st.Name, Duration: st.Duration})
			}
			select {
			case writes <- w:
			default: // the UI is behind: it misses a write rather than hold up the trace
			}
		}
	}()
	f := writepath.Feed{
		Writes: writes,
		Note:   "kubectl --kubeconfig " + cp.api.kubeconfig,
		Members: func() []writepath.Member {
			var out []writepath.Member
			for _, m := range c.Members() {
				out = append(out, writepath.Member{Name: m.Name, Leader: m.Leader, Running: m.Running, Applied: m.AppliedIndex})
			}
			return out
		},
	}
	if cp.demo != nil {
		rs, cancel := cp.demo.Reactions()
		cp.stop = append(cp.stop, cancel)
		reactions := make(chan writepath.Reaction, 1024)
		go func() {
			defer close(reactions)
			for r := range rs {
				select {
				case reactions <- writepath.Reaction{Revision: r.Revision, Component: r.Component, Event: r.Event, Resource: r.Resource, Detail: r.Detail}:
				default:
				}
			}
		}()
		f.Reactions = reactions
	}
	return f
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

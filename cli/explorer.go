package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/etcdscope/etcdscope/cli/cmdutil"
	"github.com/etcdscope/etcdscope/decode/table"
	"github.com/etcdscope/etcdscope/demo"
	"github.com/etcdscope/etcdscope/embedded"
	"github.com/etcdscope/etcdscope/embedded/controlplane"
	"github.com/etcdscope/etcdscope/embedded/fanout"
	"github.com/etcdscope/etcdscope/embedded/kube"
	"github.com/etcdscope/etcdscope/etcdview/resource"
	"github.com/etcdscope/etcdscope/ui"
	"github.com/etcdscope/etcdscope/ui/writepath"
)

// explorerFlags are the root command's own flags: what the TUI needs beyond
// the connection.
type explorerFlags struct {
	bundledFlags
	tailBuffer int
	// rev is the revision the explorer opens at, 0 the newest.
	rev int64
}

// runExplorer opens the source the flags name and shows it in the TUI.
func runExplorer(ctx context.Context, conn *cmdutil.ConnFlags, flags explorerFlags) error {
	if err := cmdutil.CheckRev("rev", flags.rev); err != nil {
		return err
	}
	kind, err := conn.Kind()
	if err != nil {
		return err
	}
	dec, err := conn.Decoding.Decoder()
	if err != nil {
		return err
	}
	profile, err := demo.ParseProfile(flags.demo)
	if err != nil {
		return err
	}
	opts := ui.Options{TailBuffer: flags.tailBuffer, Timeout: conn.CommandTimeout, Decoder: dec, Rev: flags.rev}
	var closeFn func()
	switch kind {
	case cmdutil.BundledSource:
		cp, src, closeSrc, err := cmdutil.OpenBundled(ctx, conn, controlplane.Options{
			APIServer: true, Demo: profile, Nodes: flags.demoNodes, CompactionInterval: flags.compaction,
			EncryptionConfig: conn.Decoding.EncryptionConfig, CaptureStderr: true, Announce: "the etcdscope explorer",
		}, flags.members)
		if err != nil {
			return err
		}
		var stopFeed func()
		opts.WritePath, stopFeed = writePathFeed(cp)
		opts.Source, closeFn = src, func() { stopFeed(); closeSrc() }
		opts.Description = fmt.Sprintf("bundled %d-member cluster in %s", len(cp.Cluster().Members()), cp.Cluster().DataDir())
		opts.Export = append(cmdutil.ExportVars(cp.Cluster().Endpoints(), cp.Cluster().TLS()), "KUBECONFIG="+cmdutil.ShellQuote(cp.APIServer().Kubeconfig))
		opts.Members = cp
		opts.Errors = cp.Errors()
		opts.ControlPlaneReady = cp.Ready()
	default:
		src, closeSrc, err := cmdutil.OpenSource(ctx, conn)
		if err != nil {
			return err
		}
		opts.Source, closeFn = src, closeSrc
		opts.Description = "etcd at " + strings.Join(conn.Endpoints, ",")
		if env, ok := conn.FromEnv["endpoints"]; ok {
			opts.Description += " (" + env + ")"
		}
		opts.Export = cmdutil.ExportVars(conn.Endpoints, &embedded.TLSFiles{CA: conn.CACert, Cert: conn.Cert, Key: conn.Key})
		opts.MembersOff = "k and r stop and restart members of the bundled cluster only: etcdscope never writes to a live etcd"
		opts.WritePath.Note = "the write path shows in bundled mode, where etcdscope runs the API server"
		if kind == cmdutil.FileSource {
			opts.Description, opts.Export = "data file "+conn.DB, nil
			// kine's file says how fresh it is (etcdview.KineFile).
			if d, ok := src.(interface{ Description() string }); ok {
				opts.Description = d.Description()
			}
			opts.MembersOff = "an offline data file has no members to stop or restart"
		}
	}
	defer closeFn()
	// The tree's leaf levels print their resource's columns, a custom
	// resource's from its CRD as of the level's revision, as get does.
	src := opts.Source
	opts.Resolve = func(ctx context.Context, name string, rev int64) (*table.Resource, error) {
		r, _, err := resource.Resolve(ctx, src, dec, name, rev)
		return r, err
	}
	// The UI's watch and reads end with ctx, before the source closes.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	return ui.Run(ctx, opts)
}

// writePathFeed subscribes the write path to the API server's traces and
// the demo's reactions, in the pane's own types; stop ends the
// subscriptions. A UI that falls behind misses writes, never holds one up.
func writePathFeed(cp *controlplane.ControlPlane) (f writepath.Feed, stop func()) {
	f = writepath.Feed{
		Note: "kubectl --kubeconfig " + cp.APIServer().Kubeconfig,
		Members: func() []writepath.Member {
			var out []writepath.Member
			for _, m := range cp.Cluster().Members() {
				out = append(out, writepath.Member{Name: m.Name, Leader: m.Leader, Running: m.Running, Applied: m.AppliedIndex})
			}
			return out
		},
	}
	writes, stopWrites := fanout.Map(cp.Writes(), 256, writeOf)
	f.Writes = writes
	if cp.Reactions() == nil {
		return f, stopWrites
	}
	reactions, stopReactions := fanout.Map(cp.Reactions(), 1024, func(r demo.Reaction) writepath.Reaction {
		return writepath.Reaction{Revision: r.Revision, Component: r.Component, Event: r.Event, Resource: r.Resource, Detail: r.Detail}
	})
	f.Reactions = reactions
	return f, func() { stopReactions(); stopWrites() }
}

// writeOf is what kube-apiserver did with a write, as the write path shows it.
func writeOf(w kube.Write) writepath.Write {
	out := writepath.Write{
		Received: w.Received, Duration: w.Duration, Verb: w.Verb, Resource: w.Resource,
		Namespace: w.Namespace, Name: w.Name, User: w.User, Groups: w.Groups,
		Authentication: w.Authentication, Decision: w.Decision, Reason: w.Reason,
		Key: w.Key, Encoding: w.Encoding, Revision: w.Revision, Code: w.Code,
	}
	for _, a := range w.Admission {
		out.Admission = append(out.Admission, writepath.Admission{Plugin: a.Plugin, Phase: a.Phase, Duration: a.Duration, Mutated: a.Mutated, Refusal: a.Refusal})
	}
	out.Webhooks = w.Webhooks
	out.RefusedAt, out.Why = w.Refused()
	return out
}

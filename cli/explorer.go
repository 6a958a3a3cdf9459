package cli

import (
	"context"
	"fmt"

	"github.com/etcdscope/etcdscope/cli/cmdutil"
	"github.com/etcdscope/etcdscope/decode/table"
	"github.com/etcdscope/etcdscope/demo"
	"github.com/etcdscope/etcdscope/embedded/controlplane"
	"github.com/etcdscope/etcdscope/embedded/fanout"
	"github.com/etcdscope/etcdscope/embedded/kube"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/etcdview/record"
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
	// bundled starts the bundled cluster even when one runs or the node's
	// etcd was found.
	bundled bool
	// record is the recording the explorer writes while it runs; "" for
	// none.
	record string
}

// explorer builds the UI's options for a source, the first one and each
// one :ctx switches to. The bundled cluster it starts runs until it quits.
type explorer struct {
	conn    *cmdutil.ConnFlags
	flags   explorerFlags
	profile demo.Profile
	// memoryLimit is the bundled cluster's Go memory limit (--memory-limit).
	memoryLimit int64
	// started is the bundled cluster this explorer started, nil before;
	// stop stops it.
	started *startedBundled
}

// startedBundled is the bundled control plane the explorer runs, and the
// source that reads it.
type startedBundled struct {
	cp   *controlplane.ControlPlane
	src  etcdview.Source
	stop func()
}

// runExplorer opens the source the flags name and shows it in the TUI.
func runExplorer(ctx context.Context, conn *cmdutil.ConnFlags, flags explorerFlags) error {
	if err := cmdutil.CheckRev("rev", flags.rev); err != nil {
		return err
	}
	if _, err := conn.Kind(); err != nil {
		return err
	}
	var err error
	if other := conn.OtherSource(); flags.bundled && other != "" {
		return fmt.Errorf("--bundled starts the bundled cluster: drop %s", other)
	}
	conn.StartBundled = flags.bundled
	ex := &explorer{conn: conn, flags: flags}
	if ex.profile, err = demo.ParseProfile(flags.demo); err != nil {
		return err
	}
	if ex.memoryLimit, err = flags.limit(ex.profile); err != nil {
		return err
	}
	t, err := conn.Target(ctx)
	if err != nil {
		return err
	}
	if flags.record != "" && t.Kind == cmdutil.FileSource {
		return fmt.Errorf("--record records a live etcd or kine; %s is a file already: drop --record", t.Description)
	}
	conn.Say(t)
	opts, closeFn, err := ex.open(ctx, t)
	if err != nil {
		return err
	}
	defer ex.close()
	defer closeFn()
	name := initialName(conn, t)
	opts.Clusters = &clusterList{ex: ex, initial: t, current: name}
	// The UI's watch and reads end with ctx, before the source closes.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if flags.record != "" {
		stop, err := recordBeside(ctx, flags.record, name, &opts)
		if err != nil {
			return err
		}
		defer stop()
	}
	return ui.Run(ctx, opts)
}

// recordBeside records the explorer's first source, the cluster :ctx
// names name, into path while the explorer runs, whichever cluster it
// shows (that source stays open until the explorer ends), as etcdscope
// record does with no PREFIX (every key), so that either resumes the
// other's file. Its failure is the UI's to show: the terminal is the UI's.
// stop ends it after its last commit.
func recordBeside(ctx context.Context, path, name string, opts *ui.Options) (stop func(), err error) {
	f, err := record.Open(path, "")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	done, ended := make(chan error, 1), make(chan struct{})
	src := opts.Source
	go func() {
		defer close(ended)
		done <- f.Run(ctx, src, record.Options{})
	}()
	opts.Recording = &ui.Recording{File: path, Cluster: name, Done: done}
	return func() {
		cancel()
		<-ended
		f.Close()
	}, nil
}

// open builds the UI's options for t, starting the bundled cluster when t
// is none found. closeFn releases what open opened.
func (ex *explorer) open(ctx context.Context, t *cmdutil.Target) (opts ui.Options, closeFn func(), err error) {
	dec, err := ex.conn.Decoding.DecoderFor(t)
	if err != nil {
		return opts, nil, err
	}
	opts = ui.Options{TailBuffer: ex.flags.tailBuffer, Timeout: ex.conn.CommandTimeout, Decoder: dec, Rev: ex.flags.rev}
	if t.Kind == cmdutil.BundledSource {
		if closeFn, err = ex.openBundled(ctx, &opts); err != nil {
			return opts, nil, err
		}
	} else {
		src, closeSrc, err := t.Open(ctx)
		if err != nil {
			return opts, nil, err
		}
		opts.Source, closeFn = src, closeSrc
		opts.Description, opts.Export = t.Description, t.Export
		opts.MembersOff = "k and r stop and restart members of the bundled cluster only: etcdscope never writes to a live etcd"
		opts.WritePath.Note = "the write path shows in bundled mode, where etcdscope runs the API server"
		switch {
		case t.Kind == cmdutil.FileSource:
			// kine's file says how fresh it is (etcdview.KineFile), after
			// what found it on the node.
			if d, ok := src.(interface{ Description() string }); ok {
				opts.Description = d.Description()
				if t.Found != nil {
					opts.Description = t.Description + ": " + opts.Description
				}
			}
			opts.MembersOff = "an offline data file has no members to stop or restart"
		case t.Bundled != nil:
			by := fmt.Sprintf("pid %d (%s)", t.Bundled.PID, t.Bundled.By)
			opts.MembersOff = "k and r stop and restart members of the bundled cluster this explorer runs; this one runs in " + by
			opts.WritePath.Note = "the write path shows in the explorer that runs the API server; this cluster's runs in " + by
		}
	}
	// The tree's leaf levels print their resource's columns, a custom
	// resource's from its CRD as of the level's revision, as get does.
	src := opts.Source
	opts.Resolve = func(ctx context.Context, name string, rev int64) (*table.Resource, error) {
		r, _, err := resource.Resolve(ctx, src, dec, name, rev)
		return r, err
	}
	return opts, closeFn, nil
}

// openBundled fills opts for the bundled cluster this explorer runs,
// starting it the first time; closeFn ends the write path's feed, and the
// cluster runs on until the explorer quits (close).
func (ex *explorer) openBundled(ctx context.Context, opts *ui.Options) (closeFn func(), err error) {
	if ex.started == nil {
		cp, src, closeSrc, err := cmdutil.OpenBundled(ctx, ex.conn, controlplane.Options{
			APIServer: true, Demo: ex.profile, Nodes: ex.flags.demoNodes, CompactionInterval: ex.flags.compactionFor(ex.profile),
			EncryptionConfig: ex.conn.Decoding.EncryptionConfig, CaptureStderr: true, Announce: "the etcdscope explorer",
			MemoryLimit: ex.memoryLimit, HeapProfiles: ex.flags.heapProfiles,
		}, ex.flags.members)
		if err != nil {
			return nil, err
		}
		ex.started = &startedBundled{cp: cp, src: src, stop: closeSrc}
	}
	cp := ex.started.cp
	var stopFeed func()
	opts.WritePath, stopFeed = writePathFeed(cp)
	opts.Source = ex.started.src
	opts.Description = fmt.Sprintf("bundled %d-member cluster in %s", len(cp.Cluster().Members()), cp.Cluster().DataDir())
	opts.Export = append(cmdutil.ExportVars(cp.Cluster().Endpoints(), cp.Cluster().TLS()), "KUBECONFIG="+cmdutil.ShellQuote(cp.APIServer().Kubeconfig))
	opts.Members = cp
	opts.Errors = cp.Errors()
	opts.ControlPlaneReady = cp.Ready()
	return stopFeed, nil
}

// close stops the bundled cluster the explorer started, if it did.
func (ex *explorer) close() {
	if ex.started != nil {
		ex.started.stop()
	}
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

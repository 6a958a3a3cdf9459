package cli

import (
	"fmt"
	"time"

	"github.com/etcdscope/etcdscope/cli/cmdutil"
	"github.com/etcdscope/etcdscope/demo"
	"github.com/etcdscope/etcdscope/embedded/controlplane"
	"github.com/spf13/cobra"
)

func newServeCmd(conn *cmdutil.ConnFlags) *cobra.Command {
	var opts controlplane.Options
	var bundled bundledFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the bundled etcd cluster headless until interrupted",
		Long: `serve starts the bundled etcd cluster on free loopback ports, prints a line to
paste into a shell so that etcdctl (and etcdscope) reach it, and runs until
SIGINT or SIGTERM. Data lives in --data-dir, kept on exit, or in a temporary
directory removed on exit. etcd serves TLS and takes only clients with the
certificate in the data dir (tls/), which the line names; the data dir must
be yours and not writable by others.

With --apiserver it also runs Kubernetes' own control plane in front of the
cluster, in this process: kube-apiserver on a free loopback port,
kube-controller-manager and kube-scheduler. It writes a kubeconfig with an
admin and a read-only viewer user into the data dir, and adds KUBECONFIG to
the line, so that kubectl reaches it too. --demo adds the simulated kubelets
and add-ons and a scripted load (calm or busy). What fails while it serves
is printed to stderr, and it serves on.`,
		Args:        cobra.NoArgs,
		Annotations: map[string]string{stopsOnSignal: "yes"},
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := conn.Kind()
			if err != nil {
				return err
			}
			if other := conn.OtherSource(); other != "" {
				return fmt.Errorf("serve runs the bundled cluster: drop %s", other)
			}
			opts.Cluster.DataDir, opts.Cluster.Members = conn.DataDir, bundled.members
			opts.Nodes = bundled.demoNodes
			opts.EncryptionConfig, opts.HeapProfiles = conn.Decoding.EncryptionConfig, bundled.heapProfiles
			if opts.Demo, err = demo.ParseProfile(bundled.demo); err != nil {
				return err
			}
			opts.CompactionInterval = bundled.compactionFor(opts.Demo)
			if opts.MemoryLimit, err = bundled.limit(opts.Demo); err != nil {
				return err
			}
			if opts.Demo != demo.Off && !opts.APIServer {
				return fmt.Errorf("--demo=%s runs on the control plane: add --apiserver", bundled.demo)
			}
			opts.CaptureStderr = opts.APIServer
			opts.Announce = "etcdscope serve"
			return serve(cmd, opts)
		},
	}
	// TLS is always on; --tls stays accepted so that scripts written for it
	// keep running, and says so.
	cmd.Flags().Bool("tls", false, "")
	cmd.Flags().MarkDeprecated("tls", "TLS is always on: the printed line names the CA, client certificate and key in the data dir")
	conn.Decoding.RegisterEncryptionConfig(cmd.Flags())
	cmd.Flags().BoolVar(&opts.APIServer, "apiserver", false, "also run Kubernetes' control plane (kube-apiserver, kube-controller-manager, kube-scheduler) and write a kubeconfig for it into the data dir")
	bundled.register(cmd.Flags(), bundledUsage{
		demo:       demo.Off,
		members:    "etcd members to run (default 3, or as many as --data-dir holds)",
		load:       "with --apiserver: the simulated kubelets' and add-ons' scripted load, calm, busy, or off (no simulated components)",
		demoNodes:  "with --demo: nodes (kubelets) to simulate",
		compaction: "with --apiserver: how often kube-apiserver compacts etcd's history (its --etcd-compaction-interval); 0 turns it off",
	})
	return cmd
}

func serve(cmd *cobra.Command, opts controlplane.Options) error {
	ctx := cmd.Context()
	cp, err := controlplane.Start(ctx, opts)
	if err != nil {
		return err
	}
	defer cp.Close()
	c, api := cp.Cluster(), cp.APIServer()
	fmt.Fprintf(cmd.ErrOrStderr(), "etcdscope: serving a %d-member etcd cluster, data in %s, etcd logs in %s; Ctrl-C stops it\n",
		len(c.Members()), c.DataDir(), c.LogPath())
	line := cmdutil.ExportLine(c.Endpoints(), c.TLS())
	if opts.APIServer {
		// The line is for scripts: once it is out, kubectl works.
		started := time.Now()
		select {
		case <-cp.Ready():
		case err := <-cp.Errors():
			return err
		case <-ctx.Done():
			return cp.Close()
		}
		line += " KUBECONFIG=" + cmdutil.ShellQuote(api.Kubeconfig)
		fmt.Fprintf(cmd.ErrOrStderr(), "etcdscope: kube-apiserver at %s ready (/readyz) after %.1fs, kubeconfig %s, control plane logs in %s\n",
			api.URL, time.Since(started).Seconds(), api.Kubeconfig, api.Log)
	}
	fmt.Fprintln(cmd.OutOrStdout(), line)
	// What fails while it serves is said, and it serves on: etcd may
	// still be what the user came for.
	for failures, ep := cp.Errors(), cmdutil.PrinterFor(cmd).EP; ctx.Err() == nil; {
		select {
		case err := <-failures:
			fmt.Fprintln(cmd.ErrOrStderr(), ep.Text("etcdscope: "+err.Error()))
		case <-ctx.Done():
		}
	}
	fmt.Fprintln(cmd.ErrOrStderr(), "etcdscope: stopping")
	return cp.Close()
}

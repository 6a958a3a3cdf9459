package main

import (
	"fmt"
	"strings"

	"github.com/etcdscope/etcdscope/embedded"
	"github.com/spf13/cobra"
)

func newServeCmd(conn *connFlags) *cobra.Command {
	var opts embedded.Options
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the bundled etcd cluster headless until interrupted",
		Long: `serve starts the bundled etcd cluster on free loopback ports, prints a line to
paste into a shell so that etcdctl (and etcdscope) reach it, and runs until
SIGINT or SIGTERM. Data lives in --data-dir, kept on exit, or in a temporary
directory removed on exit.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if k, _ := conn.kind(); k != bundledSource {
				return fmt.Errorf("serve runs the bundled cluster: drop --endpoints and --db")
			}
			opts.DataDir = conn.dataDir
			return serve(cmd, opts)
		},
	}
	cmd.Flags().IntVar(&opts.Members, "members", 0, "etcd members to run (default 3, or as many as --data-dir holds)")
	cmd.Flags().BoolVar(&opts.TLS, "tls", false, "serve clients over TLS with a throwaway CA and client certificate written to the data dir")
	return cmd
}

func serve(cmd *cobra.Command, opts embedded.Options) error {
	ctx := cmd.Context()
	c, err := embedded.Start(ctx, opts)
	if err != nil {
		return err
	}
	defer c.Close()
	fmt.Fprintln(cmd.OutOrStdout(), exportLine(c))
	fmt.Fprintf(cmd.ErrOrStderr(), "etcdscope: serving a %d-member etcd cluster, data in %s, etcd logs in %s; Ctrl-C stops it\n",
		len(c.Members()), c.DataDir(), c.LogPath())
	<-ctx.Done()
	fmt.Fprintln(cmd.ErrOrStderr(), "etcdscope: stopping")
	return c.Close()
}

// exportLine is the shell line that points etcdctl at the cluster.
func exportLine(c *embedded.Cluster) string {
	vars := []string{"ETCDCTL_ENDPOINTS=" + strings.Join(c.Endpoints(), ",")}
	if f := c.TLS(); f != nil {
		vars = append(vars, "ETCDCTL_CACERT="+shellQuote(f.CA), "ETCDCTL_CERT="+shellQuote(f.Cert), "ETCDCTL_KEY="+shellQuote(f.Key))
	}
	return "export " + strings.Join(vars, " ")
}

// shellQuote leaves plain paths alone and single-quotes the rest, so that a
// --data-dir with spaces still pastes into a shell.
func shellQuote(s string) string {
	if strings.IndexFunc(s, func(r rune) bool {
		return !(r == '/' || r == '.' || r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/etcdscope/etcdscope/embedded"
	"github.com/etcdscope/etcdscope/embedded/apiserver"
	"github.com/spf13/cobra"
)

func newServeCmd(conn *connFlags) *cobra.Command {
	var opts embedded.Options
	var withAPIServer bool
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the bundled etcd cluster headless until interrupted",
		Long: `serve starts the bundled etcd cluster on free loopback ports, prints a line to
paste into a shell so that etcdctl (and etcdscope) reach it, and runs until
SIGINT or SIGTERM. Data lives in --data-dir, kept on exit, or in a temporary
directory removed on exit.

With --apiserver it also runs the built-in Kubernetes API server in front of
the cluster, on a free loopback port, writes a kubeconfig with an admin and a
read-only viewer user into the data dir, and adds KUBECONFIG to the line, so
that kubectl reaches it too.`,
		Args:        cobra.NoArgs,
		Annotations: map[string]string{stopsOnSignal: "yes"},
		RunE: func(cmd *cobra.Command, _ []string) error {
			k, err := conn.kind()
			if err != nil {
				return err
			}
			if k != bundledSource {
				return fmt.Errorf("serve runs the bundled cluster: drop --endpoints and --db")
			}
			opts.DataDir = conn.dataDir
			return serve(cmd, opts, withAPIServer)
		},
	}
	cmd.Flags().IntVar(&opts.Members, "members", 0, "etcd members to run (default 3, or as many as --data-dir holds)")
	cmd.Flags().BoolVar(&opts.TLS, "tls", false, "serve clients over TLS with a throwaway CA and client certificate written to the data dir")
	cmd.Flags().BoolVar(&withAPIServer, "apiserver", false, "also run the built-in Kubernetes API server and write a kubeconfig for it into the data dir")
	return cmd
}

func serve(cmd *cobra.Command, opts embedded.Options, withAPIServer bool) error {
	ctx := cmd.Context()
	c, err := embedded.Start(ctx, opts)
	if err != nil {
		return err
	}
	defer c.Close()
	line := exportLine(c)
	var api *bundledAPIServer
	if withAPIServer {
		if api, err = startAPIServer(ctx, c, nil); err != nil {
			return err
		}
		defer api.Close()
		line += " KUBECONFIG=" + shellQuote(api.kubeconfig)
	}
	fmt.Fprintln(cmd.OutOrStdout(), line)
	fmt.Fprintf(cmd.ErrOrStderr(), "etcdscope: serving a %d-member etcd cluster, data in %s, etcd logs in %s; Ctrl-C stops it\n",
		len(c.Members()), c.DataDir(), c.LogPath())
	if api != nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "etcdscope: Kubernetes API server at %s, kubeconfig %s, logs in %s\n", api.URL(), api.kubeconfig, api.log.Name())
	}
	<-ctx.Done()
	fmt.Fprintln(cmd.ErrOrStderr(), "etcdscope: stopping")
	if api != nil {
		if err := api.Close(); err != nil {
			return err
		}
	}
	return c.Close()
}

// bundledAPIServer is the built-in API server in front of a bundled
// cluster, with its kubeconfig and log file in the cluster's data dir.
type bundledAPIServer struct {
	*apiserver.Server
	kubeconfig string
	log        *os.File
}

// startAPIServer starts the API server on the bundled cluster with the
// tokens given (none: its default admin and viewer), and writes its
// kubeconfig and log into the data dir.
func startAPIServer(ctx context.Context, c *embedded.Cluster, tokens []apiserver.Token) (*bundledAPIServer, error) {
	cfg, err := c.ClientConfig()
	if err != nil {
		return nil, err
	}
	log, err := os.OpenFile(filepath.Join(c.DataDir(), "apiserver.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	s, err := apiserver.Start(ctx, apiserver.Options{Etcd: cfg, Log: log, Tokens: tokens})
	if err != nil {
		log.Close()
		return nil, fmt.Errorf("start the API server: %w", err)
	}
	b := &bundledAPIServer{Server: s, kubeconfig: filepath.Join(c.DataDir(), "kubeconfig"), log: log}
	if err := s.WriteKubeconfig(b.kubeconfig); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

// Close stops the server and closes its log; it may be called twice.
func (b *bundledAPIServer) Close() error {
	err := b.Server.Close()
	b.log.Close()
	return err
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

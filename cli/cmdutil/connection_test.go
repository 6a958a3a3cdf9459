package cmdutil

import (
	"context"
	"fmt"
	"github.com/etcdscope/etcdscope/cli/internal/clitest"
	"strings"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/embedded/etcdtest"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/spf13/cobra"
)

// parseConn runs args and the environment through the connection flags as
// the root command registers them for every subcommand.
func parseConn(t *testing.T, args []string, env map[string]string) *ConnFlags {
	t.Helper()
	for k, v := range env {
		t.Setenv(k, v)
	}
	root := &cobra.Command{Use: "etcdscope"}
	conn := PersistentConn(root)
	if err := root.ParseFlags(args); err != nil {
		t.Fatal(err)
	}
	if err := root.PersistentPreRunE(root, nil); err != nil {
		t.Fatal(err)
	}
	return conn
}

const (
	viewer   = etcdtest.ReadOnlyUser
	viewerPW = etcdtest.ReadOnlyPassword
)

func TestConnectionFlagsReachExternalEtcd(t *testing.T) {
	e := etcdtest.Start(t, etcdtest.Options{TLS: true})
	t.Logf("external %s", e.Version)
	cli := e.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := cli.Put(ctx, "/registry/x", "visible"); err != nil {
		t.Fatal(err)
	}
	etcdtest.EnableReadOnlyUser(t, cli)
	refused := fmt.Sprintf("127.0.0.1:%d", clitest.ClosedPort(t))
	tlsFlags := []string{"--endpoints", e.Endpoint, "--cacert", e.TLS.CA, "--cert", e.TLS.Cert, "--key", e.TLS.Key}
	tlsEnv := map[string]string{
		"ETCDCTL_ENDPOINTS": e.Endpoint, "ETCDCTL_CACERT": e.TLS.CA,
		"ETCDCTL_CERT": e.TLS.Cert, "ETCDCTL_KEY": e.TLS.Key,
	}
	with := func(m map[string]string, kv ...string) map[string]string {
		out := map[string]string{}
		for k, v := range m {
			out[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		wantErr string
	}{
		{"flags", append(tlsFlags, "--user", viewer+":"+viewerPW), nil, ""},
		{"password flag", append(tlsFlags, "--user", viewer, "--password", viewerPW), nil, ""},
		{"environment", nil, with(tlsEnv, "ETCDCTL_USER", viewer+":"+viewerPW), ""},
		{"environment password", nil, with(tlsEnv, "ETCDCTL_USER", viewer, "ETCDCTL_PASSWORD", viewerPW), ""},
		{"flags win over environment",
			append(tlsFlags, "--user", viewer+":"+viewerPW),
			with(tlsEnv, "ETCDCTL_ENDPOINTS", refused, "ETCDCTL_USER", viewer+":wrong"), ""},
		{"insecure skip verify", []string{"--endpoints", e.Endpoint, "--cert", e.TLS.Cert, "--key", e.TLS.Key,
			"--insecure-skip-tls-verify", "--user", viewer + ":" + viewerPW}, nil, ""},
		{"wrong password", append(tlsFlags, "--user", viewer+":nope"), nil, "authentication failed"},
		{"no CA", []string{"--endpoints", e.Endpoint, "--cert", e.TLS.Cert, "--key", e.TLS.Key, "--user", viewer + ":" + viewerPW}, nil, "certificate"},
		{"cert without key", []string{"--endpoints", e.Endpoint, "--cert", e.TLS.Cert}, nil, "--cert and --key go together"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			conn := parseConn(t, tc.args, tc.env)
			cfg, err := conn.etcdConfig()
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			cli, err := etcdview.Dial(ctx, cfg)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("dial error %v, want one mentioning %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("dial: %v", err)
			}
			defer cli.Close()
			resp, err := cli.Get(ctx, "/registry/x")
			if err != nil {
				t.Fatalf("read as viewer: %v", err)
			}
			if len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != "visible" {
				t.Errorf("read %v, want the value written before auth was enabled", resp.Kvs)
			}
		})
	}
}

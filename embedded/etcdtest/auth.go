package etcdtest

import (
	"context"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/decode"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// ReadOnlyUser and ReadOnlyPassword are the user EnableReadOnlyUser makes.
const (
	ReadOnlyUser     = "viewer"
	ReadOnlyPassword = "viewerpw"
)

// EnableReadOnlyUser gives etcd a root user (password "rootpw") and a
// ReadOnlyUser whose only role reads the /registry prefix and
// compact_rev_key, as a read-only Kubernetes operator would be set up, then
// turns authentication on.
func EnableReadOnlyUser(t testing.TB, cli *clientv3.Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	read := clientv3.PermissionType(clientv3.PermRead)
	steps := []func() error{
		func() error { _, err := cli.RoleAdd(ctx, "root"); return err },
		func() error { _, err := cli.UserAdd(ctx, "root", "rootpw"); return err },
		func() error { _, err := cli.UserGrantRole(ctx, "root", "root"); return err },
		func() error { _, err := cli.RoleAdd(ctx, "registry-reader"); return err },
		func() error {
			_, err := cli.RoleGrantPermission(ctx, "registry-reader", decode.DefaultPrefix, clientv3.GetPrefixRangeEnd(decode.DefaultPrefix), read)
			return err
		},
		func() error {
			_, err := cli.RoleGrantPermission(ctx, "registry-reader", "compact_rev_key", "", read)
			return err
		},
		func() error { _, err := cli.UserAdd(ctx, ReadOnlyUser, ReadOnlyPassword); return err },
		func() error { _, err := cli.UserGrantRole(ctx, ReadOnlyUser, "registry-reader"); return err },
		func() error { _, err := cli.AuthEnable(ctx); return err },
	}
	for i, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("auth setup step %d: %v", i, err)
		}
	}
}

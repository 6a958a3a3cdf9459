package etcdtest

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

func TestKineServesTheEtcdAPIOverSQLiteAndKeepsItAcrossARestart(t *testing.T) {
	for _, opts := range []KineOptions{{TLS: true}, {Socket: true}} {
		k := StartKine(t, opts)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cli := k.Client(t)
		put, err := cli.Put(ctx, "/registry/configmaps/default/x", "y")
		if err != nil {
			t.Fatalf("put (%+v): %v", opts, err)
		}
		if _, err := cli.Put(ctx, "/registry/configmaps/default/gone", "z"); err != nil {
			t.Fatal(err)
		}
		if err := Delete(ctx, cli, "/registry/configmaps/default/gone"); err != nil {
			t.Fatalf("delete: %v", err)
		}
		if err := k.Restart(); err != nil {
			t.Fatal(err)
		}
		got, err := cli.Get(ctx, "/registry/configmaps/", clientv3.WithPrefix())
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Kvs) != 1 || string(got.Kvs[0].Key) != "/registry/configmaps/default/x" || got.Kvs[0].ModRevision != put.Header.Revision {
			t.Errorf("after a delete and a restart, /registry/configmaps/ reads %v; want only x at revision %d", got.Kvs, put.Header.Revision)
		}
		if st, err := os.Stat(k.DB); err != nil || st.Size() == 0 {
			t.Errorf("state.db: %v", err)
		}
		if want := map[bool]string{false: "https://", true: "unix://"}[opts.Socket]; !strings.HasPrefix(k.Endpoint, want) {
			t.Errorf("endpoint %s, want %s...", k.Endpoint, want)
		}
		t.Logf("%s at %s", k.Version, k.Endpoint)
	}
}

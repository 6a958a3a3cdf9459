package etcdviewtest

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// SaveSnapshot writes the data of the etcd m is a client of to a file in
// the test's temporary directory, as `etcdctl snapshot save` does, and
// returns its path. etcd commits its backend first: its DB size and size in
// use hold still after, while nothing writes.
func SaveSnapshot(t testing.TB, m clientv3.Maintenance) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rc, err := m.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	path := filepath.Join(t.TempDir(), "snapshot.db")
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, rc); err != nil {
		out.Close()
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

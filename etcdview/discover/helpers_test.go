package discover_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/embedded/etcdtest"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/etcdview/discover"
)

// tlsEtcd is a real etcd serving TLS with client-certificate auth, on a
// loopback port picked at run time: what every layout's connection is
// checked against.
func tlsEtcd(t *testing.T) *etcdtest.External {
	t.Helper()
	return etcdtest.StartVersion(t, "3.6", etcdtest.Options{TLS: true})
}

// place copies the files of the etcd's TLS to where a layout keeps them,
// under root; to maps each of the etcd's files (CA, client cert and key) to
// the path the node names.
func place(t *testing.T, root string, to map[string]string) {
	t.Helper()
	for src, dst := range to {
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		write(t, root, dst, data)
	}
}

// write puts a file at path, as the node names it, under root, with the
// modes control-plane nodes give their key material.
func write(t *testing.T, root, path string, data []byte) {
	t.Helper()
	p := filepath.Join(root, path)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// find is discover.Find, failing the test on an error.
func find(t *testing.T, root string) discover.Found {
	t.Helper()
	f, err := discover.Find(root)
	if err != nil {
		t.Fatalf("Find(%s): %v", root, err)
	}
	// plain has no String method, so that %+v shows every field.
	type plain discover.Found
	t.Logf("found %s: %+v", f, plain(f))
	return f
}

// readsThrough puts a key into e and reads it back through the
// connection found, as the commands will.
func readsThrough(t *testing.T, e *etcdtest.External, f discover.Found) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	key, value := f.Prefix+"/configmaps/default/discovered", "through "+string(f.Layout)
	if _, err := e.Client(t).Put(ctx, key, value); err != nil {
		t.Fatal(err)
	}
	l, err := etcdview.Connect(ctx, f.Config())
	if err != nil {
		t.Fatalf("connect with what was found (%+v): %v", f.Config(), err)
	}
	defer l.Close()
	kv, err := l.Get(ctx, key, 0)
	if err != nil {
		t.Fatalf("get %s through %s: %v", key, f, err)
	}
	if string(kv.Value) != value {
		t.Errorf("get %s through %s = %q, want %q", key, f, kv.Value, value)
	}
}

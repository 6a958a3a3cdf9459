package discover_test

import (
	"net"
	"path/filepath"
	"testing"

	"github.com/etcdscope/etcdscope/etcdview/discover"
	"github.com/google/go-cmp/cmp"
)

const (
	k3sServer     = "/var/lib/rancher/k3s/server"
	k3sEtcdTLS    = k3sServer + "/tls/etcd"
	k3sEncryption = k3sServer + "/cred/encryption-config.json"
)

// TestFindK3sEmbeddedEtcdConnects: k3s with embedded etcd writes etcd's
// config file in db/etcd/config; the client pair its kube-apiserver uses
// is beside the CA that file names.
func TestFindK3sEmbeddedEtcdConnects(t *testing.T) {
	e := tlsEtcd(t)
	root := t.TempDir()
	write(t, root, k3sServer+"/db/etcd/config", etcdConfig(e, k3sEtcdTLS, k3sServer+"/db/etcd"))
	// db/etcd/name is there on every k3s server, and a SQLite file left
	// by the migration to etcd: neither makes it a kine node.
	write(t, root, k3sServer+"/db/etcd/name", []byte("node-1d2c3b4a"))
	write(t, root, k3sServer+"/db/state.db.migrated", []byte("SQLite format 3\x00"))
	place(t, root, map[string]string{
		e.TLS.CA: k3sEtcdTLS + "/server-ca.crt", e.TLS.Cert: k3sEtcdTLS + "/client.crt", e.TLS.Key: k3sEtcdTLS + "/client.key",
	})
	write(t, root, k3sEncryption, []byte(`{"kind":"EncryptionConfiguration","apiVersion":"apiserver.config.k8s.io/v1"}`))
	f := find(t, root)
	want := discover.Found{
		Layout: discover.K3sEtcd, What: "embedded etcd of this k3s node", From: k3sServer + "/db/etcd/config",
		Endpoints: []string{e.Endpoint},
		CACert:    filepath.Join(root, k3sEtcdTLS, "server-ca.crt"),
		Cert:      filepath.Join(root, k3sEtcdTLS, "client.crt"),
		Key:       filepath.Join(root, k3sEtcdTLS, "client.key"),
		Prefix:    "/registry", EncryptionConfig: filepath.Join(root, k3sEncryption),
	}
	if d := cmp.Diff(want, f); d != "" {
		t.Errorf("Find (-want +got):\n%s", d)
	}
	readsThrough(t, e, f)
}

// TestFindK3sKine: k3s' default datastore is kine over SQLite. With k3s
// stopped there is only the file; while it runs, kine's socket is there
// too, and is what is read live (over TLS with k3s' etcd client pair when
// it has one). The socket here is a listener of the test's, not kine: a
// test against a real kine is the lead's harness's (etcdtest.StartKine).
func TestFindK3sKine(t *testing.T) {
	root := t.TempDir()
	db := filepath.Join(root, k3sServer, "db/state.db")
	write(t, root, k3sServer+"/db/state.db", []byte("SQLite format 3\x00"))
	write(t, root, k3sServer+"/db/etcd/name", []byte("node-1d2c3b4a"))
	stopped := find(t, root)
	want := discover.Found{
		Layout: discover.K3sKine, What: "SQLite datastore of this k3s node", From: k3sServer + "/db/state.db",
		Prefix: "/registry", DB: db,
	}
	if d := cmp.Diff(want, stopped); d != "" {
		t.Errorf("Find with k3s stopped (-want +got):\n%s", d)
	}

	sock := filepath.Join(root, k3sServer, "kine.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	running := find(t, root)
	want.What, want.From, want.Socket, want.Endpoints = "kine of this k3s node", k3sServer+"/kine.sock", sock, []string{"unix://" + sock}
	if d := cmp.Diff(want, running); d != "" {
		t.Errorf("Find with k3s running (-want +got):\n%s", d)
	}

	for _, f := range []string{"server-ca.crt", "client.crt", "client.key"} {
		write(t, root, k3sEtcdTLS+"/"+f, []byte("PEM"))
	}
	write(t, root, k3sEncryption, []byte("{}"))
	withTLS := find(t, root)
	want.Endpoints = []string{"unixs://" + sock}
	want.CACert, want.Cert, want.Key = filepath.Join(root, k3sEtcdTLS, "server-ca.crt"), filepath.Join(root, k3sEtcdTLS, "client.crt"), filepath.Join(root, k3sEtcdTLS, "client.key")
	want.EncryptionConfig = filepath.Join(root, k3sEncryption)
	if d := cmp.Diff(want, withTLS); d != "" {
		t.Errorf("Find with k3s' etcd client pair (-want +got):\n%s", d)
	}
}

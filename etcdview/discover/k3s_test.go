package discover_test

import (
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/etcdscope/etcdscope/embedded/etcdtest"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/etcdview/discover"
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
	placePair(t, root, k3sEtcdTLS, e)
	write(t, root, k3sEncryption, []byte(`{"kind":"EncryptionConfiguration","apiVersion":"apiserver.config.k8s.io/v1"}`))
	f := findAsWanted(t, root, discover.Found{
		Layout: discover.K3sEtcd, What: "embedded etcd of this k3s node", From: k3sServer + "/db/etcd/config",
		Endpoints: []string{e.Endpoint},
		CACert:    k3sEtcdTLS + "/server-ca.crt", Cert: k3sEtcdTLS + "/client.crt", Key: k3sEtcdTLS + "/client.key",
		Prefix: "/registry", EncryptionConfig: k3sEncryption,
	})
	readsThrough(t, e, f)
}

// TestFindK3sKine: k3s' default datastore is kine over SQLite. With k3s
// stopped there is only the file; while it runs, kine's socket is there
// too, and is what is read live, as plain gRPC even where tls/etcd holds
// certificates (they are for an etcd, not for kine). The socket here is a
// listener of the test's, not kine: a test against a real kine needs the
// kine harness (etcdtest.StartKine), which is not on this branch.
func TestFindK3sKine(t *testing.T) {
	root := t.TempDir()
	const db, sock = k3sServer + "/db/state.db", k3sServer + "/kine.sock"
	write(t, root, db, []byte("SQLite format 3\x00"))
	write(t, root, k3sServer+"/db/etcd/name", []byte("node-1d2c3b4a"))
	t.Log("k3s stopped")
	want := discover.Found{Layout: discover.K3sKine, What: "SQLite datastore of this k3s node", From: db, Prefix: "/registry", DB: db}
	findAsWanted(t, root, want)

	t.Log("k3s killed: its kine.sock is left, and nothing listens on it")
	stale, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(root, sock), Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	stale.SetUnlinkOnClose(false)
	stale.Close()
	left := want
	left.What += " (kine.sock is left from a k3s that stopped)"
	findAsWanted(t, root, left)
	if err := os.Remove(filepath.Join(root, sock)); err != nil {
		t.Fatal(err)
	}

	t.Log("k3s running")
	l, err := net.Listen("unix", filepath.Join(root, sock))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	want.What, want.From, want.Socket = "kine of this k3s node", sock, sock
	want.Endpoints = []string{"unix://" + filepath.Join(root, sock)}
	findAsWanted(t, root, want)

	t.Log("k3s running, with secrets-encryption and etcd certificates")
	for _, f := range []string{"server-ca.crt", "client.crt", "client.key"} {
		write(t, root, k3sEtcdTLS+"/"+f, []byte("PEM"))
	}
	write(t, root, k3sEncryption, []byte("{}"))
	want.EncryptionConfig = k3sEncryption
	findAsWanted(t, root, want)
}

// TestFindUnderTheConfiguredDataDir: k3s and RKE2 read --data-dir from
// /etc/rancher/NAME/config.yaml and then config.yaml.d/*.yaml in name
// order, the last one winning; their files are under it.
func TestFindUnderTheConfiguredDataDir(t *testing.T) {
	t.Run("k3s", func(t *testing.T) {
		root := t.TempDir()
		write(t, root, "/etc/rancher/k3s/config.yaml", []byte("write-kubeconfig-mode: \"0644\"\ndata-dir: /data/k3s\n"))
		write(t, root, "/etc/rancher/k3s/config.yaml.d/20-disk.yaml", []byte("data-dir: /srv/k3s\n"))
		write(t, root, "/etc/rancher/k3s/config.yaml.d/10-first.yaml", []byte("data-dir: /wrong\n"))
		write(t, root, "/etc/rancher/k3s/config.yaml.d/30-other.yaml", []byte("node-label: [disk=ssd]\n"))
		write(t, root, "/srv/k3s/server/db/state.db", []byte("SQLite format 3\x00"))
		findAsWanted(t, root, discover.Found{
			Layout: discover.K3sKine, What: "SQLite datastore of this k3s node", From: "/srv/k3s/server/db/state.db",
			Prefix: "/registry", DB: "/srv/k3s/server/db/state.db",
		})
	})
	t.Run("RKE2", func(t *testing.T) {
		root := t.TempDir()
		write(t, root, "/etc/rancher/rke2/config.yaml", []byte("data-dir: /opt/rke2\n"))
		writePod(t, root, "/opt/rke2/agent/pod-manifests/kube-apiserver.yaml", rke2Pod("kube-apiserver", []string{"--etcd-servers=https://127.0.0.1:2379"}))
		write(t, root, "/opt/rke2/server/cred/encryption-config.json", []byte("{}"))
		findAsWanted(t, root, discover.Found{
			Layout: discover.RKE2, What: "etcd of this RKE2 node", From: "/opt/rke2/agent/pod-manifests/kube-apiserver.yaml",
			Endpoints: []string{"https://127.0.0.1:2379"}, Prefix: "/registry", EncryptionConfig: "/opt/rke2/server/cred/encryption-config.json",
		})
	})
}

// TestFindK3sKineReadsARealKineLiveThenItsFile: a real kine laid out as
// k3s runs it (socket in server/, file in server/db/) is read live through
// the socket Find names while it runs, and through the file once stopped.
func TestFindK3sKineReadsARealKineLiveThenItsFile(t *testing.T) {
	root := t.TempDir()
	server := filepath.Join(root, k3sServer)
	k := etcdtest.StartKine(t, etcdtest.KineOptions{Socket: true, Dir: server, DB: filepath.Join(server, "db", "state.db")})
	f := find(t, root)
	if f.Layout != discover.K3sKine || len(f.Endpoints) != 1 || f.Endpoints[0] != k.Endpoint {
		t.Fatalf("Find on a running k3s kine = %s %v, want %s at %s", f.Layout, f.Endpoints, discover.K3sKine, k.Endpoint)
	}
	readsThrough(t, k.External, f)

	k.Stop()
	f = find(t, root)
	if len(f.Endpoints) != 0 || f.DB != k.DB {
		t.Fatalf("Find once kine stopped: endpoints %v, db %q; want only the file %s", f.Endpoints, f.DB, k.DB)
	}
	file, err := etcdview.OpenOffline(f.DB, etcdview.FileOptions{NoIndexFile: true})
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	kv, err := file.Get(t.Context(), f.Prefix+"/configmaps/default/discovered", 0)
	if err != nil || string(kv.Value) != "through "+string(discover.K3sKine) {
		t.Errorf("the key written through the socket, read from %s: %v, %v", f.DB, kv, err)
	}
}

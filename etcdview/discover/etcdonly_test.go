package discover_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/etcdscope/etcdscope/embedded/etcdtest"
	"github.com/etcdscope/etcdscope/etcdview/discover"
)

// TestFindEtcdOnlyKubeadmNodeConnects: a node that runs etcd and no
// kube-apiserver (kubeadm's external etcd topology) is found by etcd's own
// manifest, with kubeadm's healthcheck client, the one client pair there.
func TestFindEtcdOnlyKubeadmNodeConnects(t *testing.T) {
	e := tlsEtcd(t)
	root := t.TempDir()
	kubeadmNode(t, root, e, nil)
	if err := os.Remove(filepath.Join(root, kubeadmManifest)); err != nil {
		t.Fatal(err)
	}
	f := findAsWanted(t, root, discover.Found{
		Layout: discover.EtcdOnly, What: "etcd of this etcd-only kubeadm node", From: "/etc/kubernetes/manifests/etcd.yaml",
		Endpoints: []string{e.Endpoint},
		CACert:    "/etc/kubernetes/pki/etcd/ca.crt",
		Cert:      "/etc/kubernetes/pki/etcd/healthcheck-client.crt",
		Key:       "/etc/kubernetes/pki/etcd/healthcheck-client.key",
		Prefix:    "/registry",
	})
	readsThrough(t, e, f)
}

// etcdConfig is an etcd --config-file as k3s writes db/etcd/config (and
// RKE2 the same file of its own), serving clients at the test's etcd and at
// a node address, from TLS files in tlsDir.
func etcdConfig(e *etcdtest.External, tlsDir, dataDir string) []byte {
	return []byte(`advertise-client-urls: https://10.0.0.5:2379
client-transport-security:
  cert-file: ` + tlsDir + `/server-client.crt
  client-cert-auth: true
  key-file: ` + tlsDir + `/server-client.key
  trusted-ca-file: ` + tlsDir + `/server-ca.crt
data-dir: ` + dataDir + `
election-timeout: 5000
experimental-initial-corrupt-check: true
heartbeat-interval: 500
listen-client-http-urls: https://127.0.0.1:2382
listen-client-urls: https://10.0.0.5:2379,` + e.Endpoint + `
listen-metrics-urls: http://127.0.0.1:2381
listen-peer-urls: https://127.0.0.1:2380,https://10.0.0.5:2380
log-outputs:
- stderr
logger: zap
name: node-1d2c3b4a
peer-transport-security:
  cert-file: ` + tlsDir + `/peer-server-client.crt
  client-cert-auth: true
  key-file: ` + tlsDir + `/peer-server-client.key
  trusted-ca-file: ` + tlsDir + `/peer-ca.crt
snapshot-count: 10000
`)
}

// TestFindEtcdOnlyRKE2NodeConnects: RKE2 runs etcd as a static pod whose
// only flag is --config-file; the client side is in that file.
func TestFindEtcdOnlyRKE2NodeConnects(t *testing.T) {
	e := tlsEtcd(t)
	root := t.TempDir()
	const config = "/var/lib/rancher/rke2/server/db/etcd/config"
	writePod(t, root, "/var/lib/rancher/rke2/agent/pod-manifests/etcd.yaml",
		rke2Pod("etcd", []string{"--config-file=" + config}, config, rke2EtcdTLS))
	write(t, root, config, etcdConfig(e, rke2EtcdTLS, "/var/lib/rancher/rke2/server/db/etcd"))
	placePair(t, root, rke2EtcdTLS, e)
	f := findAsWanted(t, root, discover.Found{
		Layout: discover.EtcdOnly, What: "etcd of this etcd-only RKE2 node", From: "/var/lib/rancher/rke2/agent/pod-manifests/etcd.yaml",
		Endpoints: []string{e.Endpoint},
		CACert:    rke2EtcdTLS + "/server-ca.crt", Cert: rke2EtcdTLS + "/client.crt", Key: rke2EtcdTLS + "/client.key",
		Prefix: "/registry",
	})
	readsThrough(t, e, f)
}

// TestFindEtcdOnlyWithoutAClientPairSaysSo: an etcd that asks clients for
// a certificate, with none beside its CA, is an error naming where it
// looked, not a connection that would fail with "bad certificate".
func TestFindEtcdOnlyWithoutAClientPairSaysSo(t *testing.T) {
	e := tlsEtcd(t)
	root := t.TempDir()
	kubeadmNode(t, root, e, nil)
	for _, f := range []string{kubeadmManifest, "/etc/kubernetes/pki/etcd/healthcheck-client.crt"} {
		if err := os.Remove(filepath.Join(root, f)); err != nil {
			t.Fatal(err)
		}
	}
	_, err := discover.Find(root)
	want := root + "/etc/kubernetes/manifests/etcd.yaml's etcd asks clients for a certificate, and there is none beside its CA " +
		root + "/etc/kubernetes/pki/etcd/ca.crt (healthcheck-client.crt, client.crt)"
	if err == nil || err.Error() != want {
		t.Errorf("Find = %v\nwant %s", err, want)
	}
}

// Package discover finds, on a Kubernetes node, the etcd its kube-apiserver
// uses, from the files that already say so: kubeadm's and RKE2's static pod
// manifests, etcd's own manifest on an etcd-only node, k3s' embedded etcd
// config or its kine datastore. It reads the node's files and connects to
// nothing; nothing under the node's root is ever written (`kubectl debug
// node/NAME --profile=sysadmin` mounts it read-write at /host).
package discover

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/etcdscope/etcdscope/etcdview"
)

// Layout is the kind of node the connection was found on.
type Layout string

// The layouts Find knows, in the order it looks for them.
const (
	Kubeadm  Layout = "kubeadm"
	RKE2     Layout = "rke2"
	EtcdOnly Layout = "etcd-only"
	K3sEtcd  Layout = "k3s-etcd"
	K3sKine  Layout = "k3s-kine"
)

// DefaultPrefix is kube-apiserver's --etcd-prefix when its manifest names none.
const DefaultPrefix = "/registry"

// ErrNotFound is Find's answer on a machine with none of the layouts.
var ErrNotFound = errors.New("no etcd found on this node: no kube-apiserver or etcd static pod manifest, no k3s server")

// Found is the connection a node's files describe. Paths are on this
// machine (resolved under the host root); From is as the node names it.
type Found struct {
	Layout Layout
	// What says whose etcd it is, in one line: "etcd of this kubeadm node".
	What string
	// From is the file it was read from, as the node names it.
	From string
	// Endpoints are client URLs as etcdctl takes them; a Unix socket
	// (kine) is unix:// or unixs:// with its path on this machine. Empty
	// for k3s' kine when k3s does not run: only DB is there.
	Endpoints []string
	// CACert, Cert and Key are PEM files; empty when the etcd serves no TLS.
	CACert, Cert, Key string
	// Prefix is kube-apiserver's --etcd-prefix (DefaultPrefix when unset).
	Prefix string
	// EncryptionConfig is kube-apiserver's EncryptionConfiguration file, ""
	// when Secrets are not encrypted at rest.
	EncryptionConfig string
	// DB is k3s' SQLite file (kine's state.db), "" on other layouts.
	DB string
	// Socket is kine's Unix socket when k3s runs (it is then in Endpoints
	// too), "" otherwise.
	Socket string
}

// Config is the live connection to what was found.
func (f Found) Config() etcdview.Config {
	return etcdview.Config{Endpoints: f.Endpoints, CACert: f.CACert, Cert: f.Cert, Key: f.Key}
}

// String is the line the header and stderr show: "etcd of this kubeadm
// node, from /etc/kubernetes/manifests/kube-apiserver.yaml".
func (f Found) String() string {
	return f.What + ", from " + f.From
}

// probe looks for one layout: ok is false when its files are absent, and an
// error means they are there but cannot be used as they are.
type probe func(n node) (f Found, ok bool, err error)

// probes are the layouts in the order they win: kube-apiserver's manifest
// says most (prefix, encryption), etcd's own only where kube-apiserver does
// not run, k3s runs neither as a static pod.
var probes = []probe{
	apiServerProbe(Kubeadm, "/etc/kubernetes/manifests/kube-apiserver.yaml", "etcd of this kubeadm node"),
	apiServerProbe(RKE2, rke2Manifests+"/kube-apiserver.yaml", "etcd of this RKE2 node"),
}

// Find reads the node's files under hostRoot ("" is "/") and says where its
// etcd is. It is ErrNotFound when none of the layouts is there, and an
// error naming the file when one is there but cannot be read (a user who
// is not root on a kubeadm node: run it with sudo) or says too little.
func Find(hostRoot string) (Found, error) {
	n, err := newNode(hostRoot)
	if err != nil {
		return Found{}, err
	}
	for _, p := range probes {
		f, ok, err := p(n)
		if err != nil {
			return Found{}, err
		}
		if ok {
			return f, nil
		}
	}
	if n.root != "/" {
		return Found{}, fmt.Errorf("%w (host root %s)", ErrNotFound, filepath.Clean(n.root))
	}
	return Found{}, ErrNotFound
}

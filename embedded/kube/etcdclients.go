package kube

import (
	"context"
	"strings"
	"sync"
	_ "unsafe" // go:linkname, for kube-apiserver's storage dialer

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/kubernetes"
	"k8s.io/apiserver/pkg/storage"
	etcdfeature "k8s.io/apiserver/pkg/storage/feature"
	"k8s.io/apiserver/pkg/storage/storagebackend"
)

// kube-apiserver's storage dials etcd once for every resource it stores
// (factory.newETCD3Storage calls factory.newETCD3Client), and once more for
// the compactor, the health checks and the database size monitor: 70
// clients here, each with a connection to each of the three members, so 210
// gRPC transports on the client side and 210 on the members' side, all in
// this process. Kubernetes knows (kubernetes/kubernetes#111622; #114458,
// which shared one client, was not merged). One client multiplexes any
// number of requests and watches, so the control plane dials each etcd
// once and hands every caller a client of its own on that one connection.
//
// The dialer is a variable of package factory, unexported; a
// k8s.io/apiserver that renames it fails at link time, not at run time.
//
//go:linkname storageDialer k8s.io/apiserver/pkg/storage/storagebackend/factory.newETCD3Client
var storageDialer func(storagebackend.TransportConfig) (*kubernetes.Client, error)

var (
	shareDialsOnce sync.Once
	storageDials   *sharedDials
)

// shareStorageClients makes kube-apiserver's storage share one etcd client
// per transport (endpoints and certificates) from now on in this process.
func shareStorageClients() {
	shareDialsOnce.Do(func() {
		storageDials = &sharedDials{dial: storageDialer, conns: map[string]*sharedConn{}}
		storageDialer = storageDials.client
	})
}

// sharedDials holds one dialed client per transport, for as long as one of
// the clients handed out on it is open.
type sharedDials struct {
	dial  func(storagebackend.TransportConfig) (*kubernetes.Client, error)
	mu    sync.Mutex
	conns map[string]*sharedConn
}

type sharedConn struct {
	client *kubernetes.Client
	users  int
}

// dialed says how many transports are dialed now.
func (s *sharedDials) dialed() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// client is the dialer kube-apiserver calls: a client of the caller's own
// (closing it closes neither the connection nor the watches and leases of
// the others) on the transport's shared connection.
func (s *sharedDials) client(t storagebackend.TransportConfig) (*kubernetes.Client, error) {
	key := strings.Join(append(append([]string{}, t.ServerList...), t.CertFile, t.KeyFile, t.TrustedCAFile), "\x00")
	s.mu.Lock()
	defer s.mu.Unlock()
	conn := s.conns[key]
	if conn == nil {
		c, err := s.dial(t)
		if err != nil {
			return nil, err
		}
		conn = &sharedConn{client: c}
		s.conns[key] = conn
		// The check of RequestWatchProgress, on which reads from the
		// watch cache depend, goes by the endpoints of the clients the
		// stores are given, and these have none: check the shared one.
		etcdfeature.DefaultFeatureSupportChecker.CheckClient(c.Ctx(), c, storage.RequestWatchProgress)
	}
	conn.users++
	root := conn.client.Client
	user := clientv3.NewCtxClient(context.Background(), clientv3.WithZapLogger(root.GetLogger()))
	user.KV = root.KV
	user.Cluster = root.Cluster
	user.Maintenance = root.Maintenance
	user.Auth = root.Auth
	user.Watcher = openWatcher{root.Watcher}
	user.Lease = openLease{root.Lease}
	context.AfterFunc(user.Ctx(), func() { s.release(key, conn) })
	kc := &kubernetes.Client{Client: user}
	kc.Kubernetes = kc
	return kc, nil
}

func (s *sharedDials) release(key string, conn *sharedConn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	conn.users--
	if conn.users == 0 {
		delete(s.conns, key)
		conn.client.Close()
	}
}

// openWatcher and openLease leave the shared watcher and lessor open when
// one user's client closes: a store cancels its watches' contexts when it
// stops, and kube-apiserver keeps no lease alive.
type openWatcher struct{ clientv3.Watcher }

func (openWatcher) Close() error { return nil }

type openLease struct{ clientv3.Lease }

func (openLease) Close() error { return nil }

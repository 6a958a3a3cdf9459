package demo

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/embedded"
	"github.com/etcdscope/etcdscope/embedded/kube"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// One cluster, control plane and demo (no script: the tests are the user)
// serve every test: starting them takes seconds, and kube-controller-manager
// runs once per process.
var (
	testCluster *embedded.Cluster
	testCP      *kube.ControlPlane
	testDemo    *Demo
)

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "demo-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if testCluster, err = embedded.Start(ctx, embedded.Options{DataDir: filepath.Join(dir, "etcd")}); err != nil {
		fmt.Fprintln(os.Stderr, "start etcd:", err)
		return 1
	}
	defer testCluster.Close()
	var users []kube.User
	for _, u := range Users(3) {
		users = append(users, kube.User{Name: u.Name, Groups: u.Groups})
	}
	f := testCluster.TLS()
	etcd := kube.Etcd{Endpoints: testCluster.Endpoints(), CA: f.CA, Cert: f.Cert, Key: f.Key}
	testCP, err = kube.Start(ctx, kube.Options{Dir: filepath.Join(dir, "kubernetes"), Etcd: etcd, Users: users})
	if err != nil {
		fmt.Fprintln(os.Stderr, "start the control plane:", err)
		return 1
	}
	defer testCP.Close()
	if err := testCP.WaitReady(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if testDemo, err = Start(ctx, Options{Config: configFor, Nodes: 3, Profile: Off}); err != nil {
		fmt.Fprintln(os.Stderr, "start demo:", err)
		return 1
	}
	code := m.Run()
	testDemo.Close()
	if err := testDemo.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		code = 1
	}
	return code
}

// configFor is user's client configuration; "admin" is the cluster's admin.
func configFor(user string) *rest.Config {
	if user == "admin" {
		user = kube.AdminUser
	}
	return testCP.RESTConfig(user)
}

func etcdConfig() clientv3.Config {
	cfg, err := testCluster.ClientConfig()
	if err != nil {
		panic(err)
	}
	cfg.Logger = zap.NewNop()
	return cfg
}

func adminClient(t testing.TB) kubernetes.Interface {
	t.Helper()
	c, err := kubernetes.NewForConfig(configFor("admin"))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func etcdClient(t testing.TB) *clientv3.Client {
	t.Helper()
	cli, err := clientv3.New(etcdConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

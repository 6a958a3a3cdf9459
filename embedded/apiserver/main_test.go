package apiserver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/embedded"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"k8s.io/client-go/kubernetes"
)

// One bundled cluster and one server serve every test of the package that
// does not need options of its own: starting them takes seconds, and the
// machine is small.
var (
	testCluster *embedded.Cluster
	testServer  *Server
	testLogPath string
)

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "apiserver-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	testCluster, err = embedded.Start(ctx, embedded.Options{DataDir: filepath.Join(dir, "etcd")})
	if err != nil {
		fmt.Fprintln(os.Stderr, "start etcd:", err)
		return 1
	}
	defer testCluster.Close()
	testLogPath = filepath.Join(dir, "apiserver.log")
	log, err := os.Create(testLogPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer log.Close()
	testServer, err = Start(ctx, Options{Etcd: etcdConfig(), Log: log})
	if err != nil {
		fmt.Fprintln(os.Stderr, "start apiserver:", err)
		return 1
	}
	code := m.Run()
	if err := testServer.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "close apiserver:", err)
		code = 1
	}
	if code != 0 && os.Getenv("ETCDSCOPE_TEST_LOG") != "" {
		b, _ := os.ReadFile(testLogPath)
		os.Stderr.Write(b)
	}
	return code
}

func etcdConfig() clientv3.Config {
	cfg, err := testCluster.ClientConfig()
	if err != nil {
		panic(err)
	}
	cfg.Logger = zap.NewNop()
	return cfg
}

// adminClient is a typed clientset for the shared server as admin.
func adminClient(t testing.TB) kubernetes.Interface {
	t.Helper()
	return clientFor(t, testServer, testServer.AdminToken())
}

func clientFor(t testing.TB, s *Server, token string) kubernetes.Interface {
	t.Helper()
	c, err := kubernetes.NewForConfig(s.RESTConfig(token))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// etcdClient is a raw etcd client on the shared cluster.
func etcdClient(t testing.TB) *clientv3.Client {
	t.Helper()
	c, err := clientv3.New(etcdConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// etcdRevision is the cluster's current revision.
func etcdRevision(t testing.TB, c *clientv3.Client) int64 {
	t.Helper()
	resp, err := c.Get(context.Background(), "/never-a-key")
	if err != nil {
		t.Fatal(err)
	}
	return resp.Header.Revision
}

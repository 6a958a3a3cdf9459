package demo

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/embedded"
	"github.com/etcdscope/etcdscope/embedded/apiserver"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
)

// One cluster, API server and demo (no script: the tests are the user)
// serve every test: starting them takes seconds.
var (
	testCluster *embedded.Cluster
	testServer  *apiserver.Server
	testDemo    *Demo
	testTokens  = map[string]string{}
)

func TestMain(m *testing.M) {
	klog.LogToStderr(false)
	klog.SetOutput(io.Discard)
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "demo-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if testCluster, err = embedded.Start(ctx, embedded.Options{DataDir: filepath.Join(dir, "etcd")}); err != nil {
		fmt.Fprintln(os.Stderr, "start etcd:", err)
		return 1
	}
	defer testCluster.Close()
	var tokens []apiserver.Token
	for _, u := range append([]User{{Name: "admin"}}, Users(3)...) {
		tok := rand.Text()
		testTokens[u.Name] = tok
		group := apiserver.AdminGroup
		if u.ReadOnly {
			group = apiserver.ViewerGroup
		}
		tokens = append(tokens, apiserver.Token{Token: tok, User: u.Name, UID: u.Name, Groups: []string{group}})
	}
	if testServer, err = apiserver.Start(ctx, apiserver.Options{Etcd: etcdConfig(), Log: io.Discard, Tokens: tokens}); err != nil {
		fmt.Fprintln(os.Stderr, "start apiserver:", err)
		return 1
	}
	defer testServer.Close()
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

func configFor(user string) *rest.Config { return testServer.RESTConfig(testTokens[user]) }

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

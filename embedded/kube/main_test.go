package kube

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/embedded"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// One bundled etcd cluster and one control plane serve the package's
// tests: the controller manager runs once per process, and starting the
// three takes seconds on a small machine.
// testCompaction is the shared control plane's compaction interval: short,
// so that a test sees the compactor work.
const testCompaction = 5 * time.Second

var (
	testCluster *embedded.Cluster
	testCP      *ControlPlane
	testOptions Options
	testDir     string
)

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	var err error
	testDir, err = os.MkdirTemp("", "kube-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(testDir)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	testCluster, err = embedded.Start(ctx, embedded.Options{DataDir: filepath.Join(testDir, "etcd")})
	if err != nil {
		fmt.Fprintln(os.Stderr, "start etcd:", err)
		return 1
	}
	defer testCluster.Close()
	log, err := os.Create(filepath.Join(testDir, "kubernetes.log"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer log.Close()
	encryption, err := writeEncryptionConfig(testDir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	tls := testCluster.TLS()
	testOptions = Options{
		EncryptionConfig:   encryption,
		Dir:                filepath.Join(testDir, "kubernetes"),
		Etcd:               Etcd{Endpoints: testCluster.Endpoints(), CA: tls.CA, Cert: tls.Cert, Key: tls.Key},
		Log:                log,
		CompactionInterval: testCompaction,
	}
	testCP, err = Start(ctx, testOptions)
	if err != nil {
		fmt.Fprintln(os.Stderr, "start the control plane:", err)
		return 1
	}
	if err := testCP.WaitReady(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code := m.Run()
	stopStandalone()
	if err := testCP.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "the control plane stopped during the tests:", err)
		code = 1
	}
	if err := leasesHeld(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	testCP.Close()
	if g := electorGoroutines(); len(g) > 0 {
		fmt.Fprintf(os.Stderr, "Close left %d goroutines of leader election:\n%s\n", len(g), strings.Join(g, "\n\n"))
		code = 1
	}
	if err := leasesAfterClose(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	if code != 0 && os.Getenv("ETCDSCOPE_TEST_LOG") != "" {
		b, _ := os.ReadFile(log.Name())
		os.Stderr.Write(b)
	}
	return code
}

// testEncryptionKey is the name of the aescbc key the test control plane
// encrypts Secrets with, as many real clusters do; other resources stay
// plain (identity).
const testEncryptionKey = "key1"

func writeEncryptionConfig(dir string) (string, error) {
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return "", err
	}
	path := filepath.Join(dir, "encryption.yaml")
	yaml := fmt.Sprintf(`apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
  - resources: [secrets]
    providers:
      - aescbc:
          keys: [{name: %s, secret: %s}]
      - identity: {}
`, testEncryptionKey, base64.StdEncoding.EncodeToString(secret))
	return path, os.WriteFile(path, []byte(yaml), 0o600)
}

// testDecoder decodes values as etcdscope does given the control plane's
// encryption config (--encryption-config).
func testDecoder(t testing.TB) decode.Decoder {
	t.Helper()
	data, err := os.ReadFile(testOptions.EncryptionConfig)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := decode.ParseEncryptionConfig(data)
	if err != nil {
		t.Fatal(err)
	}
	return decode.Decoder{Encryption: enc}
}

// etcdClient is a raw client of the test cluster.
func etcdClient(t testing.TB) *clientv3.Client {
	t.Helper()
	c, err := testClient()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// testClient is a raw client of the test cluster, which logs nothing, for
// TestMain too: the caller closes it.
func testClient() (*clientv3.Client, error) {
	cfg, err := testCluster.ClientConfig()
	if err != nil {
		return nil, err
	}
	cfg.Logger = zap.NewNop()
	return clientv3.New(cfg)
}

// kubectlDispatcher picks the kubectl release that matches the server.
const kubectlDispatcher = "/usr/bin/kubectl"

// kubectl is the real kubectl with a kubeconfig of the test control plane.
type kubectl struct {
	t          *testing.T
	bin        string
	kubeconfig string
	cacheDir   string
}

func newKubectl(t *testing.T, bin, context string) *kubectl {
	t.Helper()
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv("ETCDSCOPE_REQUIRE_KUBECTL") != "" {
			t.Fatalf("kubectl required (ETCDSCOPE_REQUIRE_KUBECTL=1) but %s: %v", bin, err)
		}
		t.Skipf("no kubectl at %s", bin)
	}
	dir := t.TempDir()
	k := &kubectl{t: t, bin: bin, kubeconfig: filepath.Join(dir, "kubeconfig"), cacheDir: filepath.Join(dir, "cache")}
	if err := testCP.WriteKubeconfig(k.kubeconfig); err != nil {
		t.Fatal(err)
	}
	k.run("", "config", "use-context", context)
	return k
}

// try runs kubectl with a deadline and returns stdout, stderr and the error.
func (k *kubectl) try(stdin string, args ...string) (string, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, k.bin, append([]string{"--kubeconfig", k.kubeconfig, "--cache-dir", k.cacheDir}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	return out.String(), errOut.String(), err
}

// run runs kubectl and returns stdout, failing the test on a non-zero exit.
func (k *kubectl) run(stdin string, args ...string) string {
	k.t.Helper()
	out, errOut, err := k.try(stdin, args...)
	if err != nil {
		k.t.Fatalf("kubectl %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

// eventually retries check until it passes or the deadline.
func eventually(t *testing.T, timeout time.Duration, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v: %v", what, timeout, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/embedded/etcdtest"
)

func TestServeWithDebianEtcdctl(t *testing.T) {
	bin := etcdtest.Etcdctl(t)
	kept := filepath.Join(t.TempDir(), "data dir")
	tests := []struct {
		name     string
		args     []string
		keepData bool
	}{
		{"temporary data", nil, false},
		{"tls and data dir", []string{"--tls", "--data-dir", kept, "--members", "1"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := startServe(t, tc.args...)
			if tc.keepData && !strings.Contains(p.export, "ETCDCTL_CACERT=") {
				t.Fatalf("TLS export line lacks the certificate variables: %s", p.export)
			}
			etcdctl(t, bin, p.export, "put", "/registry/serve-test", "hello")
			if got := etcdctl(t, bin, p.export, "get", "/registry/serve-test", "--print-value-only"); got != "hello" {
				t.Errorf("etcdctl read %q back, want hello", got)
			}
			if code := p.stop(t); code != 0 {
				t.Errorf("serve exited %d after SIGTERM, want 0", code)
			}
			_, err := os.Stat(p.dataDir)
			if tc.keepData && err != nil {
				t.Errorf("--data-dir removed on exit: %v", err)
			}
			if !tc.keepData && !errors.Is(err, os.ErrNotExist) {
				t.Errorf("temporary data dir %s left on exit (stat: %v)", p.dataDir, err)
			}
		})
	}
}

func TestServeWithAPIServerAndKubectl(t *testing.T) {
	const kubectl = "/usr/bin/kubectl"
	if _, err := os.Stat(kubectl); err != nil {
		if os.Getenv("ETCDSCOPE_REQUIRE_KUBECTL") == "1" {
			t.Fatalf("kubectl required (ETCDSCOPE_REQUIRE_KUBECTL=1): %v", err)
		}
		t.Skip("no kubectl")
	}
	p := startServe(t, "--apiserver", "--members", "1")
	i := strings.Index(p.export, " KUBECONFIG=")
	if i < 0 {
		t.Fatalf("export line names no KUBECONFIG: %s", p.export)
	}
	kubeconfig := p.export[i+len(" KUBECONFIG="):]
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, kubectl, "--kubeconfig", kubeconfig, "--cache-dir", t.TempDir(), "get", "namespaces", "-o", "name")
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "namespace/default") {
		t.Errorf("kubectl get namespaces: %v\n%s", err, out)
	}
	if code := p.stop(t); code != 0 {
		t.Errorf("serve exited %d after SIGTERM, want 0", code)
	}
}

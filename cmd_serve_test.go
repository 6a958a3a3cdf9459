package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

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

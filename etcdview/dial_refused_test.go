package etcdview

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/embedded"
	"github.com/etcdscope/etcdscope/embedded/etcdtest"
)

// TestAClientCertificateRefusedIsSaidSo: an etcd that requires client
// certificates, dialled without one or with one of another CA, is reported
// as refusing it, at once, not as a dial timeout; the bundled etcd (3.7)
// and etcd 3.6 as a process.
func TestAClientCertificateRefusedIsSaidSo(t *testing.T) {
	servers := map[string]func(t *testing.T) (string, *embedded.TLSFiles){
		"embedded_3.7": func(t *testing.T) (string, *embedded.TLSFiles) {
			c, err := embedded.Start(context.Background(), embedded.Options{Members: 1, DataDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			return c.Endpoints()[0], c.TLS()
		},
		"etcd_3.6": func(t *testing.T) (string, *embedded.TLSFiles) {
			e := etcdtest.StartVersion(t, "3.6", etcdtest.Options{TLS: true})
			return e.Endpoint, e.TLS
		},
	}
	for name, start := range servers {
		t.Run(name, func(t *testing.T) {
			ep, files := start(t)
			other, err := embedded.EnsureTLS(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			for _, tc := range []struct {
				name      string
				cert, key string
				want      string
			}{
				{"no certificate", "", "", "etcd at " + ep + " refused the connection: it requires a client certificate (give --cert and --key)"},
				{"another CA's", other.Cert, other.Key, "etcd at " + ep + " refused the connection: the client certificate (--cert) is not signed by a CA it trusts"},
			} {
				start := time.Now()
				_, err := Connect(testCtx(t), Config{Endpoints: []string{ep}, CACert: files.CA, Cert: tc.cert, Key: tc.key, DialTimeout: 20 * time.Second})
				if err == nil || err.Error() != tc.want {
					t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
				}
				if d := time.Since(start); d > 5*time.Second {
					t.Errorf("%s: took %v, as if waiting for the dial timeout", tc.name, d)
				}
			}
			l, err := Connect(testCtx(t), Config{Endpoints: []string{ep}, CACert: files.CA, Cert: files.Cert, Key: files.Key})
			if err != nil {
				t.Fatalf("with the right certificate: %v", err)
			}
			l.Close()
			if strings.Contains(ep, "http://") {
				t.Errorf("endpoint %s does not serve TLS", ep)
			}
		})
	}
}

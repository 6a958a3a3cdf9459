package cli

import (
	"strings"
	"testing"

	"github.com/etcdscope/etcdscope/embedded/etcdtest"
	"github.com/etcdscope/etcdscope/etcdview/etcdviewtest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestSecretDataMaskedUnlessShowSecrets(t *testing.T) {
	c, cli := etcdtest.StartBundled(t, 1)
	useTLS(t, c.TLS())
	etcdviewtest.Put(t, cli, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "default"},
		Data:       map[string][]byte{"password": []byte("hunter2")},
	})
	ep := c.Endpoints()[0]
	// base64 of "hunter2", as kubectl get -o yaml prints Secret data.
	const revealed = "aHVudGVyMg=="
	tests := []struct {
		name     string
		args     []string
		revealed bool
	}{
		{"get", []string{"get", "secret", "db"}, false},
		{"get --show-secrets", []string{"get", "secret", "db", "--show-secrets"}, true},
		{"get -o json --show-secrets", []string{"get", "secret", "db", "-o", "json", "--show-secrets"}, true},
		{"history -o yaml", []string{"history", "/registry/secrets/default/db", "-o", "yaml"}, false},
		{"history -o yaml --show-secrets", []string{"history", "/registry/secrets/default/db", "-o", "yaml", "--show-secrets"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := run(t, append(tc.args, "--endpoints", ep)...)
			if got := strings.Contains(out, revealed); got != tc.revealed {
				t.Errorf("secret shown = %v, want %v:\n%s", got, tc.revealed, out)
			}
			if !tc.revealed && !strings.Contains(out, "<7 bytes>") {
				t.Errorf("masked secret does not say its size:\n%s", out)
			}
		})
	}
}

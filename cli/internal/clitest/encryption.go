package clitest

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"testing"

	"github.com/etcdscope/etcdscope/etcdview/etcdviewtest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/server/options/encryptionconfig"
	"k8s.io/apiserver/pkg/storage/value"
)

// EncryptedSecret is an EncryptionConfiguration for secrets with aescbc and
// one key, as an operator writes it for kube-apiserver, and the Secret
// "db" encrypted with it by the transformers kube-apiserver builds from it.
func EncryptedSecret(t *testing.T) (path, key string, stored []byte) {
	t.Helper()
	config := `apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
  - resources: [secrets]
    providers:
      - aescbc:
          keys:
            - name: key1
              secret: ` + base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef")) + `
      - identity: {}
`
	path = filepath.Join(t.TempDir(), "enc.yaml")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "default", UID: "1b4e28ba-2fa1-11d2-883f-0016d3cca427"},
		Data:       map[string][]byte{"password": []byte("hunter2")}}
	plain, err := etcdviewtest.Encode(secret)
	if err != nil {
		t.Fatal(err)
	}
	key = "/registry/secrets/default/db"
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	enc, err := encryptionconfig.LoadEncryptionConfig(ctx, path, false, "test")
	if err != nil {
		t.Fatal(err)
	}
	stored, err = enc.Transformers[schema.GroupResource{Resource: "secrets"}].TransformToStorage(ctx, plain, value.DefaultContext(key))
	if err != nil {
		t.Fatal(err)
	}
	return path, key, stored
}

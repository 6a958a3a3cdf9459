package apiserver

import (
	"bytes"
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestSecretsEncryptedAtRest starts a second server, under its own key
// prefix on the shared cluster, with an EncryptionConfiguration that
// encrypts secrets with aescbc: etcd holds k8s:enc:aescbc:v1:KEY:...,
// clients read the plain secret, and configmaps stay unencrypted.
func TestSecretsEncryptedAtRest(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	key := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))
	config := filepath.Join(dir, "encryption.yaml")
	check(t, os.WriteFile(config, []byte(`apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
- resources: [secrets]
  providers:
  - aescbc:
      keys:
      - name: key1
        secret: `+key+`
  - identity: {}
`), 0o600))
	s, err := Start(ctx, Options{Etcd: etcdConfig(), Prefix: "/encrypted", EncryptionConfig: config})
	check(t, err)
	defer s.Close()
	cs := clientFor(t, s, s.AdminToken())
	_, err = cs.CoreV1().Secrets("default").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db"}, StringData: map[string]string{"password": "hunter2"}}, metav1.CreateOptions{})
	check(t, err)
	_, err = cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "plain"}}, metav1.CreateOptions{})
	check(t, err)

	etcd := etcdClient(t)
	resp, err := etcd.Get(ctx, "/encrypted/secrets/default/db")
	check(t, err)
	if len(resp.Kvs) != 1 || !bytes.HasPrefix(resp.Kvs[0].Value, []byte("k8s:enc:aescbc:v1:key1:")) {
		t.Fatalf("secret not stored aescbc-encrypted: %q", resp.Kvs)
	}
	if bytes.Contains(resp.Kvs[0].Value, []byte("hunter2")) {
		t.Error("the stored secret contains its plain value")
	}
	got, err := cs.CoreV1().Secrets("default").Get(ctx, "db", metav1.GetOptions{})
	check(t, err)
	if string(got.Data["password"]) != "hunter2" {
		t.Errorf("secret read back as %q", got.Data["password"])
	}
	resp, err = etcd.Get(ctx, "/encrypted/configmaps/default/plain")
	check(t, err)
	if len(resp.Kvs) != 1 || !bytes.HasPrefix(resp.Kvs[0].Value, []byte("k8s\x00")) {
		t.Errorf("configmap not stored as plain protobuf: %q", resp.Kvs)
	}
}

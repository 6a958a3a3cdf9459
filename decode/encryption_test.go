package decode

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apiserver/pkg/server/options/encryptionconfig"
	"k8s.io/apiserver/pkg/storage/value"
	"k8s.io/client-go/kubernetes/scheme"
)

const secretKey = "/registry/secrets/default/db"

func testSecret() *corev1.Secret {
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "default", UID: "1b4e28ba-2fa1-11d2-883f-0016d3cca427"},
		Data:       map[string][]byte{"password": []byte("hunter2")},
		Type:       corev1.SecretTypeOpaque,
	}
}

func storageBytes(t testing.TB, obj *corev1.Secret) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme).Encode(obj, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// encryptionConfig writes an EncryptionConfiguration for secrets with one
// provider and one key, as an operator writes it for kube-apiserver.
func encryptionConfig(t *testing.T, provider, keyName string, secret []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), provider+".yaml")
	yaml := fmt.Sprintf(`apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
  - resources: [secrets]
    providers:
      - %s:
          keys:
            - name: %s
              secret: %s
      - identity: {}
`, provider, keyName, base64.StdEncoding.EncodeToString(secret))
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// encryptLikeAPIServer encrypts with the transformers kube-apiserver builds
// from the same file, authenticated with the etcd key as its storage does.
func encryptLikeAPIServer(t *testing.T, configPath, key string, plain []byte) []byte {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	cfg, err := encryptionconfig.LoadEncryptionConfig(ctx, configPath, false, "test-apiserver")
	if err != nil {
		t.Fatal(err)
	}
	out, err := cfg.Transformers[schema.GroupResource{Resource: "secrets"}].TransformToStorage(ctx, plain, value.DefaultContext(key))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func decoderFor(t *testing.T, configPath string) Decoder {
	t.Helper()
	data, err := os.ReadFile(configPath)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := ParseEncryptionConfig(data)
	if err != nil {
		t.Fatal(err)
	}
	return Decoder{Encryption: enc, ShowSecrets: true}
}

func TestDecryptsValuesEncryptedByTheAPIServer(t *testing.T) {
	secret32 := bytes.Repeat([]byte{7}, 32)
	other32 := bytes.Repeat([]byte{9}, 32)
	for _, provider := range []string{"aescbc", "aesgcm", "secretbox"} {
		t.Run(provider, func(t *testing.T) {
			stored := encryptLikeAPIServer(t, encryptionConfig(t, provider, "key1", secret32), secretKey, storageBytes(t, testSecret()))
			if want := "k8s:enc:" + provider + ":v1:key1:"; !bytes.HasPrefix(stored, []byte(want)) {
				t.Fatalf("stored value starts %q, want %q", stored[:min(len(stored), 30)], want)
			}
			right := decoderFor(t, encryptionConfig(t, provider, "key1", secret32))
			wrong := decoderFor(t, encryptionConfig(t, provider, "key1", other32))
			renamed := decoderFor(t, encryptionConfig(t, provider, "key2", secret32))

			t.Run("right key decodes the object", func(t *testing.T) {
				got := right.Decode(secretKey, stored)
				if got.Format != FormatProtobuf || got.Problem != "" {
					t.Fatalf("Decode = %s", got.Label())
				}
				if got.Encryption == nil || got.Encryption.Provider != provider || got.Encryption.KeyName != "key1" {
					t.Errorf("Encryption = %+v, want %s key1", got.Encryption, provider)
				}
				if !apiequality.Semantic.DeepEqual(got.Object, testSecret()) {
					t.Errorf("decrypted %+v, want %+v", got.Object, testSecret())
				}
			})
			t.Run("trailing newline from etcdctl is tolerated", func(t *testing.T) {
				if got := right.Decode(secretKey, append(bytes.Clone(stored), '\n')); got.Problem != "" {
					t.Errorf("Decode = %s", got.Label())
				}
			})
			tests := []struct {
				name    string
				decoder Decoder
				key     string
				want    []string
			}{
				{"no config names the key and asks for one", Decoder{}, secretKey,
					[]string{provider + ` key "key1"; pass --encryption-config`}},
				{"wrong secret says so", wrong, secretKey,
					[]string{provider + ` key "key1"`, "wrong secret"}},
				{"unknown key name lists the config's keys", renamed, secretKey,
					[]string{provider + ` key "key1", which the encryption config does not have (its ` + provider + " keys: key2)"}},
			}
			if provider == "aesgcm" {
				tests = append(tests, struct {
					name    string
					decoder Decoder
					key     string
					want    []string
				}{"value moved to another key fails authentication", right, "/registry/secrets/default/other",
					[]string{`aesgcm key "key1"`, "aesgcm authenticates the etcd key"}})
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					got := tt.decoder.Decode(tt.key, stored)
					if got.Format != FormatEncrypted || got.Object != nil {
						t.Errorf("Decode = %s, want encrypted and no object", got.Label())
					}
					for _, w := range tt.want {
						if !strings.Contains(got.Problem, w) {
							t.Errorf("Problem = %q, want it to contain %q", got.Problem, w)
						}
					}
					if strings.Contains(got.Text(), "hunter2") {
						t.Errorf("output shows the secret:\n%s", got.Text())
					}
				})
			}
		})
	}
}

func TestKMSValuesAreLabelledWithProviderAndKeyID(t *testing.T) {
	// A KMS v2 value: prefix, then the EncryptedObject message
	// (encryptedData=1, keyID=2, encryptedDEKSource=3).
	body := []byte{0x0a, 0x03, 1, 2, 3, 0x12, 0x06}
	body = append(body, "key-42"...)
	body = append(body, 0x1a, 0x02, 9, 9)
	tests := []struct {
		name  string
		value []byte
		want  string
	}{
		{"kms v2", append([]byte("k8s:enc:kms:v2:vault:"), body...), `encrypted with KMS v2 provider "vault" (key ID "key-42")`},
		{"kms v1", []byte("k8s:enc:kms:v1:legacy:\x00\x03abcdef"), `encrypted with KMS v1 provider "legacy"`},
		{"unknown provider", []byte("k8s:enc:rot13:v1:k:xyz"), `provider this build does not know ("rot13")`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Decode(secretKey, tt.value)
			if got.Format != FormatEncrypted || !strings.Contains(got.Problem, tt.want) {
				t.Errorf("Decode = %s, want encrypted and %q", got.Label(), tt.want)
			}
		})
	}
}

func TestEncryptionConfigIsValidatedLikeTheAPIServerDoes(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{"aescbc key of the wrong length", `apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
  - resources: [secrets]
    providers:
      - aescbc:
          keys: [{name: k, secret: c2hvcnQ=}]
`, "secret is not of the expected length"},
		{"unknown field", `apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
  - resources: [secrets]
    providerz: []
`, "providerz"},
		{"not an encryption config", `apiVersion: v1
kind: ConfigMap
`, "decode encryption configuration"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseEncryptionConfig([]byte(tt.yaml))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ParseEncryptionConfig error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

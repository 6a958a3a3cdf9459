package cli

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/decode/masktest"
)

// TestSecretsWrittenByKubectlAreMaskedEverywhere writes Secrets through
// the real kube-apiserver with the real kubectl (an Opaque one applied
// with stringData, changed at the same length, one applied server-side, a
// kubernetes.io/tls pair, a docker-registry one) and reads them from etcd
// in every format and command that prints an object: no value, plain or
// base64, nor 8 bytes of one, appears until --show-secrets.
func TestSecretsWrittenByKubectlAreMaskedEverywhere(t *testing.T) {
	t.Parallel()
	k := newKubectl(t)
	p := startServe(t, "--apiserver", "--members", "1")
	k.kubeconfig = exportVar(t, p.export, "KUBECONFIG")
	ep := p.conn()
	certFile, keyFile, keyPEM := tlsPair(t)
	const dockerPassword = "d0cker-Pa55word-77"
	k.run(t, "apply", "-f", "testdata/mask/secrets.yaml")
	k.run(t, "apply", "-f", "testdata/mask/secrets-changed.yaml")
	k.run(t, "apply", "--server-side", "-f", "testdata/mask/server-side.yaml")
	k.run(t, "create", "secret", "tls", "lab-tls", "-n", "mask-e2e", "--cert", certFile, "--key", keyFile)
	k.run(t, "create", "secret", "docker-registry", "lab-pull", "-n", "mask-e2e",
		"--docker-server", "registry.example.com", "--docker-username", "robot", "--docker-password", dockerPassword)
	values := []string{"correct horse battery staple", "CORRECT HORSE BATTERY STAPLE", "tok-3f9a1c77e2b4", "sk-live-8c1f0e6d2b9a4f57",
		dockerPassword, pemBody(keyPEM), k.run(t, "get", "secret", "lab-pull", "-n", "mask-e2e", "-o", "jsonpath={.data.\\.dockerconfigjson}")}

	key := "/registry/secrets/mask-e2e/lab-credentials"
	for _, args := range secretOutputs(key) {
		code, out, errOut := runCommand(t, append(args, ep...)...)
		if code != 0 {
			t.Errorf("%q: exit status %d: %s", args, code, errOut)
		}
		if leak := masktest.Leaked(out+errOut, values...); leak != "" {
			t.Errorf("%q prints %q of a value:\n%s\n%s", args, leak, out, errOut)
		}
	}
	if diff := run(t, append([]string{"history", key, "--diff"}, ep...)...); !strings.Contains(diff, "+  password: <28 bytes, changed>") {
		t.Errorf("history --diff does not say the password changed:\n%s", diff)
	}
	raw := run(t, append([]string{"get", key, "-o", "raw", "--show-secrets"}, ep...)...)
	checkDecodeMasks(t, key, []byte(raw), values)
	shown := run(t, append([]string{"get", "secrets", "-n", "mask-e2e", "-o", "json", "--show-secrets"}, ep...)...)
	for _, v := range values[1:] {
		if v != dockerPassword && masktest.Leaked(shown, v) == "" { // it is inside .dockerconfigjson
			t.Errorf("--show-secrets does not print %q:\n%s", v, shown)
		}
	}
}

// secretOutputs are the commands that print the Secrets of mask-e2e, or
// the one at key.
func secretOutputs(key string) [][]string {
	get := []string{"get", "secrets", "-n", "mask-e2e"}
	out := [][]string{
		{"get", key}, {"get", key, "-o", "json"}, {"get", key, "--show-managed-fields"},
		{"history", key}, {"history", key, "--diff"}, {"history", key, "-o", "json"}, {"history", key, "-o", "yaml", "--show-managed-fields"},
		{"changes", "/registry/secrets/mask-e2e/", "--from-rev", "1"}, {"changes", "/registry/secrets/mask-e2e/", "--from-rev", "1", "-o", "json"},
	}
	for _, o := range []string{"yaml", "json", "wide", "name",
		"jsonpath={.items[*].data} {.items[*].metadata.annotations}", "jsonpath-as-json={.items[*]}",
		"custom-columns=N:.metadata.name,D:.data,A:.metadata.annotations",
		"go-template={{range .items}}{{.data}} {{.metadata.annotations}} {{.metadata.managedFields}}{{end}}"} {
		out = append(out, append(append([]string{}, get...), "-o", o), append(append([]string{}, get...), "-o", o, "--show-managed-fields"))
	}
	return append(out, append(append([]string{}, get...), "-o", "yaml", "--where", `object.data.password == "x"`))
}

// checkDecodeMasks runs `etcdscope decode` on the value as stored, as a
// user pipes etcdctl's output into it: masked in YAML and JSON, -o proto
// refused.
func checkDecodeMasks(t *testing.T, key string, value []byte, values []string) {
	t.Helper()
	for _, o := range []string{"yaml", "json", "proto"} {
		cmd := etcdscope([]string{"decode", "--key", key, "-o", o})
		cmd.Stdin = bytes.NewReader(value)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		if leak := masktest.Leaked(out.String()+errOut.String(), values...); leak != "" {
			t.Errorf("decode -o %s prints %q of a value:\n%s", o, leak, out.String())
		}
		if refused := o == "proto"; refused != (err != nil) {
			t.Errorf("decode -o %s: %v, %s", o, err, errOut.String())
		}
	}
}

// tlsPair writes a self-signed certificate and its key for kubectl create
// secret tls, and returns their files and the key's PEM.
func tlsPair(t *testing.T) (certFile, keyFile string, keyPEM []byte) {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "lab.example.com"},
		NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &priv.PublicKey, priv)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	keyPEM = pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile, keyPEM
}

// pemBody is the base64 lines of a PEM block, without the armour every
// PEM file shares.
func pemBody(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(lines[1:len(lines)-1], "")
}

package cli

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/cli/cmdutil"
	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/embedded/etcdtest"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/etcdview/encryption"
	"github.com/etcdscope/etcdscope/etcdview/etcdviewtest"
)

// writeSecretsEncryptionConfig writes an EncryptionConfiguration that
// encrypts Secrets with a new aescbc key "key1" and reads plain ones, as
// the Kubernetes docs' first step of encrypting at rest has it.
func writeSecretsEncryptionConfig(t *testing.T) string {
	t.Helper()
	secret := make([]byte, 32)
	rand.Read(secret)
	path := filepath.Join(t.TempDir(), "encryption.yaml")
	config := fmt.Sprintf(`apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
  - resources: [secrets]
    providers:
      - aescbc:
          keys: [{name: key1, secret: %s}]
      - identity: {}
`, base64.StdEncoding.EncodeToString(secret))
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// secretsRow is the table's row of Secrets under aescbc "key1": its count.
var secretsRow = regexp.MustCompile(`(?m)^secrets +aescbc key "key1" +aescbc key "key1" +(\d+) +written$`)

// TestCheckEncryptionOnTheBundledControlPlane runs the bundled control
// plane with its Secrets encrypted, creates Secrets with kubectl, and
// expects check encryption to pass, every Secret under the write key; a
// plain value written into /registry/secrets then fails it, named.
func TestCheckEncryptionOnTheBundledControlPlane(t *testing.T) {
	t.Parallel()
	k := newKubectl(t)
	config := writeSecretsEncryptionConfig(t)
	p := startServe(t, "--apiserver", "--members", "1", "--encryption-config", config)
	k.kubeconfig = exportVar(t, p.export, "KUBECONFIG")
	for _, name := range []string{"db", "api-token"} {
		k.run(t, "create", "secret", "generic", name, "--from-literal=password=hunter2")
	}
	args := append([]string{"check", "encryption", "--encryption-config", config}, p.conn()...)
	out := run(t, args...)
	m := secretsRow.FindStringSubmatch(out)
	if m == nil || m[1] == "0" {
		t.Fatalf("no row of Secrets under aescbc key1:\n%s", out)
	}
	if !strings.Contains(out, "GUIDANCE: nothing to do") || strings.Contains(out, "older") || strings.Contains(out, "unreadable") {
		t.Errorf("a cluster that encrypted its Secrets from the start is not consistent:\n%s", out)
	}
	t.Logf("check encryption on the bundled cluster:\n%s", out)
	// Read by its data dir, the running cluster's state file names the
	// config its kube-apiserver encrypts with: no flag needed.
	// (The cluster writes on meanwhile: only what the config decides is compared.)
	found := run(t, "check", "encryption", "--data-dir", p.dataDir)
	if !strings.Contains(found, "against the encryption config "+config) || secretsRow.FindStringSubmatch(found) == nil ||
		!strings.Contains(found, "GUIDANCE: nothing to do") {
		t.Errorf("check encryption --data-dir %s, with no --encryption-config, does not read with the config serve was given:\n%s", p.dataDir, found)
	}

	const planted = "/registry/secrets/default/planted"
	etcd := changesClient(t, p.endpoints, p.tls)
	val, err := etcdviewtest.Encode(etcdviewtest.ConfigMap("planted"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if _, err := etcd.Put(ctx, planted, string(val)); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCommand(t, args...)
	if code != 1 {
		t.Fatalf("exit status %d after a plain Secret was written, want 1:\n%s%s", code, out, errOut)
	}
	if !regexp.MustCompile(`(?m)^ +identity +1 +older$`).MatchString(out) || !strings.Contains(out, planted) ||
		!strings.Contains(out, "kubectl get secrets -A -o json | kubectl replace -f -") {
		t.Errorf("the plain Secret is not counted, named and given its rewrite:\n%s", out)
	}
	if want := "Error: check failed: encryption: 1 of "; !strings.HasPrefix(errOut, want) || strings.Count(errOut, "\n") != 1 {
		t.Errorf("stderr %q, want one line starting %q", errOut, want)
	}
	t.Logf("after a plain value under %s:\n%s%s", planted, out, errOut)
	// check runs it among the others, and fails with it.
	if code, _, _ := runCommand(t, append([]string{"check", "--encryption-config", config}, p.conn()...)...); code != 1 {
		t.Errorf("check: exit status %d, want 1", code)
	}
}

// TestCheckEncryptionJSON: -o json is an object per check; encryption's
// counts each resource's ways of storing, with status and keys, and the
// findings with their guidance.
func TestCheckEncryptionJSON(t *testing.T) {
	c, cli := etcdtest.StartBundled(t, 1)
	useTLS(t, c.TLS())
	config := writeSecretsEncryptionConfig(t)
	etcdviewtest.Put(t, cli, etcdviewtest.ConfigMap("a"), etcdviewtest.ConfigMap("b"))
	secretKey := "/registry/secrets/default/plain"
	if _, err := cli.Put(t.Context(), secretKey, "k8s\x00plain enough"); err != nil {
		t.Fatal(err)
	}
	ep := c.Endpoints()[0]
	code, out, _ := runCommand(t, "check", "encryption", "--endpoints", ep, "--encryption-config", config, "-o", "json")
	if code != 1 {
		t.Fatalf("exit status %d, want 1 (a plain Secret where the config encrypts)", code)
	}
	var doc struct {
		Encryption struct {
			Revision  int64            `json:"revision"`
			Config    string           `json:"encryptionConfig"`
			Failed    bool             `json:"failed"`
			Values    int64            `json:"values"`
			ByStatus  map[string]int64 `json:"byStatus"`
			Resources []struct {
				Group      string  `json:"group"`
				Resource   string  `json:"resource"`
				WritesWith *string `json:"writesWith"`
				Stored     []struct {
					Label, Provider, Status string
					Count                   int64
					Keys                    []string
				} `json:"stored"`
			} `json:"resources"`
			Findings []struct {
				Resource, Label, Status, Guidance string
				Count                             int64
				Keys                              []string
			} `json:"findings"`
		} `json:"encryption"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("-o json: %v\n%s", err, out)
	}
	e := doc.Encryption
	if e.Revision == 0 || e.Config != config || !e.Failed || e.Values != 3 || e.ByStatus["written"] != 2 || e.ByStatus["older"] != 1 {
		t.Errorf("revision %d config %q failed %v values %d by status %v; want a revision, the config, true, 3, {written 2, older 1}",
			e.Revision, e.Config, e.Failed, e.Values, e.ByStatus)
	}
	if len(e.Resources) != 2 || e.Resources[0].Resource != "configmaps" || *e.Resources[0].WritesWith != "identity" ||
		e.Resources[1].Resource != "secrets" || *e.Resources[1].WritesWith != `aescbc key "key1"` {
		t.Fatalf("resources %+v, want configmaps (identity), then secrets (aescbc key1)", e.Resources)
	}
	if s := e.Resources[1].Stored; len(s) != 1 || s[0].Provider != "identity" || s[0].Status != "older" || s[0].Count != 1 || s[0].Keys[0] != secretKey {
		t.Errorf("secrets stored %+v, want one plain value, older, named", s)
	}
	if f := e.Findings; len(f) != 1 || f[0].Resource != "secrets" || f[0].Keys[0] != secretKey || !strings.Contains(f[0].Guidance, "kubectl replace") {
		t.Errorf("findings %+v, want the plain Secret with its rewrite", f)
	}

	code, out, _ = runCommand(t, "check", "encryption", "--endpoints", ep, "-o", "json")
	if code != 0 || !strings.Contains(out, `"writesWith": null`) || !strings.Contains(out, `"unknown": 3`) {
		t.Errorf("without a config: exit status %d, want 0, with no write key and every value unknown:\n%s", code, out)
	}
}

// TestCheckEncryptionOutputIsInert: keys and key names read from etcd
// reach a terminal as text, never as escape sequences.
func TestCheckEncryptionOutputIsInert(t *testing.T) {
	_, cli := etcdtest.StartBundled(t, 1)
	config := writeSecretsEncryptionConfig(t)
	for key, value := range map[string]string{
		"/registry/secrets/default/\x1b]0;owned\x07":       "k8s\x00plain",
		"/registry/secrets/default/evil-key":               "k8s:enc:aescbc:v1:\x1b[2J\x1b[31mname:ciphertext",
		"/registry/\x1b[2Jconfigmaps/default/\x9b31mx":     "k8s\x00plain",
		"/registry/configmaps/default/" + "\xff\xfe\x1b[H": "k8s\x00plain",
	} {
		if _, err := cli.Put(t.Context(), key, value); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := decode.ParseEncryptionConfig(data)
	if err != nil {
		t.Fatal(err)
	}
	r, err := encryption.Run(t.Context(), etcdview.NewLive(cli, 0), encryption.Options{Config: enc})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := (encryptionReport{Report: r, config: config}).WriteText(&out, cmdutil.Palette{TTY: true, Color: true}); err != nil {
		t.Fatal(err)
	}
	text := regexp.MustCompile(`\x1b\[[0-9;]*m`).ReplaceAllString(out.String(), "") // the palette's own colours
	if strings.Contains(text, "\x1b") || strings.Contains(text, "\x07") || strings.Contains(text, "\x9b") || !strings.Contains(text, "owned") || !strings.Contains(text, "evil-key") {
		t.Errorf("escape sequences from etcd reached the terminal, or the keys are not named:\n%q", text)
	}
}

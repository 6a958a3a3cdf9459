package cli

import (
	"strings"
	"testing"

	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/decode/masktest"
	"github.com/etcdscope/etcdscope/embedded/etcdtest"
	"github.com/etcdscope/etcdscope/etcdview/etcdviewtest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// labSecret is a Secret as `kubectl apply` of a manifest with stringData
// stores it: the value in data and in the last-applied annotation.
func labSecret(name, password string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "lab", Annotations: map[string]string{
			decode.LastAppliedAnnotation: `{"apiVersion":"v1","kind":"Secret","metadata":{"annotations":{},"name":"` + name +
				`","namespace":"lab"},"stringData":{"password":"` + password + `"},"type":"Opaque"}` + "\n",
		}},
		Data: map[string][]byte{"password": []byte(password)},
		Type: corev1.SecretTypeOpaque,
	}
}

func TestSecretValuesAreMaskedInEveryFormat(t *testing.T) {
	c, cli := etcdtest.StartBundled(t, 1)
	const first, second, other = "correct horse battery staple", "CORRECT HORSE BATTERY STAPLE", "Tr0ub4dor&3-other"
	etcdviewtest.Put(t, cli, labSecret("lab-credentials", first), labSecret("other", other))
	etcdviewtest.Put(t, cli, labSecret("lab-credentials", second))
	ep := append([]string{"--endpoints", c.Endpoints()[0]}, tlsFlags(c.TLS())...)
	for _, args := range [][]string{
		{"get", "secret", "lab-credentials", "-n", "lab"},
		{"get", "secret", "lab-credentials", "-n", "lab", "-o", "json"},
		{"get", "secrets", "-n", "lab", "-o", "yaml"},
		{"get", "secrets", "-n", "lab", "-o", "json"},
		{"get", "secrets", "-n", "lab", "-o", "wide"},
		{"get", "secrets", "-n", "lab", "-o", "name"},
		{"get", "secrets", "-n", "lab", "-o", "jsonpath={.items[*].data.password} {.items[*].metadata.annotations}"},
		{"get", "secrets", "-n", "lab", "-o", "jsonpath-as-json={.items[*].data}"},
		{"get", "secrets", "-n", "lab", "-o", "custom-columns=N:.metadata.name,P:.data.password,A:.metadata.annotations"},
		{"get", "secrets", "-n", "lab", "-o", "go-template={{range .items}}{{.data.password}} {{.metadata.annotations}}{{end}}"},
		{"get", "secrets", "-n", "lab", "--sort-by", ".data.password", "-o", "yaml"},
		{"get", "/registry/secrets/lab/lab-credentials", "-o", "json"},
		{"history", "/registry/secrets/lab/lab-credentials"},
		{"history", "/registry/secrets/lab/lab-credentials", "--diff"},
		{"history", "/registry/secrets/lab/lab-credentials", "-o", "json"},
		{"changes", "/registry/secrets/", "--from-rev", "1"},
		{"changes", "/registry/secrets/", "--from-rev", "1", "-o", "json"},
	} {
		code, out, errOut := runCommand(t, append(args, ep...)...)
		if code != 0 {
			t.Errorf("%q: exit status %d: %s", args, code, errOut)
		}
		if leak := masktest.Leaked(out+errOut, first, second, other); leak != "" {
			t.Errorf("%q prints %q of a value:\n%s\n%s", args, leak, out, errOut)
		}
	}
	diff := run(t, append([]string{"history", "/registry/secrets/lab/lab-credentials", "--diff"}, ep...)...)
	if !strings.Contains(diff, "+  password: <28 bytes, changed>") {
		t.Errorf("history --diff does not say the password changed:\n%s", diff)
	}
	if shown := run(t, append([]string{"get", "secrets", "-n", "lab", "-o", "yaml", "--show-secrets"}, ep...)...); !strings.Contains(shown, first) && !strings.Contains(shown, second) {
		t.Errorf("--show-secrets does not print the values:\n%s", shown)
	}
	if msg := runFails(t, append([]string{"get", "secret", "lab-credentials", "-n", "lab", "-o", "raw"}, ep...)...); msg != "Error: -o raw of a Secret prints its values: add --show-secrets" {
		t.Errorf("-o raw of a Secret: %s", msg)
	}
	run(t, append([]string{"get", "secret", "lab-credentials", "-n", "lab", "-o", "raw", "--show-secrets"}, ep...)...)
}

// maskNote is the line get adds on stderr when a template printed a masked
// value.
const maskNote = "etcdscope: Secret values are masked (<N bytes>); add --show-secrets to print them"

func TestMaskedValuesInATemplateAreNotedOnceOnStderr(t *testing.T) {
	c, cli := etcdtest.StartBundled(t, 1)
	etcdviewtest.Put(t, cli, labSecret("a", "first-password"), labSecret("b", "second-password"))
	ep := append([]string{"--endpoints", c.Endpoints()[0]}, tlsFlags(c.TLS())...)
	for _, tc := range []struct {
		args  []string
		out   string
		notes int
	}{
		{[]string{"get", "secrets", "-n", "lab", "-o", `jsonpath={range .items[*]}{.data.password}{"\n"}{end}`}, "<14 bytes>\n<15 bytes>\n", 1},
		{[]string{"get", "secret", "a", "-n", "lab", "-o", "jsonpath={.data.password}"}, "<14 bytes>", 1},
		{[]string{"get", "secret", "a", "-n", "lab", "-o", "custom-columns=P:.data.password", "--no-headers"}, "<14 bytes>\n", 1},
		{[]string{"get", "secrets", "-n", "lab", "-o", "jsonpath={.items[*].metadata.name}"}, "a b", 0},
		{[]string{"get", "secrets", "-n", "lab", "-o", "yaml"}, "", 0},
		{[]string{"get", "secret", "a", "-n", "lab", "-o", "jsonpath={.data.password}", "--show-secrets"}, "Zmlyc3QtcGFzc3dvcmQ=", 0},
	} {
		code, out, errOut := runCommand(t, append(tc.args, ep...)...)
		if code != 0 || tc.out != "" && out != tc.out {
			t.Errorf("%q: exit %d, printed %q, want 0 and %q", tc.args, code, out, tc.out)
		}
		if n := strings.Count(errOut, maskNote); n != tc.notes || tc.notes == 1 && errOut != maskNote+"\n" {
			t.Errorf("%q: stderr %q: want the note %d times", tc.args, errOut, tc.notes)
		}
	}
}

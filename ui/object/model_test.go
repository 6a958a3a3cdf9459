package object

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/decode/masktest"
	"github.com/etcdscope/etcdscope/ui/common"
	"github.com/etcdscope/etcdscope/ui/uitest"
	"github.com/muesli/termenv"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func init() { lipgloss.SetColorProfile(termenv.Ascii) }

func opened(t *testing.T, key string) *Model {
	t.Helper()
	m := New(uitest.Common(uitest.Fixture()))
	m.SetSize(90, 60)
	m.Focus(true)
	uitest.Drive(t, m.Update, m.Open(key, 0))
	return m
}

func TestModeKeysSwitchTheView(t *testing.T) {
	tests := []struct {
		keys []string
		want []string
	}{
		{nil, []string{"kind: Pod", "status:", "phase: Running", "rev 12  yaml"}},
		{[]string{"o"}, []string{`"kind": "Pod"`, "json"}},
		{[]string{"b"}, []string{"# protobuf, 259 bytes", "6b 38 73 00", "raw"}},
		{[]string{"e"}, []string{"createRevision: 10", "modRevision: 12", "version: 3", "lease: 0"}},
		{[]string{"o", "y"}, []string{"kind: Pod"}},
		{[]string{"Z"}, []string{"spec: … 7 lines folded", "status: … 7 lines folded"}},
		{[]string{"j", "j", "j", "z"}, []string{"metadata: … 7 lines folded", "spec:\n"}},
	}
	for _, tc := range tests {
		m := opened(t, "/registry/pods/default/web-0")
		uitest.Press(t, m.Update, tc.keys...)
		got := m.View()
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%v: no %q in\n%s", tc.keys, w, got)
			}
		}
	}
}

func TestSecretDataIsMaskedUntilX(t *testing.T) {
	m := opened(t, "/registry/secrets/default/db-password")
	if got := m.View(); !strings.Contains(got, "password: <7 bytes>") || strings.Contains(got, "aHVudGVyMg==") {
		t.Fatalf("secret not masked:\n%s", got)
	}
	uitest.Press(t, m.Update, "x")
	if got := m.View(); !strings.Contains(got, "aHVudGVyMg==") || !strings.Contains(got, "secrets shown") {
		t.Errorf("x did not reveal the secret:\n%s", got)
	}
}

func TestNonObjectValueSaysWhatItIs(t *testing.T) {
	m := opened(t, "/registry/masterleases/10.0.0.1")
	got := m.View()
	if !strings.Contains(got, "# text, 14 bytes") || !strings.Contains(got, "binary lease") {
		t.Errorf("no label for a value that is no object:\n%s", got)
	}
}

func TestMissingKeyIsAnError(t *testing.T) {
	m := opened(t, "/registry/pods/default/nope")
	if got := m.View(); !strings.Contains(got, "does not exist at the newest revision") {
		t.Errorf("missing key:\n%s", got)
	}
}

func TestOpenAtRevisionShowsTheOlderValue(t *testing.T) {
	m := opened(t, "/registry/pods/default/web-0")
	uitest.Drive(t, m.Update, m.Open("/registry/pods/default/web-0", 11))
	if got := m.View(); !strings.Contains(got, "image: nginx:1.27") || !strings.Contains(got, "rev 11") {
		t.Errorf("at revision 11:\n%s", got)
	}
}

func TestXOnAValueThatIsNoSecretOnlySaysSo(t *testing.T) {
	m := opened(t, "/registry/configmaps/kube-system/coredns")
	var flashes []string
	update := func(msg tea.Msg) tea.Cmd {
		if f, ok := msg.(common.FlashMsg); ok {
			flashes = append(flashes, f.Text)
			return nil
		}
		return m.Update(msg)
	}
	uitest.Press(t, update, "x")
	if got := m.View(); strings.Contains(got, "secrets shown") || m.showSecrets {
		t.Errorf("x on a ConfigMap flipped the secrets state:\n%s", got)
	}
	if len(flashes) != 1 || !strings.Contains(flashes[0], "this is no Secret") {
		t.Errorf("flashes %q, want one saying this is no Secret", flashes)
	}
	uitest.Drive(t, update, m.Open("/registry/secrets/default/db-password", 0))
	uitest.Press(t, update, "x")
	if got := m.View(); !strings.Contains(got, "aHVudGVyMg==") || !strings.Contains(got, "secrets shown") {
		t.Errorf("one x on the Secret opened next did not reveal it:\n%s", got)
	}
}

func TestOptionKeyDuringAReadAppliesToTheValueRead(t *testing.T) {
	m := opened(t, "/registry/pods/default/web-0")
	read := m.Open("/registry/configmaps/kube-system/coredns", 0)
	uitest.Press(t, m.Update, "m")
	uitest.Drive(t, m.Update, read)
	got := m.View()
	if !strings.Contains(got, "/registry/configmaps/kube-system/coredns  rev") || !strings.Contains(got, "Corefile") || !strings.Contains(got, "managedFields shown") {
		t.Errorf("m during the read of the ConfigMap:\n%s", got)
	}
}

func TestValueOf1500KiBShowsIntactInEveryMode(t *testing.T) {
	for _, lineLen := range []int{0, 64} {
		src := uitest.Fixture()
		src.PutBig(1536<<10, lineLen)
		m := New(uitest.Common(src))
		m.SetSize(90, 40)
		m.Focus(true)
		// Each read and decode runs to its end, however long it takes
		// here: no timer is involved.
		m.Update(m.Open(uitest.BigKey, 0)())
		for _, keys := range [][]string{{"y"}, {"y", "G"}, {"o"}, {"o", "G"}, {"b"}, {"e"}, {"m"}} {
			for _, k := range keys {
				if cmd := m.Update(uitest.Key(k)); cmd != nil {
					m.Update(cmd())
				}
			}
			got := m.View()
			rows := strings.Split(got, "\n")
			if !strings.HasPrefix(got, uitest.BigKey+"  rev") || len(rows) != 40 {
				t.Errorf("lines of %d, %v: the title or the height is lost:\n%s", lineLen, keys, got)
			}
			for i, r := range rows {
				if w := ansi.StringWidth(r); w > 90 {
					t.Errorf("lines of %d, %v: row %d is %d cells wide", lineLen, keys, i, w)
				}
			}
			if bad := uitest.Active(got); len(bad) > 0 {
				t.Errorf("lines of %d, %v: %v in\n%s", lineLen, keys, bad, got)
			}
		}
	}
}

// appliedSecret is a Secret as `kubectl apply` of a manifest with
// stringData stores it: the values in data, and in the last-applied
// annotation.
func appliedSecret() *corev1.Secret {
	return &corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: "lab-credentials", Namespace: "lab", Annotations: map[string]string{
			decode.LastAppliedAnnotation: `{"apiVersion":"v1","kind":"Secret","metadata":{"annotations":{},"name":"lab-credentials","namespace":"lab"},"stringData":{"password":"correct horse battery staple"},"type":"Opaque"}` + "\n",
		}, ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl-client-side-apply", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1",
			FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:data":{".":{},"f:password":{}},"f:type":{}}`)}}}},
		Data: map[string][]byte{"password": []byte("correct horse battery staple")},
		Type: corev1.SecretTypeOpaque,
	}
}

func TestEveryViewOfASecretIsMaskedUntilX(t *testing.T) {
	src := uitest.Fixture()
	src.PutObject(appliedSecret())
	for _, tc := range []struct {
		keys             []string
		masked, revealed string
	}{
		{nil, "password: <28 bytes>", "password: Y29ycmVjdCBob3JzZSBiYXR0ZXJ5IHN0YXBsZQ=="},
		{[]string{"o"}, `"password": "\u003c28 bytes\u003e"`, `\"password\":\"correct horse battery staple\"`},
		{[]string{"b"}, "raw bytes of a Secret hold its values: x reveals them", "|sword\":\"correct |"},
		{[]string{"e"}, "modRevision: ", "modRevision: "},
		{[]string{"m"}, "f:password: {}", "password: Y29ycmVjdCBob3JzZSBiYXR0ZXJ5IHN0YXBsZQ=="},
	} {
		m := New(uitest.Common(src))
		m.SetSize(1000, 200) // no line is cut short by the pane
		m.Focus(true)
		uitest.Drive(t, m.Update, m.Open("/registry/secrets/lab/lab-credentials", 0))
		uitest.Press(t, m.Update, tc.keys...)
		masked := m.View()
		if leak := masktest.Leaked(masked, "correct horse battery staple"); leak != "" || !strings.Contains(masked, tc.masked) {
			t.Errorf("%v shows %q of the value, or lacks %q:\n%s", tc.keys, leak, tc.masked, masked)
		}
		uitest.Press(t, m.Update, "x")
		if got := m.View(); !strings.Contains(got, tc.revealed) {
			t.Errorf("%v then x lacks %q:\n%s", tc.keys, tc.revealed, got)
		}
	}
}

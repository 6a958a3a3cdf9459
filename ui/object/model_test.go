package object

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/etcdscope/etcdscope/ui/uitest"
	"github.com/muesli/termenv"
)

func init() { lipgloss.SetColorProfile(termenv.Ascii) }

func opened(t *testing.T, key string) *Model {
	t.Helper()
	m := New(uitest.Common(uitest.Fixture()))
	m.SetSize(90, 60)
	m.Focus(true)
	uitest.Drive(m.Update, m.Open(key, 0))
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
		uitest.Press(m.Update, tc.keys...)
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
	uitest.Press(m.Update, "x")
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
	uitest.Drive(m.Update, m.Open("/registry/pods/default/web-0", 11))
	if got := m.View(); !strings.Contains(got, "image: nginx:1.27") || !strings.Contains(got, "rev 11") {
		t.Errorf("at revision 11:\n%s", got)
	}
	var _ tea.Model
}

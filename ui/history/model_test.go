package history

import (
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/etcdscope/etcdscope/ui/uitest"
	"github.com/muesli/termenv"
)

func init() { lipgloss.SetColorProfile(termenv.Ascii) }

func TestRevisionsWithChangesAndTheDiffOfTheSelected(t *testing.T) {
	src := uitest.Fixture()
	src.Delete("/registry/pods/default/web-0")
	m := New(uitest.Common(src))
	m.SetSize(150, 50)
	m.Focus(true)
	uitest.Drive(t, m.Update, m.Open("/registry/pods/default/web-0", 11))
	got := m.View()
	for _, want := range []string{"4 revisions retained", "DELETED", "12        3        259 spec.containers[0].image", "10        1        260 created", "diff revision 10 → 11", "object at revision 11"} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in\n%s", want, got)
		}
	}
	uitest.Press(t, m.Update, "g")
	if got := m.View(); !strings.Contains(got, "deleted at revision 14; the value before:") {
		t.Errorf("the deletion:\n%s", got)
	}
}

func TestCompactionBoundaryIsARow(t *testing.T) {
	src := uitest.Fixture()
	src.Compact(11)
	m := New(uitest.Common(src))
	m.SetSize(150, 30)
	uitest.Drive(t, m.Update, m.Open("/registry/pods/default/web-0", 0))
	got := m.View()
	if !strings.Contains(got, "history before revision 11 was compacted") {
		t.Errorf("no compaction row:\n%s", got)
	}
	// The oldest revision left is no creation: what it changed is unknown.
	uitest.Press(t, m.Update, "G") // the compaction row
	uitest.Press(t, m.Update, "k") // the oldest revision above it
	got = m.View()
	for _, want := range []string{"(the revision before is gone)", "the oldest etcd still holds"} {
		if !strings.Contains(got, want) {
			t.Errorf("oldest retained revision: no %q in\n%s", want, got)
		}
	}
	if strings.Contains(got, "created") {
		t.Errorf("the oldest retained revision is called created:\n%s", got)
	}
}

func TestKeyWithNoRetainedRevisionSaysSo(t *testing.T) {
	src := uitest.Fixture()
	src.Put("/registry/pods/default/old", []byte("x"))
	src.Delete("/registry/pods/default/old")
	src.Compact(src.Revision())
	tests := []struct{ key, want string }{
		{"/registry/pods/default/never", "history of /registry/pods/default/never: etcd holds no revision of it"},
		{"/registry/pods/default/old", "etcd holds no revision of it; history before revision 15 was compacted"},
	}
	for _, tc := range tests {
		m := New(uitest.Common(src))
		m.SetSize(150, 20)
		uitest.Drive(t, m.Update, m.Open(tc.key, 0))
		if got := m.View(); !strings.Contains(got, tc.want) {
			t.Errorf("no %q in\n%s", tc.want, got)
		}
	}
}

package ui

import (
	"context"
	"fmt"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/ui/common"
	"github.com/etcdscope/etcdscope/ui/uitest"
	"github.com/etcdscope/etcdscope/ui/writepath"
	"github.com/muesli/termenv"
)

func init() { lipgloss.SetColorProfile(termenv.Ascii) }

// waitFor is how long a screen may take to show what a test waits for.
const waitFor = 10 * time.Second

// newTest starts the UI on the fixture store in a virtual terminal.
func newTest(t *testing.T, w, h int) (*teatest.TestModel, *uitest.Source) {
	t.Helper()
	src := uitest.Fixture()
	return startOn(t, w, h, Options{Source: src, Description: "fixture store", WritePath: fixtureFeed()}), src
}

// goldenNow is the clock the screens' ages count to: 90 minutes after the
// fixture's objects were created.
var goldenNow = uitest.Epoch.Add(90 * time.Minute)

// startOn starts the UI with opts in a virtual terminal of w x h, with a
// small tail, no status refreshes after the first, and no members to stop.
func startOn(t *testing.T, w, h int, opts Options) *teatest.TestModel {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	opts.TailBuffer, opts.RefreshInterval, opts.MembersOff = 100, time.Hour, "the fixture has no members to stop"
	if opts.Now == nil {
		opts.Now = func() time.Time { return goldenNow }
	}
	return teatest.NewTestModel(t, New(ctx, opts), teatest.WithInitialTermSize(w, h))
}

// fixtureFeed is two writes as kube-apiserver's hooks report them, on a
// three-member cluster: the viewer's create, refused at authorization, and
// the admin's create of a claim that two of the admission plugins that ran
// changed, committed at revision 13 and seen by the CSI provisioner.
func fixtureFeed() writepath.Feed {
	writes := make(chan writepath.Write, 2)
	writes <- writepath.Write{Duration: 800 * time.Microsecond, Verb: "create", Resource: "configmaps", Namespace: "default",
		User: "etcdscope-viewer", Groups: []string{"etcdscope:viewers", "system:authenticated"}, Authentication: "x509 client certificate",
		Decision: "forbid", Code: 403, RefusedAt: "authorization",
		Why: `configmaps is forbidden: User "etcdscope-viewer" cannot create resource "configmaps" in API group "" in the namespace "default"`}
	writes <- writepath.Write{Duration: 3200 * time.Microsecond, Verb: "create", Resource: "persistentvolumeclaims", Namespace: "default", Name: "data",
		User: "kubernetes-admin", Groups: []string{"system:masters", "system:authenticated"}, Authentication: "x509 client certificate",
		Decision: "allow", Admission: claimAdmission(), Key: "/registry/persistentvolumeclaims/default/data", Encoding: "protobuf",
		Revision: 13, Code: 201}
	reactions := make(chan writepath.Reaction, 1)
	reactions <- writepath.Reaction{Revision: 13, Component: "csi-provisioner", Event: "ADDED", Resource: "persistentvolumeclaims"}
	return writepath.Feed{Writes: writes, Reactions: reactions, Members: func() []writepath.Member {
		return []writepath.Member{
			{Name: "etcd-0", Running: true, Leader: true, Applied: 40},
			{Name: "etcd-1", Running: true, Applied: 40},
			{Name: "etcd-2", Running: true, Applied: 39},
		}
	}}
}

// claimAdmission is the admission plugins of kube-apiserver's default set
// that handle a create, in the order they run: DefaultStorageClass sets the
// claim's class and StorageObjectInUseProtection adds its finalizer.
func claimAdmission() []writepath.Admission {
	var steps []writepath.Admission
	for _, p := range []string{"NamespaceLifecycle", "LimitRanger", "ServiceAccount", "TaintNodesByCondition", "Priority",
		"DefaultTolerationSeconds", "DefaultStorageClass", "StorageObjectInUseProtection", "RuntimeClass", "DefaultIngressClass",
		"MutatingAdmissionWebhook"} {
		changes := p == "DefaultStorageClass" || p == "StorageObjectInUseProtection"
		steps = append(steps, writepath.Admission{Plugin: p, Phase: "mutating", Duration: 6 * time.Microsecond, Mutated: changes})
	}
	for _, p := range []string{"LimitRanger", "ServiceAccount", "PodSecurity", "Priority", "RuntimeClass", "CertificateApproval",
		"CertificateSigning", "CertificateSubjectRestriction", "ValidatingAdmissionPolicy", "ValidatingAdmissionWebhook", "ResourceQuota"} {
		steps = append(steps, writepath.Admission{Plugin: p, Phase: "validating", Duration: 4 * time.Microsecond})
	}
	return steps
}

func typeText(tm *teatest.TestModel, s string) {
	for _, r := range s {
		tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
	}
}

func press(tm *teatest.TestModel, k tea.KeyType) { tm.Send(tea.KeyMsg{Type: k}) }

// command types a command line and runs it.
func command(tm *teatest.TestModel, line string) {
	typeText(tm, ":"+line)
	press(tm, tea.KeyEnter)
}

// waitScreen waits until the screen shows every one of want.
func waitScreen(t *testing.T, tm *teatest.TestModel, want ...string) {
	t.Helper()
	uitest.WaitScreen(t, tm, waitFor, want...)
}

// finalView quits and returns the last screen.
func finalView(t *testing.T, tm *teatest.TestModel) string {
	t.Helper()
	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	return tm.FinalModel(t, teatest.WithFinalTimeout(waitFor)).View()
}

func TestGoldenScreens(t *testing.T) {
	screens := []struct {
		name string
		run  func(t *testing.T, tm *teatest.TestModel, src *uitest.Source)
	}{
		{"browse", func(t *testing.T, tm *teatest.TestModel, _ *uitest.Source) {
			command(tm, "key /registry/pods/default/web-0")
			waitScreen(t, tm, "web-1", "status:", "nginx:1.28")
		}},
		{"object", func(t *testing.T, tm *teatest.TestModel, _ *uitest.Source) {
			command(tm, "key /registry/secrets/default/db-password")
			waitScreen(t, tm, "password:")
			press(tm, tea.KeyTab)
			typeText(tm, "jjz")
			waitScreen(t, tm, "lines folded")
		}},
		{"tail", func(t *testing.T, tm *teatest.TestModel, src *uitest.Source) {
			typeText(tm, "2")
			waitScreen(t, tm, "waiting for events")
			src.PutObject(uitest.Pod("default", "web-0", "nginx:1.29", true))
			src.Notify("leader changed (Raft term 2 → 3)")
			src.Delete("/registry/pods/default/web-1")
			src.PutObject(uitest.Pod("default", "web-2", "nginx:1.29", false))
			waitScreen(t, tm, "spec.containers[0].image", "leader changed", "web-2")
		}},
		{"history", func(t *testing.T, tm *teatest.TestModel, _ *uitest.Source) {
			command(tm, "key /registry/pods/default/web-0")
			waitScreen(t, tm, "status:")
			typeText(tm, "h")
			waitScreen(t, tm, "diff revision", "nginx:1.27")
		}},
		{"cluster", func(t *testing.T, tm *teatest.TestModel, _ *uitest.Source) {
			typeText(tm, "4")
			waitScreen(t, tm, "etcd-2")
		}},
		{"check", func(t *testing.T, tm *teatest.TestModel, _ *uitest.Source) {
			typeText(tm, "4c")
			waitScreen(t, tm, "is one store: there are no members to compare")
		}},
		{"membervalues", func(t *testing.T, tm *teatest.TestModel, _ *uitest.Source) {
			tm.Send(common.OpenMemberValuesMsg{Key: "/registry/pods/default/web-0"})
			waitScreen(t, tm, "on each member at the newest revision", "the value, the same on every member", "nginx:1.28")
		}},
		{"writepath", func(t *testing.T, tm *teatest.TestModel, _ *uitest.Source) {
			typeText(tm, "5")
			waitScreen(t, tm, "committed at revision 13", "csi-provisioner")
		}},
		{"help", func(t *testing.T, tm *teatest.TestModel, _ *uitest.Source) {
			typeText(tm, "?")
			waitScreen(t, tm, "command line", "restart member")
		}},
	}
	for _, size := range [][2]int{{100, 30}, {160, 45}} {
		for _, sc := range screens {
			t.Run(fmt.Sprintf("%s_%dx%d", sc.name, size[0], size[1]), func(t *testing.T) {
				tm, src := newTest(t, size[0], size[1])
				waitScreen(t, tm, "pods/", "etcd-0 ★")
				sc.run(t, tm, src)
				golden.RequireEqual(t, []byte(finalView(t, tm)))
			})
		}
	}
}

var _ etcdview.Source = (*uitest.Source)(nil)

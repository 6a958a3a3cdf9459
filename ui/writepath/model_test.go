package writepath

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/etcdscope/etcdscope/ui/common"
	"github.com/etcdscope/etcdscope/ui/uitest"
	"github.com/muesli/termenv"
)

func init() { lipgloss.SetColorProfile(termenv.Ascii) }

// write is the admin's create of PersistentVolumeClaim default/NAME,
// committed at rev, as kube-apiserver runs it: two of the mutating plugins
// change the object (a default storage class, the protection finalizer).
func write(name string, rev int64) Write {
	return Write{
		Duration: 4200 * time.Microsecond, Verb: "create", Resource: "persistentvolumeclaims", Namespace: "default", Name: name,
		User: "kubernetes-admin", Groups: []string{"system:masters", "system:authenticated"}, Authentication: "x509 client certificate",
		Decision: "allow",
		Admission: []Admission{
			{Plugin: "LimitRanger", Phase: "mutating", Duration: 5 * time.Microsecond},
			{Plugin: "DefaultStorageClass", Phase: "mutating", Duration: 20 * time.Microsecond, Mutated: true},
			{Plugin: "StorageObjectInUseProtection", Phase: "mutating", Duration: 5 * time.Microsecond, Mutated: true},
			{Plugin: "ValidatingAdmissionPolicy", Phase: "validating", Duration: 30 * time.Microsecond},
			{Plugin: "ResourceQuota", Phase: "validating", Duration: 10 * time.Microsecond},
		},
		Key: "/registry/persistentvolumeclaims/default/" + name, Encoding: "protobuf", Revision: rev, Code: 201,
	}
}

// viewerCreate is the viewer's create of a ConfigMap, which RBAC does not
// allow: refused before its body was read, so with no name.
func viewerCreate() Write {
	return Write{
		Duration: 900 * time.Microsecond, Verb: "create", Resource: "configmaps", Namespace: "default",
		User: "etcdscope-viewer", Groups: []string{"etcdscope:viewers", "system:authenticated"}, Authentication: "x509 client certificate",
		Decision: "forbid", Code: 403, RefusedAt: "authorization",
		Why: `configmaps is forbidden: User "etcdscope-viewer" cannot create resource "configmaps" in API group "" in the namespace "default"`,
	}
}

// mustShow reports each of want that the screen got does not show.
func mustShow(t *testing.T, got, what string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, got)
		}
	}
}

// flat is the screen's words, one space apart: a wrapped row reads whole.
func flat(screen string) string { return strings.Join(strings.Fields(screen), " ") }

// open is a focused pane of 140x30 on a live feed (the channels are never
// read: the test hands the pane its messages).
func open() *Model {
	m := New(uitest.Common(uitest.New()), Feed{Writes: make(chan Write), Reactions: make(chan Reaction)})
	m.SetSize(140, 30)
	m.Focus(true)
	m.Update(MembersMsg{Members: []Member{
		{Name: "etcd-0", Running: true, Applied: 120},
		{Name: "etcd-1", Running: true, Leader: true, Applied: 121},
		{Name: "etcd-2", Running: false},
	}})
	return m
}

func TestSelectedWriteShowsTheWritePathStageByStage(t *testing.T) {
	m := open()
	m.Update(WritesMsg{Writes: []Write{write("a", 120), write("b", 121)}})
	m.Update(ReactionsMsg{Reactions: []Reaction{{Revision: 121, Component: "kube-proxy"}, {Revision: 121, Component: "endpoints controller"}}})
	got := m.View()
	mustShow(t, got, "write path",
		"etcd-1 applied 121 ★",
		"> 121", // the newest write is first and selected
		"201 4.2ms",
		"create persistentvolumeclaims default/b  HTTP 201 in 4.2ms  /registry/persistentvolumeclaims/default/b",
		"authentication  kubernetes-admin by x509 client certificate · groups system:masters, system:authenticated",
		"authorization   allow: system:masters bypasses RBAC",
		"admission       mutating: 3 ran in 30µs, 2 changed the object: DefaultStorageClass, StorageObjectInUseProtection",
		"                 validating: 2 ran in 40µs, all passed",
		"storage         protobuf → etcd txn on etcd-1 (Raft to a majority) → committed at revision 121",
		"watchers        revision 121 reached endpoints controller · kube-proxy",
	)
}

func TestRBACReasonIsShownWhenThereIsOne(t *testing.T) {
	m := open()
	w := write("a", 7)
	w.User, w.Groups, w.Authentication = "system:serviceaccount:kube-system:pvc-protection-controller", []string{"system:serviceaccounts"}, "service account token"
	w.Reason = `RBAC: allowed by ClusterRoleBinding "system:controller:pvc-protection-controller" of ClusterRole "system:controller:pvc-protection-controller" to ServiceAccount "pvc-protection-controller/kube-system"`
	m.Update(WritesMsg{Writes: []Write{w}})
	got := m.View()
	if !strings.Contains(got, `allow: RBAC: allowed by ClusterRoleBinding "system:controller:pvc-protection-controller"`) || strings.Contains(got, "bypasses") {
		t.Errorf("the RBAC reason is not the authorization row:\n%s", got)
	}
}

func TestRefusalAtAuthorizationShowsTheRBACMessage(t *testing.T) {
	m := open()
	m.Update(WritesMsg{Writes: []Write{viewerCreate()}})
	got := m.View()
	mustShow(t, got, "the refused write",
		"default/(name not read)",
		"403 authorization",
		"create configmaps default/(name not read)  HTTP 403 in 900µs",
		"authentication  etcdscope-viewer by x509 client certificate · groups etcdscope:viewers, system:authenticated",
		"authorization   forbid",
	)
	want := `refused at authorization: configmaps is forbidden: User "etcdscope-viewer" cannot create resource "configmaps" in API group "" in the namespace "default"`
	if !strings.Contains(flat(got), want) {
		t.Errorf("the refusal does not say why, %q:\n%s", want, got)
	}
	// It never reached admission or etcd, and no watcher can have seen it.
	for _, never := range []string{"admission ", "storage", "committed", "watchers"} {
		if strings.Contains(got, never) {
			t.Errorf("a write refused at authorization shows %q:\n%s", never, got)
		}
	}
}

func TestWebhookRefusalNamesThePluginAndItsMessageOnce(t *testing.T) {
	m := open()
	why := `admission webhook "images.etcdscope.io" denied the request: image "busybox:latest" is forbidden`
	w := write("", 0)
	w.Resource, w.Name, w.Key, w.Code = "pods", "shell", "/registry/pods/default/shell", 400
	w.RefusedAt, w.Why = "validating admission (ValidatingAdmissionWebhook)", why
	w.Admission = append(w.Admission[:3:3],
		Admission{Plugin: "MutatingAdmissionWebhook", Phase: "mutating", Duration: 2 * time.Millisecond, Mutated: true},
		Admission{Plugin: "PodSecurity", Phase: "validating", Duration: 50 * time.Microsecond},
		Admission{Plugin: "ValidatingAdmissionWebhook", Phase: "validating", Duration: time.Millisecond, Refusal: why})
	w.Webhooks = []string{"mutating webhook labels.etcdscope.io (etcdscope-labels): mutated the object"}
	m.Update(WritesMsg{Writes: []Write{w}})
	got := m.View()
	mustShow(t, got, "the webhook's refusal",
		"400 validating admission (", // cut to its column; the refusal row has it whole
		"mutating: 4 ran in 2.0ms, 3 changed the object: DefaultStorageClass, StorageObjectInUseProtection, MutatingAdmissionWebhook",
		"validating: 2 ran in 1.1ms, ValidatingAdmissionWebhook refused",
		"webhooks        mutating webhook labels.etcdscope.io (etcdscope-labels): mutated the object",
	)
	if n := strings.Count(flat(got), why); n != 1 {
		t.Errorf("the webhook's message shows %d times, want once, in the refusal:\n%s", n, got)
	}
	if !strings.Contains(flat(got), "refused at validating admission (ValidatingAdmissionWebhook): "+why) {
		t.Errorf("no refusal row:\n%s", got)
	}
}

func TestNarrowPaneStillShowsEachWritesResult(t *testing.T) {
	m := open()
	m.SetSize(100, 30)
	m.Update(WritesMsg{Writes: []Write{viewerCreate(), write("a", 120)}})
	got := m.View()
	// The plugins that changed the object wrap rather than being cut.
	mustShow(t, got, "at 100 cells the pane", "RESULT", "201 4.2ms", "403 authorization", "default/(name not read)", "StorageObjectInUseProtection")
	for i, row := range strings.Split(got, "\n") {
		if w := ansi.StringWidth(row); w > 100 {
			t.Errorf("row %d is %d cells wide: %q", i, w, row)
		}
	}
}

func TestCursorStaysOnItsWriteAsNewerOnesArrive(t *testing.T) {
	m := open()
	m.Update(WritesMsg{Writes: []Write{write("a", 10), write("b", 11), write("c", 12)}})
	uitest.Press(t, m.Update, "j")
	if w, _ := m.selected(); w.Name != "b" {
		t.Fatalf("j selected %s, want b", w.Name)
	}
	m.Update(WritesMsg{Writes: []Write{write("d", 13), write("e", 14)}})
	if w, _ := m.selected(); w.Name != "b" {
		t.Errorf("after two new writes the cursor is on %s, want b", w.Name)
	}
}

func TestEnterOpensTheObjectAtItsRevision(t *testing.T) {
	m := open()
	m.Update(WritesMsg{Writes: []Write{write("a", 42)}})
	cmd := m.Update(uitest.Key("enter"))
	if cmd == nil {
		t.Fatal("enter sent nothing")
	}
	msg, ok := cmd().(common.OpenObjectMsg)
	if !ok || msg.Key != "/registry/persistentvolumeclaims/default/a" || msg.Rev != 42 {
		t.Errorf("enter sent %#v, want the object at revision 42", msg)
	}
}

func TestConflictSaysItWasNotCommitted(t *testing.T) {
	m := open()
	w := write("dup", 0)
	w.Code, w.RefusedAt, w.Why = 409, "storage (the etcd transaction's precondition)", `persistentvolumeclaims "dup" already exists`
	m.Update(WritesMsg{Writes: []Write{w}})
	got := m.View()
	if !strings.Contains(flat(got), `refused at storage (the etcd transaction's precondition): persistentvolumeclaims "dup" already exists`) ||
		strings.Contains(got, "committed at") {
		t.Errorf("a 409 does not say so:\n%s", got)
	}
}

func TestPausedPaneCountsButKeepsItsRows(t *testing.T) {
	m := open()
	m.Update(WritesMsg{Writes: []Write{write("a", 1)}})
	uitest.Press(t, m.Update, "p")
	m.Update(WritesMsg{Writes: []Write{write("b", 2)}})
	if m.Total() != 2 || strings.Contains(m.View(), "default/b") {
		t.Errorf("paused: %d writes counted, screen:\n%s", m.Total(), m.View())
	}
}

func TestWithoutAnAPIServerThePaneSaysWhy(t *testing.T) {
	m := New(uitest.Common(uitest.New()), Feed{Note: "the write path shows in bundled mode"})
	m.SetSize(100, 20)
	if m.Init() != nil || !strings.Contains(m.View(), "the write path shows in bundled mode") {
		t.Errorf("no feed: %q", m.View())
	}
}

func TestViewLeavesTheModelAsItWas(t *testing.T) {
	m := open()
	m.Update(WritesMsg{Writes: []Write{write("a", 121)}})
	m.Update(ReactionsMsg{Reactions: []Reaction{
		{Revision: 121, Component: "scheduler"}, {Revision: 121, Component: "kube-proxy"}, {Revision: 121, Component: "endpoints controller"},
	}})
	before := slices.Clone(m.reactions[121])
	cursor, writes := m.cursor, slices.Clone(m.writes)
	got := m.View()
	if !slices.Equal(before, m.reactions[121]) || m.cursor != cursor || !reflect.DeepEqual(writes, m.writes) {
		t.Errorf("View changed the model: reactions %v, were %v", m.reactions[121], before)
	}
	if !strings.Contains(got, "revision 121 reached endpoints controller · kube-proxy · scheduler") {
		t.Errorf("watchers not listed by name:\n%s", got)
	}
}

func TestWritesWaitingOnTheFeedShowNewestFirst(t *testing.T) {
	writes := make(chan Write, 3)
	for i, name := range []string{"a", "b", "c"} {
		writes <- write(name, int64(10+i))
	}
	close(writes)
	m := New(uitest.Common(uitest.New()), Feed{Writes: writes})
	m.SetSize(140, 30)
	uitest.Drive(t, m.Update, m.Init())
	got := m.View()
	c, b, a := strings.Index(got, "default/c"), strings.Index(got, "default/b"), strings.Index(got, "default/a")
	if m.Total() != 3 || a < 0 || !(c < b && b < a) {
		t.Errorf("%d writes received; want 3, newest first:\n%s", m.Total(), got)
	}
}

func TestLongAdmissionListsLeaveTheOutcomeInView(t *testing.T) {
	m := open()
	m.SetSize(100, 30)
	w := write("a", 121)
	for i := range 30 {
		w.Admission = append(w.Admission, Admission{Plugin: fmt.Sprintf("example.com/policy-%d", i), Phase: "mutating", Mutated: true})
	}
	m.Update(WritesMsg{Writes: []Write{w}})
	m.Update(ReactionsMsg{Reactions: []Reaction{{Revision: 121, Component: "csi-provisioner"}}})
	got := m.View()
	mustShow(t, got, "with 32 plugins that changed the object, the pane",
		"example.com/policy-1, …", "validating: 2 ran", "committed at revision 121", "revision 121 reached csi-provisioner")
}

// TestWatchersSayWaitingOnlyWhileTheyAre: a write no watcher has reacted to
// waits for them only until they have received a later revision; one
// older than every reaction kept says nothing of its watchers.
func TestWatchersSayWaitingOnlyWhileTheyAre(t *testing.T) {
	m := open()
	m.Update(ReactionsMsg{Reactions: []Reaction{{Revision: 100, Component: "kube-proxy"}}})
	m.Update(WritesMsg{Writes: []Write{write("old", 90), write("lease", 120)}})
	mustShow(t, m.View(), "a fresh write", "watchers        none has received revision 120 yet")

	m.Update(ReactionsMsg{Reactions: []Reaction{{Revision: 125, Component: "coredns"}}})
	got := m.View()
	mustShow(t, got, "a write the watchers have passed", "watchers        no reporting watcher reacted to it; they are at revision 125")
	if strings.Contains(got, "none has received") {
		t.Errorf("a write the watchers passed still waits for them:\n%s", got)
	}
	m.Update(uitest.Key("j"))
	if got := m.View(); strings.Contains(got, "watchers ") {
		t.Errorf("a write older than every reaction kept has a watchers row:\n%s", got)
	}
}

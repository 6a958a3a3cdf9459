package get

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/etcdscope/etcdscope/cli/cmdutil"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/ui/uitest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// getOn runs `get args` on src with get's flags (-o, -l, ... from
// flags), as the command does once the source is open.
func getOn(t *testing.T, src etcdview.Source, tty bool, args []string, flags ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := NewCmd(&cmdutil.ConnFlags{})
	if err := cmd.ParseFlags(flags); err != nil {
		t.Fatal(err)
	}
	var f getFlags
	fs := cmd.Flags()
	f.namespace, _ = fs.GetString("namespace")
	f.allNamespaces, _ = fs.GetBool("all-namespaces")
	f.rev, _ = fs.GetInt64("rev")
	f.keys, _ = fs.GetBool("keys")
	f.labels, _ = fs.GetString("selector")
	f.fields, _ = fs.GetString("field-selector")
	f.sortBy, _ = fs.GetString("sort-by")
	f.where, _ = fs.GetString("where")
	out := &getOutputFlags{PrintFlags: &cmdutil.PrintFlags{Formats: getFormats, Templated: getTemplateFormats}}
	out.Output, _ = fs.GetString("output")
	out.noHeaders, _ = fs.GetBool("no-headers")
	out.template, _ = fs.GetString("template")
	out.allowMissing, _ = fs.GetBool("allow-missing-template-keys")
	var o, e bytes.Buffer
	pr := cmdutil.Printer{Out: &o, ErrOut: &e, P: cmdutil.Palette{TTY: tty}, EP: cmdutil.Palette{TTY: tty}, Output: out.Output}
	if f.out, err = out.listOutput(); err == nil {
		if err = f.check(); err == nil {
			err = runGet(context.Background(), pr, src, args, f)
		}
	}
	return o.String(), e.String(), err
}

// selectFixture is pods on two nodes in two phases, and events of both
// APIs.
func selectFixture() *uitest.Source {
	src := uitest.New()
	for i, p := range []struct {
		ns, name, node string
		phase          corev1.PodPhase
		labels         map[string]string
	}{
		{"shop", "web-0", "node-1", corev1.PodRunning, map[string]string{"app": "web", "tier": "front"}},
		{"shop", "web-1", "node-2", corev1.PodPending, map[string]string{"app": "web", "tier": "front"}},
		{"shop", "db-0", "node-2", corev1.PodRunning, map[string]string{"app": "db"}},
		{"ops", "agent", "node-1", corev1.PodSucceeded, nil},
	} {
		pod := uitest.Pod(p.ns, p.name, fmt.Sprintf("registry.example.com/%s:%d", p.name, 3-i), true)
		pod.Labels, pod.Spec.NodeName, pod.Status.Phase = p.labels, p.node, p.phase
		src.PutObject(pod)
	}
	src.PutObject(&corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "web-0.1", Namespace: "shop"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "web-0", Namespace: "shop"},
		Reason:         "Started", Source: corev1.EventSource{Component: "kubelet"}, Type: corev1.EventTypeNormal,
	})
	src.PutObject(&corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "web-1.1", Namespace: "shop"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "web-1", Namespace: "shop"},
		Reason:         "FailedScheduling", ReportingController: "default-scheduler", Type: corev1.EventTypeWarning,
		EventTime:         metav1.NewMicroTime(metav1.Now().Time),
		ReportingInstance: "scheduler-1",
		Action:            "Scheduling",
	})
	return src
}

func TestGetSelectsAsTheAPIServerDoes(t *testing.T) {
	src := selectFixture()
	for _, tc := range []struct {
		args  []string
		flags []string
		want  string
	}{
		{[]string{"pods"}, []string{"-A", "-o", "name", "-l", "app=web"}, "pod/web-0\npod/web-1\n"},
		{[]string{"po"}, []string{"-n", "shop", "-o", "name", "-l", "app in (web,db),tier!=front"}, "pod/db-0\n"},
		{[]string{"pods"}, []string{"-A", "-o", "name", "--field-selector", "status.phase=Running"}, "pod/db-0\npod/web-0\n"},
		{[]string{"pods"}, []string{"-A", "-o", "name", "--field-selector", "spec.nodeName=node-1,status.phase!=Running"}, "pod/agent\n"},
		{[]string{"pods"}, []string{"-A", "-o", "name", "--field-selector", "metadata.namespace=ops"}, "pod/agent\n"},
		// events' source falls back to reportingController (the registry's
		// ToSelectableFields), and events.k8s.io names its own fields.
		{[]string{"events"}, []string{"-A", "-o", "name", "--field-selector", "source=default-scheduler"}, "event/web-1.1\n"},
		{[]string{"events.events.k8s.io"}, []string{"-A", "-o", "name", "--field-selector", "regarding.name=web-0"}, "event.events.k8s.io/web-0.1\n"},
		{[]string{"pods"}, []string{"-A", "-o", "yaml", "--field-selector", "status.phase=Pending"}, "name: web-1\n"},
		{[]string{"pods"}, []string{"-A", "-o", "name", "-l", "app=nothing"}, ""},
	} {
		out, _, err := getOn(t, src, false, tc.args, tc.flags...)
		if err != nil || tc.want == "" && out != "" || !strings.Contains(out, tc.want) {
			t.Errorf("get %s %s: %v\n%s\nwant %q", tc.args[0], strings.Join(tc.flags, " "), err, out, tc.want)
		}
		if strings.Contains(strings.Join(tc.flags, " "), "yaml") && strings.Count(out, "kind: Pod") != 1 {
			t.Errorf("-o yaml with a selector: %d pods in\n%s", strings.Count(out, "kind: Pod"), out)
		}
	}
}

func TestGetSortsByAJSONPath(t *testing.T) {
	src := selectFixture()
	out, _, err := getOn(t, src, false, []string{"pods"}, "-A", "-o", "name", "--sort-by", "{.spec.containers[0].image}")
	if want := "pod/agent\npod/db-0\npod/web-0\npod/web-1\n"; err != nil || out != want {
		t.Errorf("-o name sorted by image: %v\n%s\nwant\n%s", err, out, want)
	}
	out, _, err = getOn(t, src, false, []string{"pods"}, "-A", "--sort-by", ".spec.nodeName", "--no-headers")
	var names []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if f := strings.Fields(line); len(f) > 1 {
			names = append(names, f[1])
		}
	}
	if want := []string{"agent", "web-0", "db-0", "web-1"}; err != nil || !slices.Equal(names, want) {
		t.Errorf("table sorted by node, no headers: %v, %q, want rows %q\n%s", err, names, want, out)
	}
	out, _, err = getOn(t, src, false, []string{"pods"}, "-A", "-o", "custom-columns=NAME:.metadata.name,NODE:.spec.nodeName", "--sort-by", ".metadata.name")
	if want := "NAME    NODE\nagent   node-1\ndb-0    node-2\nweb-0   node-1\nweb-1   node-2\n"; err != nil || out != want {
		t.Errorf("custom columns sorted by name: %v\n%q\nwant\n%q", err, out, want)
	}
}

// TestGetRefusesBadFlagsClearly: every refusal names what is wrong, and
// those that need no read come before any.
func TestGetRefusesBadFlagsClearly(t *testing.T) {
	src := selectFixture()
	for _, tc := range []struct {
		args  []string
		flags []string
		want  string
	}{
		{[]string{"pods"}, []string{"-l", "app in (web"}, "-l app in (web: unable to parse requirement"},
		{[]string{"pods"}, []string{"--field-selector", "status.phase"}, "--field-selector status.phase: invalid selector"},
		{[]string{"pods"}, []string{"--field-selector", "spec.bogus=x"}, "field label not supported: spec.bogus"},
		{[]string{"configmaps"}, []string{"--field-selector", "data.x=y"}, `"data.x" is not a known field selector: only "metadata.name", "metadata.namespace"`},
		{[]string{"pods"}, []string{"-o", "jsonpath={.items[*"}, "error parsing jsonpath {.items[*, unterminated array"},
		{[]string{"pods"}, []string{"-o", "go-template={{.items"}, "error parsing template {{.items, template: output:1: unclosed action"},
		{[]string{"pods"}, []string{"-o", "jsonpath"}, "template format specified but no template given"},
		{[]string{"pods"}, []string{"-A", "-o", "jsonpath={.items[0].spec.nothing}", "--allow-missing-template-keys=false"}, "error executing jsonpath"},
		{[]string{"pods"}, []string{"-o", "custom-columns=NAME"}, "unexpected custom-columns spec: NAME, expected <header>:<json-path-expr>"},
		{[]string{"pods"}, []string{"-A", "--sort-by", ".metadata.labels"}, "unsortable type: map[string]interface {}"},
		{[]string{"pods"}, []string{"-A", "-o", "name", "--sort-by", ".spec.none"}, `couldn't find any field with path "{.spec.none}"`},
		{[]string{"pods"}, []string{"--keys", "-l", "app=web"}, "--keys lists keys without reading values"},
		{[]string{"pods", "web-0"}, []string{"-n", "shop", "-l", "app=web"}, "a NAME cannot be given with a selector"},
		{[]string{"/registry/pods/shop/web-0"}, []string{"-o", "wide"}, "is a key: -o wide, name and templates, --keys, -l, --field-selector, --where and --sort-by list a RESOURCE"},
		{[]string{"flurbs"}, []string{"-A"}, ""},
	} {
		_, _, err := getOn(t, src, false, tc.args, tc.flags...)
		if tc.want == "" {
			// A word that names no resource is a key, as compact_rev_key
			// is: one not found.
			if err == nil || !strings.Contains(err.Error(), "flurbs") {
				t.Errorf("get flurbs: %v", err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("get %s %s: %v, want %q", tc.args[0], strings.Join(tc.flags, " "), err, tc.want)
		}
	}
}

// TestGetTableOnATerminalIsInert prints cells holding what a terminal
// obeys: escaped on a terminal, as kubectl prints them to a pipe.
func TestGetTableOnATerminalIsInert(t *testing.T) {
	src := uitest.New()
	src.PutObject(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "motd", Namespace: "default"}})
	pod := uitest.Pod("default", "web-0", "nginx", true)
	pod.Spec.NodeName = "node\x1b]0;owned\x07\u202e"
	src.PutObject(pod)
	for _, flags := range [][]string{{"-o", "wide"}, {"-o", "custom-columns=N:.spec.nodeName"}, {"-o", "jsonpath={.items[*].spec.nodeName}"}} {
		out, _, err := getOn(t, src, true, []string{"pods"}, flags...)
		if err != nil || strings.ContainsAny(out, "\x1b\x07\u202e") || !strings.Contains(out, `node\x1b]0;owned\x07\u202e`) {
			t.Errorf("%s on a terminal: %v %q", flags[1], err, out)
		}
		out, _, _ = getOn(t, src, false, []string{"pods"}, flags...)
		if !strings.Contains(out, "\u202e") {
			t.Errorf("%s to a pipe: %q, want the bytes as stored", flags[1], out)
		}
	}
}

// crd is a CustomResourceDefinition as kube-apiserver stores it (JSON),
// whose v1 prints the given columns.
func crd(columns string) []byte {
	return []byte(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
"metadata":{"name":"widgets.example.com","creationTimestamp":"2026-01-01T00:00:00Z"},
"spec":{"group":"example.com","scope":"Namespaced","names":{"plural":"widgets","singular":"widget","kind":"Widget","shortNames":["wdg"]},
"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}},"additionalPrinterColumns":[` + columns + `]}]},
"status":{"acceptedNames":{"plural":"widgets","singular":"widget","kind":"Widget","shortNames":["wdg"]}}}`)
}

// TestGetCustomResourcesPrintTheirCRDsColumnsAtTheRevision reads a custom
// resource by each of its names, with its CRD's printer columns as of the
// revision read: columns changed later do not apply to an older read.
func TestGetCustomResourcesPrintTheirCRDsColumnsAtTheRevision(t *testing.T) {
	src := uitest.New()
	key := "/registry/apiextensions.k8s.io/customresourcedefinitions/widgets.example.com"
	src.Put(key, crd(`{"name":"Color","type":"string","jsonPath":".spec.color"}`))
	src.Put("/registry/example.com/widgets/shop/gear", []byte(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"gear","namespace":"shop","creationTimestamp":"2026-01-01T00:00:00Z"},"spec":{"color":"teal","size":12}}`))
	before := src.Put(key, crd(`{"name":"Color","type":"string","jsonPath":".spec.color"}`))
	src.Put(key, crd(`{"name":"Size","type":"integer","jsonPath":".spec.size"},{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}`))
	for _, name := range []string{"widgets", "widget", "wdg", "Widget", "widgets.example.com"} {
		out, _, err := getOn(t, src, false, []string{name}, "-A")
		lines := strings.Split(out, "\n")
		if err != nil || len(lines) != 3 || strings.Join(strings.Fields(lines[0]), " ") != "NAMESPACE NAME SIZE AGE REVISION" ||
			!strings.HasPrefix(strings.Join(strings.Fields(lines[1]), " "), "shop gear 12 ") || !strings.HasSuffix(lines[1], "   3") {
			t.Errorf("get %s -A: %v\n%s", name, err, out)
		}
	}
	out, _, err := getOn(t, src, false, []string{"widgets"}, "-A", "--rev", fmt.Sprint(before))
	if want := "NAMESPACE   NAME   COLOR   REVISION\nshop        gear   teal    3\n"; err != nil || out != want {
		t.Errorf("get widgets -A --rev %d: %v\n%s\nwant\n%s", before, err, out, want)
	}
	out, _, err = getOn(t, src, false, []string{"widgets", "gear"}, "-n", "shop", "-o", "name")
	if err != nil || out != "widget.example.com/gear\n" {
		t.Errorf("get widgets gear -o name: %v %q", err, out)
	}
}

// TestGetListsEmptyAsKubectlDoes: the table says none were found, on
// stderr, in kubectl's words.
func TestGetListsEmptyAsKubectlDoes(t *testing.T) {
	src := selectFixture()
	for _, tc := range []struct {
		args  []string
		flags []string
		want  string
	}{
		{[]string{"pods"}, nil, "No resources found in default namespace.\n"},
		{[]string{"pods"}, []string{"-A", "-l", "app=none"}, "No resources found\n"},
		{[]string{"nodes"}, nil, "No resources found\n"},
	} {
		out, errOut, err := getOn(t, src, false, tc.args, tc.flags...)
		if err != nil || out != "" || errOut != tc.want {
			t.Errorf("get %s %v: %v, %q, %q, want %q on stderr", tc.args[0], tc.flags, err, out, errOut, tc.want)
		}
	}
}

// TestGetLeavesOutAValueThatIsNoObject: a listing shows every object but
// a value it cannot show, and names its key and what it is on stderr;
// --keys still lists every key.
func TestGetLeavesOutAValueThatIsNoObject(t *testing.T) {
	src := selectFixture()
	src.Put("/registry/pods/shop/broken", []byte("not an object"))
	for _, flags := range [][]string{{"-A"}, {"-A", "-o", "name"}, {"-A", "-o", "yaml"}} {
		out, errOut, err := getOn(t, src, false, []string{"pods"}, flags...)
		if want := "etcdscope: 1 value could not be decoded (first: /registry/pods/shop/broken: text, 13 bytes: not a Kubernetes object)\n"; err != nil || errOut != want {
			t.Errorf("get pods %v: %v, stderr %q, want %q", flags, err, errOut, want)
		}
		if !strings.Contains(out, "web-0") || !strings.Contains(out, "web-1") || !strings.Contains(out, "db-0") || !strings.Contains(out, "agent") {
			t.Errorf("get pods %v left out more than the value that is no object:\n%s", flags, out)
		}
	}
	out, _, err := getOn(t, src, false, []string{"pods"}, "-A", "--keys")
	if err != nil || !strings.Contains(out, "broken") || !strings.Contains(out, "web-1") {
		t.Errorf("--keys: %v\n%s", err, out)
	}
}

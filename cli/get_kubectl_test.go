package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestGetPrintsWhatKubectlPrints runs the bundled control plane as a child
// process (kube-controller-manager can start once per process), applies
// one object of each kind it serves and a custom resource with printer
// columns, and for every resource kubectl can list checks that
// `etcdscope get RESOURCE -A`, read from etcd, prints what the real
// kubectl prints from the API server: the same columns and cells (AGE and
// other relative times aside, REVISION removed), and the same -o wide,
// -o name, -o jsonpath and -o custom-columns; then selectors and
// --sort-by.
func TestGetPrintsWhatKubectlPrints(t *testing.T) {
	t.Parallel()
	k := newKubectl(t)
	p := startServe(t, "--apiserver", "--members", "1")
	k.kubeconfig = exportVar(t, p.export, "KUBECONFIG")
	conn := p.conn()
	k.run(t, "apply", "-f", "testdata/columns/namespace.yaml")
	k.run(t, "wait", "--for", "create", "--timeout", "60s", "-n", "columns-e2e", "serviceaccount/default")
	k.run(t, "apply", "-f", "testdata/columns/manifest.yaml")
	k.run(t, "wait", "--for", "condition=established", "--timeout", "60s", "crd/widgets.columns.etcdscope.io")
	k.run(t, "apply", "-f", "testdata/columns/widgets.yaml")
	k.defaultedOnRead(t)

	var resources []string
	for _, r := range strings.Fields(k.run(t, "api-resources", "--verbs=list", "-o", "name")) {
		// ComponentStatuses are the API server's health checks, not
		// objects in etcd.
		if r != "componentstatuses" {
			resources = append(resources, r)
		}
	}
	if !slices.Contains(resources, "widgets.columns.etcdscope.io") || len(resources) < 60 {
		t.Fatalf("kubectl lists %d resources, without the custom resource or fewer than the bundled server serves: %q", len(resources), resources)
	}
	// Each output, and the selectors, in a subtest of its own that runs
	// beside the others: the comparisons are hundreds of processes each,
	// and a part left to run alone at the end of the suite is shorter.
	outputs := []struct {
		name string
		args []string
	}{
		{"table", nil},
		{"wide", []string{"-o", "wide"}},
		{"name", []string{"-o", "name"}},
		{"jsonpath", []string{"-o", `jsonpath={range .items[*]}{.apiVersion} {.kind} {.metadata.namespace}/{.metadata.name} {.metadata.uid} {.metadata.resourceVersion}{"\n"}{end}`}},
		{"custom-columns", []string{"-o", "custom-columns=NAME:.metadata.name,NS:.metadata.namespace,KIND:.kind,VERSION:.apiVersion,LABELS:.metadata.labels,OWNERS:.metadata.ownerReferences[*].name"}},
	}
	for _, out := range outputs {
		t.Run(out.name, func(t *testing.T) {
			t.Parallel()
			k := k.ownCache(t)
			for _, r := range resources {
				k.compare(t, conn, append([]string{r, "-A"}, out.args...))
			}
		})
	}
	t.Run("selectors and sort", func(t *testing.T) {
		t.Parallel()
		k := k.ownCache(t)
		for _, args := range [][]string{
			{"pods", "-A", "--field-selector", "status.phase=Pending"},
			{"pods", "-A", "-o", "wide", "--field-selector", "spec.nodeName=,metadata.namespace=columns-e2e"},
			{"events", "-A", "--field-selector", "involvedObject.kind=ConfigMap,reason=Deployed"},
			{"events.events.k8s.io", "-A", "--field-selector", "reason=Scaled,regarding.kind=Deployment"},
			{"secrets", "-A", "--field-selector", "type=Opaque"},
			{"configmaps", "-A", "-l", "app=web"},
			{"pods", "-n", "columns-e2e", "-l", "app in (web,db),tier!=front"},
			{"widgets", "-n", "columns-e2e", "--field-selector", "metadata.name=gear", "-o", "wide"},
			{"pods", "-A", "--sort-by", ".metadata.name"},
			{"pods", "-A", "--sort-by", "{.spec.containers[0].image}", "-o", "name"},
			{"replicasets", "-A", "--sort-by", ".spec.replicas", "-o", "custom-columns=N:.metadata.name,R:.spec.replicas"},
			{"widgets", "-A", "--sort-by", ".spec.size"},
			{"flowschemas", "--sort-by", ".spec.matchingPrecedence", "-o", "jsonpath={.items[*].metadata.name}"},
			{"pods", "web-0", "-n", "columns-e2e", "-o", "jsonpath={.metadata.name} {.spec.containers[*].image}"},
			{"deployment", "web", "-n", "columns-e2e", "-o", "wide"},
			// Custom resources as served: defaulted and pruned on read,
			// selected by the CRD's selectableFields.
			{"gadgets", "-n", "columns-e2e", "-o", `jsonpath={range .items[*]}{.metadata.name} {.metadata.generation} {.spec}{"\n"}{end}`},
			{"gadgets", "-A", "-o", "wide", "--field-selector", "spec.color=blue"},
			{"gadgets", "-A", "--field-selector", "spec.size=3,spec.enabled=true"},
			{"gadgets", "-A", "--field-selector", "spec.owner=", "-o", "name"},
			{"gadgets", "-A", "--field-selector", "spec.enabled=false,spec.size!=3", "-o", "custom-columns=N:.metadata.name,CPU:.spec.limits.cpu"},
			{"gadgets", "-A", "--sort-by", ".spec.size", "-l", "app!=db"},
		} {
			k.compare(t, conn, args)
		}
		// A field that is not selectable: refused by both with the API
		// server's words.
		_, kubectlErr, _ := k.output(t, "get", "gadgets", "-A", "--field-selector", "spec.limits.cpu=1")
		code, _, errOut := runCommand(t, append([]string{"get", "gadgets", "-A", "--field-selector", "spec.limits.cpu=1"}, conn...)...)
		const refused = "field label not supported: spec.limits.cpu\n"
		if code == 0 || !strings.HasSuffix(errOut, refused) || !strings.HasSuffix(kubectlErr, refused) {
			t.Errorf("a field that is not selectable: etcdscope (exit %d) %q, kubectl %q, want both to end %q", code, errOut, kubectlErr, refused)
		}
	})
}

// defaultedOnRead creates Gadgets under a CRD without defaults, then gives
// the CRD defaults and selectable fields, and waits until the API server
// serves the objects with them: etcd holds the objects as created.
func (k *kubectl) defaultedOnRead(t *testing.T) {
	t.Helper()
	k.run(t, "apply", "-f", "testdata/columns/gadgets-crd.yaml")
	k.run(t, "wait", "--for", "condition=established", "--timeout", "60s", "crd/gadgets.columns.etcdscope.io")
	k.run(t, "apply", "-f", "testdata/columns/gadgets.yaml")
	k.run(t, "apply", "-f", "testdata/columns/gadgets-defaults.yaml")
	for deadline := time.Now().Add(time.Minute); ; {
		// The API server serves a CRD's new schema once its handler has
		// seen the update: the selectable field proves it has.
		out, _, code := k.output(t, "get", "gadgets", "-n", "columns-e2e", "--field-selector", "spec.color=blue", "-o", "name")
		if code == 0 && strings.Contains(out, "gadget.columns.etcdscope.io/bare\n") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the API server does not serve gadgets-defaults.yaml's schema after a minute: %q", out)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// kubectl runs the real kubectl on the bundled control plane.
type kubectl struct {
	path, kubeconfig, home string
}

func newKubectl(t *testing.T) *kubectl {
	const path = "/usr/bin/kubectl"
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("ETCDSCOPE_REQUIRE_KUBECTL") == "1" {
			t.Fatalf("kubectl required (ETCDSCOPE_REQUIRE_KUBECTL=1): %v", err)
		}
		t.Skip("no kubectl")
	}
	return &kubectl{path: path, home: t.TempDir()}
}

// ownCache is k with a home and discovery cache of the test's own, for
// kubectl run beside k's other users.
func (k *kubectl) ownCache(t *testing.T) *kubectl {
	return &kubectl{path: k.path, kubeconfig: k.kubeconfig, home: t.TempDir()}
}

// output runs kubectl args and returns its stdout, stderr and exit
// status.
func (k *kubectl) output(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, k.path, append([]string{"--kubeconfig", k.kubeconfig, "--cache-dir", k.home}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+k.home)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if err != nil && cmd.ProcessState == nil {
		t.Fatalf("kubectl %s: %v", strings.Join(args, " "), err)
	}
	return out.String(), errOut.String(), cmd.ProcessState.ExitCode()
}

func (k *kubectl) run(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, code := k.output(t, args...)
	if code != 0 {
		t.Fatalf("kubectl %s: exit status %d\n%s", strings.Join(args, " "), code, errOut)
	}
	return out
}

// compare checks that `etcdscope get args`, connected by conn, prints what
// `kubectl get args` prints. The cluster's controllers keep writing: when the two differ,
// kubectl is asked again, and the state is read again until kubectl
// prints the same twice in a row around etcdscope's read.
func (k *kubectl) compare(t *testing.T, conn, args []string) {
	t.Helper()
	want := k.printed(t, args)
	for attempt := 0; ; attempt++ {
		code, out, errOut := runCommand(t, append(append([]string{"get"}, conn...), args...)...)
		got := printed{normalize(args, out), noResources(errOut), code}
		if got == want {
			return
		}
		after := k.printed(t, args)
		if got == after {
			return
		}
		if after == want || attempt == 4 {
			t.Errorf("get %s:\netcdscope (exit %d, %q):\n%s\nkubectl (exit %d, %q):\n%s",
				strings.Join(args, " "), got.code, got.empty, got.text, after.code, after.empty, after.text)
			return
		}
		want = after
	}
}

// printed is what a get printed, made comparable.
type printed struct {
	text  string
	empty string // "No resources found ..." on stderr
	code  int
}

func (k *kubectl) printed(t *testing.T, args []string) printed {
	out, errOut, code := k.output(t, append([]string{"get"}, args...)...)
	return printed{normalize(args, out), noResources(errOut), code}
}

func noResources(stderr string) string {
	for _, line := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(line, "No resources found") {
			return line
		}
	}
	return ""
}

// normalize is a table with AGE and REVISION left out and relative times
// replaced, one cell a column; other outputs as they are.
func normalize(args []string, out string) string {
	for i, a := range args {
		if a == "-o" && i+1 < len(args) && (args[i+1] == "name" || strings.HasPrefix(args[i+1], "jsonpath")) {
			return out
		}
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) == 0 || lines[0] == "" {
		return ""
	}
	starts := columnStarts(lines[0])
	var b strings.Builder
	for _, line := range lines {
		cells := cutColumns(line, starts)
		for i, c := range cells {
			header := strings.TrimSpace(cutColumns(lines[0], starts)[i])
			if header == "AGE" || header == "REVISION" {
				continue
			}
			fmt.Fprintf(&b, "%q ", relativeTime.ReplaceAllString(c, "<t>"))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// relativeTime is a cell that is a duration printed relative to now (AGE,
// LAST SEEN, a restart's "(5s ago)").
var relativeTime = regexp.MustCompile(`^(<invalid>|\d+[smhdy](\d+[smhd])?)$|\(\d+[smhdy](\d+[smhd])? ago\)`)

// columnStarts are where the header's columns start: a column is
// separated from the next by the tabwriter's padding of three spaces, and
// a header may hold one space ("NOMINATED NODE").
func columnStarts(header string) []int {
	r := []rune(header)
	starts := []int{0}
	for i := 2; i < len(r); i++ {
		if r[i] != ' ' && r[i-1] == ' ' && r[i-2] == ' ' {
			starts = append(starts, i)
		}
	}
	return starts
}

func cutColumns(line string, starts []int) []string {
	r := []rune(line)
	cells := make([]string, len(starts))
	for i, s := range starts {
		end := len(r)
		if i+1 < len(starts) {
			end = min(starts[i+1], len(r))
		}
		if s < end {
			cells[i] = strings.TrimSpace(string(r[s:end]))
		}
	}
	return cells
}

// exportVar is a variable's value in serve's export line.
func exportVar(t *testing.T, export, name string) string {
	for _, f := range strings.Fields(export) {
		if v, ok := strings.CutPrefix(f, name+"="); ok {
			return v
		}
	}
	t.Fatalf("export line names no %s: %s", name, export)
	return ""
}

package get

import (
	"strconv"
	"strings"
	"testing"

	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/ui/uitest"

	corev1 "k8s.io/api/core/v1"
)

func TestGetWhereKeepsWhatTheExpressionIsTrueOf(t *testing.T) {
	src := selectFixture()
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{[]string{"-A", "-o", "name", "--where", `object.status.phase != "Running"`}, "pod/agent\npod/web-1\n"},
		// After -l.
		{[]string{"-A", "-o", "name", "-l", "app=web", "--where", `object.spec.nodeName == "node-2"`}, "pod/web-1\n"},
		{[]string{"-A", "-o", "name", "--where", `object.spec.containers.exists(c, c.image.startsWith("registry.example.com/db"))`}, "pod/db-0\n"},
		{[]string{"-n", "shop", "-o", "name", "--where", `has(object.metadata.labels.tier) && object.metadata.labels.tier == "front"`}, "pod/web-0\npod/web-1\n"},
		{[]string{"-A", "-o", "custom-columns=NAME:.metadata.name,NODE:.spec.nodeName", "--where", `object.spec.nodeName == "node-1"`}, "NAME    NODE\nagent   node-1\nweb-0   node-1\n"},
		{[]string{"-A", "-o", "jsonpath={.items[*].metadata.name}", "--where", `object.status.phase == "Running"`}, "db-0 web-0"},
		{[]string{"-A", "-o", "name", "--sort-by", ".spec.nodeName", "--where", `object.metadata.namespace == "shop"`}, "pod/web-0\npod/db-0\npod/web-1\n"},
	} {
		out, errOut, err := getOn(t, src, false, []string{"pods"}, tc.flags...)
		if err != nil || out != tc.want || errOut != "" {
			t.Errorf("get pods %s: %v\n%s%s\nwant\n%s", strings.Join(tc.flags, " "), err, out, errOut, tc.want)
		}
	}
	// The table, and YAML (listed by writeList, not the lister's items).
	out, _, err := getOn(t, src, false, []string{"pods"}, "-A", "--where", `object.status.phase == "Pending"`)
	if lines := strings.Split(strings.TrimSpace(out), "\n"); err != nil || len(lines) != 2 || !strings.HasPrefix(lines[0], "NAMESPACE   NAME    READY   STATUS") || !strings.Contains(lines[1], "web-1") {
		t.Errorf("table: %v\n%s", err, out)
	}
	out, _, err = getOn(t, src, false, []string{"pods"}, "-A", "-o", "yaml", "--where", `object.status.phase == "Running"`)
	if err != nil || strings.Count(out, "kind: Pod") != 2 || !strings.Contains(out, "name: db-0") || !strings.Contains(out, "name: web-0") {
		t.Errorf("-o yaml: %v\n%s", err, out)
	}
	// One NAME: the filter applies to it.
	out, _, err = getOn(t, src, false, []string{"pods", "web-0"}, "-n", "shop", "-o", "name", "--where", `object.status.phase == "Pending"`)
	if err != nil || out != "" {
		t.Errorf("a NAME the filter is false of: %v %q", err, out)
	}
}

func TestGetWhereSkipsAndCountsWhatItCannotEvaluate(t *testing.T) {
	src := selectFixture()
	for _, o := range []string{"name", "yaml", ""} {
		out, errOut, err := getOn(t, src, false, []string{"pods"}, "-A", "-o", o, "--where", `object.metadata.labels.app == "web"`)
		want := "etcdscope: --where skipped 1 objects it could not evaluate (first: ops/agent: no such key: labels)\n"
		if err != nil || errOut != want || !strings.Contains(out, "web-0") || !strings.Contains(out, "web-1") || strings.Contains(out, "db-0") {
			t.Errorf("-o %q: %v\nstdout:\n%s\nstderr:\n%s\nwant stderr %q", o, err, out, errOut, want)
		}
	}
	// No object could be evaluated: a misspelt field, not an answer.
	_, _, err := getOn(t, src, false, []string{"pods"}, "-A", "-o", "name", "--where", `object.stauts.phase == "Running"`)
	if err == nil || !strings.Contains(err.Error(), "--where skipped 4 objects it could not evaluate (first: ops/agent: no such key: stauts), every one it read") {
		t.Errorf("every object failed: %v", err)
	}
}

func TestGetWhereErrors(t *testing.T) {
	src := selectFixture()
	for _, tc := range []struct {
		args, flags []string
		want        string
	}{
		{[]string{"pods"}, []string{"-A", "--keys", "--where", "true"}, "--keys lists keys without reading values: it takes no -l, --field-selector, --sort-by, --where or -o"},
		{[]string{"/registry/pods/shop/web-0"}, []string{"--where", "true"}, "is a key: -o wide, name and templates, --keys, -l, --field-selector, --where and --sort-by list a RESOURCE"},
		{[]string{"pods"}, []string{"-A", "--where", `size(object.spec.containers)`}, "--where: 1:1: the expression is of type int, not bool"},
	} {
		if _, _, err := getOn(t, src, false, tc.args, tc.flags...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("get %v %v: %v, want %q", tc.args, tc.flags, err, tc.want)
		}
	}
}

// TestGetWhereTrueChangesNothing: a filter that keeps every object prints
// what kubectl's get prints without one, in every output.
func TestGetWhereTrueChangesNothing(t *testing.T) {
	src := selectFixture()
	for _, flags := range [][]string{
		{}, {"-o", "wide"}, {"-o", "name"}, {"-o", "yaml"}, {"-o", "json"},
		{"-o", "custom-columns=NAME:.metadata.name,IMAGE:.spec.containers[0].image"},
		{"-o", "jsonpath={range .items[*]}{.metadata.name} {.status.phase}{\"\\n\"}{end}"},
		{"-o", "go-template={{range .items}}{{.metadata.name}}{{\"\\n\"}}{{end}}"},
		{"--sort-by", ".metadata.name"}, {"--no-headers"},
	} {
		for _, resource := range []string{"pods", "events"} {
			args := append([]string{"-A"}, flags...)
			want, _, err := getOn(t, src, false, []string{resource}, args...)
			if err != nil {
				t.Fatal(err)
			}
			got, errOut, err := getOn(t, src, false, []string{resource}, append(args, "--where", `has(object.metadata.name)`)...)
			if err != nil || got != want || errOut != "" {
				t.Errorf("get %s %s --where: %v %s\n%s\nwant\n%s", resource, strings.Join(flags, " "), err, errOut, got, want)
			}
		}
	}
}

func TestGetWhereAtARevisionAndOnADataFile(t *testing.T) {
	src := selectFixture()
	rev := src.Revision()
	web := uitest.Pod("shop", "web-1", "registry.example.com/web-1:2", true)
	web.Spec.NodeName, web.Status.Phase = "node-2", corev1.PodRunning
	src.PutObject(web)
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{[]string{"-A", "-o", "name", "--where", `object.status.phase == "Pending"`}, ""},
		{[]string{"-A", "-o", "name", "--rev", strconv.FormatInt(rev, 10), "--where", `object.status.phase == "Pending"`}, "pod/web-1\n"},
	} {
		if out, _, err := getOn(t, src, false, []string{"pods"}, tc.flags...); err != nil || out != tc.want {
			t.Errorf("get pods %s: %v %q, want %q", strings.Join(tc.flags, " "), err, out, tc.want)
		}
	}
	db, err := etcdview.OpenFileWith(kube17+"boltdb-db", etcdview.FileOptions{NoIndexFile: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if out, _, err := getOn(t, db, false, []string{"pods"}, "-A", "-o", "name", "--where", `object.status.phase == "Succeeded" && object.spec.containers[0].image == "perl"`); err != nil || out != "pod/pi-dqtsw\n" {
		t.Errorf("--db: %v %q", err, out)
	}
	if out, _, err := getOn(t, db, false, []string{"jobs"}, "-A", "--where", `object.spec.completions > 1`); err != nil || out != "" {
		t.Errorf("--db, a job with one completion: %v %q", err, out)
	}
}

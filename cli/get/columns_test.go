package get

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/etcdscope/etcdscope/cli/cmdutil"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/printers"
	kubectlget "k8s.io/kubectl/pkg/cmd/get"
)

// columnsObjects are objects with what custom columns meet: nested maps,
// lists, numbers, a missing field, an escape sequence, a line break.
func columnsObjects() []map[string]any {
	return []map[string]any{
		{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "web-0", "namespace": "shop", "labels": map[string]any{"app": "web", "tier": "front"}},
			"spec": map[string]any{"containers": []any{map[string]any{"name": "a", "image": "nginx"}, map[string]any{"name": "b", "image": "envoy"}}, "priority": int64(7)}},
		{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "db-0", "namespace": "shop"},
			"spec": map[string]any{"containers": []any{map[string]any{"name": "db"}}, "weight": 2.5}},
		{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "motd\x1b[2J", "annotations": map[string]any{"note": "two\nlines"}}},
	}
}

// etcdscopeColumns prints objs as get -o custom-columns does.
func etcdscopeColumns(format, spec string, objs []map[string]any, noHeaders bool) (string, error) {
	cols, err := parseCustomColumns(format, spec)
	if err != nil {
		return "", err
	}
	var out bytes.Buffer
	w := printers.GetNewTabWriter(&out)
	if !noHeaders {
		w.Write(columnsHeader(cols))
	}
	ps := columnParsers(cols)
	for _, o := range objs {
		row, err := appendColumnsRow(nil, ps, o, cmdutil.Palette{})
		if err != nil {
			return "", err
		}
		w.Write(row)
	}
	w.Flush()
	return out.String(), nil
}

// kubectlColumns prints them with kubectl's CustomColumnsPrinter, as its
// CustomColumnsPrintFlags make it, over the List kubectl get hands it.
func kubectlColumns(format, spec string, objs []map[string]any, noHeaders bool) (string, error) {
	var p *kubectlget.CustomColumnsPrinter
	var err error
	if format == "custom-columns-file" {
		f, ferr := os.Open(spec)
		if ferr != nil {
			return "", ferr
		}
		defer f.Close()
		p, err = kubectlget.NewCustomColumnsPrinterFromTemplate(f, nil)
	} else {
		p, err = kubectlget.NewCustomColumnsPrinterFromSpec(spec, nil, noHeaders)
	}
	if err != nil {
		return "", err
	}
	list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "List"}}
	for _, o := range objs {
		list.Items = append(list.Items, unstructured.Unstructured{Object: runtime.DeepCopyJSON(o)})
	}
	var out bytes.Buffer
	err = p.PrintObj(list, &out)
	return out.String(), err
}

func TestCustomColumnsPrintAsKubectl(t *testing.T) {
	file := filepath.Join(t.TempDir(), "columns")
	os.WriteFile(file, []byte("NAME   IMAGES                     PRIO\nmetadata.name  {.spec.containers[*].image}  .spec.priority\n"), 0o600)
	for _, tc := range []struct {
		format, spec string
		noHeaders    bool
	}{
		{"custom-columns", "NAME:.metadata.name,NS:.metadata.namespace", false},
		{"custom-columns", "NAME:metadata.name,IMAGES:{.spec.containers[*].image},LABELS:.metadata.labels", false},
		{"custom-columns", "N:{.metadata.name},P:.spec.priority,W:.spec.weight,NOTE:.metadata.annotations.note", true},
		{"custom-columns", "FIRST:.spec.containers[0].name,ALL:.spec.containers[*]", false},
		{"custom-columns-file", file, false},
	} {
		objs := columnsObjects()
		got, err := etcdscopeColumns(tc.format, tc.spec, objs, tc.noHeaders)
		want, kerr := kubectlColumns(tc.format, tc.spec, objs, tc.noHeaders)
		if err != nil || kerr != nil || got != want {
			t.Errorf("-o %s=%s: etcdscope %v\n%s\nkubectl %v\n%s", tc.format, tc.spec, err, got, kerr, want)
		}
	}
}

func TestCustomColumnsRefuseABadSpecAsKubectl(t *testing.T) {
	for _, tc := range []struct{ spec, want string }{
		{"", "custom-columns format specified but no custom columns given"},
		{"NAME", "unexpected custom-columns spec: NAME, expected <header>:<json-path-expr>"},
		{"NAME:.a,X", "unexpected custom-columns spec: X, expected <header>:<json-path-expr>"},
		{"NAME:{.a}{.b}", "unexpected path string, expected a 'name1.name2' or '.name1.name2' or '{name1.name2}' or '{.name1.name2}'"},
	} {
		_, err := parseCustomColumns("custom-columns", tc.spec)
		_, kerr := kubectlget.NewCustomColumnsPrinterFromSpec(tc.spec, nil, false)
		if err == nil || kerr == nil || err.Error() != tc.want || kerr.Error() != tc.want {
			t.Errorf("spec %q: etcdscope %v, kubectl %v, want %q", tc.spec, err, kerr, tc.want)
		}
	}
}

// FuzzCustomColumnsPrintAsKubectl gives both printers the same spec: each
// refuses it, or both print the same. etcdscope checks the JSONPaths
// before it reads, kubectl when it prints: an error either way.
func FuzzCustomColumnsPrintAsKubectl(f *testing.F) {
	f.Add("NAME:.metadata.name,FIRST:.spec.containers[0].image", false)
	f.Add("A:{.metadata.labels.app},B:spec.priority", true)
	f.Add("X:.spec.containers[?(@.name==\"a\")].image", false)
	f.Fuzz(func(t *testing.T, spec string, noHeaders bool) {
		if strings.ContainsAny(spec, "\t\n\r\f") {
			return // a header with a tab or line break lays out no table
		}
		if cols, err := parseCustomColumns("custom-columns", spec); err == nil {
			for _, c := range cols {
				if strings.Contains(c.path, "..") || strings.Contains(c.path, "*") {
					return // a map's keys come in random order, to either printer
				}
			}
		}
		objs := columnsObjects()
		got, err := etcdscopeColumns("custom-columns", spec, objs, noHeaders)
		want, kerr := kubectlColumns("custom-columns", spec, objs, noHeaders)
		if (err == nil) != (kerr == nil) || err == nil && got != want {
			t.Errorf("spec %q: etcdscope %v\n%s\nkubectl %v\n%s", spec, err, got, kerr, want)
		}
	})
}

package get

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	kubectlget "k8s.io/kubectl/pkg/cmd/get"
)

// missing is a value an object does not have at all.
var missing = &struct{}{}

// sortObjects are objects whose spec.v is each of values, named o0, o1...
func sortObjects(values []any) []map[string]any {
	objs := make([]map[string]any, len(values))
	for i, v := range values {
		spec := map[string]any{}
		if v != missing {
			spec["v"] = v
		}
		objs[i] = map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": fmt.Sprintf("o%d", i)}, "spec": spec}
	}
	return objs
}

// etcdscopeOrder is the order sortByKeys puts objs in, by name.
func etcdscopeOrder(field string, objs []map[string]any, table bool) ([]string, error) {
	f, err := parseSortField(field, table)
	if err != nil {
		return nil, err
	}
	p := f.parser()
	keys, names := make([]sortKey, len(objs)), make([]string, len(objs))
	for i, o := range objs {
		if keys[i], err = sortKeyOf(p, o); err != nil {
			return nil, err
		}
		names[i] = o["metadata"].(map[string]any)["name"].(string)
	}
	swap := func(i, j int) { names[i], names[j] = names[j], names[i] }
	if err := sortByKeys(f, keys, swap, table); err != nil {
		return nil, err
	}
	return names, nil
}

// kubectlOrder is the order kubectl's own sorters put objs in: SortObjects
// for a List (-o name and the other generic outputs), a TableSorter twice
// for a table, as kubectl get sorts one.
func kubectlOrder(field string, objs []map[string]any, table bool) ([]string, error) {
	if !table {
		if len(objs) == 0 {
			return nil, nil // SortingPrinter sorts no empty List
		}
		list := make([]runtime.Object, len(objs))
		for i, o := range objs {
			list[i] = &unstructured.Unstructured{Object: runtime.DeepCopyJSON(o)}
		}
		sorter, err := kubectlget.SortObjects(nil, list, field)
		if err != nil {
			return nil, err
		}
		var names []string
		for i := range objs {
			names = append(names, objs[sorter.OriginalPosition(i)]["metadata"].(map[string]any)["name"].(string))
		}
		return names, nil
	}
	path, err := kubectlget.RelaxedJSONPathExpression(field)
	if err != nil {
		path = field
	}
	t := &metav1.Table{}
	for _, o := range objs {
		t.Rows = append(t.Rows, metav1.TableRow{Object: runtime.RawExtension{Object: &unstructured.Unstructured{Object: runtime.DeepCopyJSON(o)}}})
	}
	for pass := range 2 {
		if pass == 1 && len(t.Rows) < 2 {
			break
		}
		sorter, err := kubectlget.NewTableSorter(t, path)
		if err != nil {
			return nil, err
		}
		sorter.Sort()
	}
	var names []string
	for _, r := range t.Rows {
		names = append(names, r.Object.Object.(*unstructured.Unstructured).GetName())
	}
	return names, nil
}

func TestSortByOrdersAsKubectl(t *testing.T) {
	for _, tc := range []struct {
		name   string
		values []any
	}{
		{"strings", []any{"web", "api", "db", "api", "cache"}},
		{"quantities compare as quantities", []any{"1Gi", "500Mi", "2", "100m", "1G"}},
		{"a string that is no quantity compares as a string", []any{"10", "9", "x", "1Ki"}},
		{"integers", []any{int64(3), int64(-1), int64(20), int64(3)}},
		{"numbers", []any{2.5, 0.1, -3.0, 2.5}},
		{"missing and null come first", []any{"b", missing, "a", nil, missing, "c", nil}},
		{"more than twelve, with ties", []any{"d", "a", "c", "a", "b", "d", "a", missing, "c", "b", "a", "d", missing, "c", "a", "b"}},
		{"one object", []any{"x"}},
	} {
		for _, table := range []bool{false, true} {
			objs := sortObjects(tc.values)
			got, err := etcdscopeOrder(".spec.v", objs, table)
			want, kerr := kubectlOrder(".spec.v", objs, table)
			if err != nil || kerr != nil || !slices.Equal(got, want) {
				t.Errorf("%s (table %v): etcdscope %v %v, kubectl %v %v", tc.name, table, got, err, want, kerr)
			}
		}
	}
}

// TestSortByRefusesWhatKubectlCannotOrder: kubectl exits on a pair of
// values it cannot order (klog.Exitf); etcdscope says which, and a field
// no object has, as kubectl says it.
func TestSortByRefusesWhatKubectlCannotOrder(t *testing.T) {
	for _, tc := range []struct {
		field  string
		values []any
		want   string
	}{
		{".spec.v", []any{int64(1), "a"}, "--sort-by {.spec.v}: unsortable interface"},
		{".spec.v", []any{map[string]any{"a": "b"}, map[string]any{}}, "--sort-by {.spec.v}: unsortable type: map[string]interface {}"},
		{".spec.v", []any{true, false}, "unsortable type: bool"},
		{".spec.none", []any{"a", "b"}, `couldn't find any field with path "{.spec.none}" in the list of objects`},
		{"{.spec.v", []any{"a"}, "--sort-by {.spec.v: unexpected path string"},
	} {
		_, err := etcdscopeOrder(tc.field, sortObjects(tc.values), false)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("--sort-by %s over %v: %v, want %q", tc.field, tc.values, err, tc.want)
		}
	}
}

// FuzzSortByOrdersAsKubectl orders objects whose field holds values of
// one sortable kind (kubectl exits on two kinds), or none or null, as
// kubectl's sorters do.
func FuzzSortByOrdersAsKubectl(f *testing.F) {
	f.Add(byte(0), []byte("zebra\x00apple\x00mango\x00\x00kiwi"), true)
	f.Add(byte(1), []byte{5, 3, 200, 3, 0, 7, 7, 1, 9, 2, 4, 6, 8, 0, 11}, false)
	f.Add(byte(2), []byte("1Gi\x00300Mi\x002\x00\x00x"), true)
	f.Fuzz(func(t *testing.T, kind byte, data []byte, table bool) {
		var values []any
		for i, b := range data {
			if len(values) == 40 {
				break
			}
			switch {
			case b%11 == 0:
				values = append(values, missing)
			case b%13 == 0:
				values = append(values, nil)
			case kind%3 == 0:
				values = append(values, string(rune('a'+b%5)))
			case kind%3 == 1:
				values = append(values, int64(b%7)-3)
			default:
				values = append(values, []string{"1Gi", "300Mi", "2", "x", "1e3", "0.5"}[(int(b)+i)%6])
			}
		}
		objs := sortObjects(values)
		got, err := etcdscopeOrder(".spec.v", objs, table)
		want, kerr := kubectlOrder(".spec.v", objs, table)
		if (err == nil) != (kerr == nil) || !slices.Equal(got, want) {
			t.Errorf("values %v (table %v): etcdscope %v %v, kubectl %v %v", values, table, got, err, want, kerr)
		}
	})
}

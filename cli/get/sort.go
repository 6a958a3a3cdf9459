package get

import (
	"cmp"
	"fmt"
	"reflect"
	"sort"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/util/jsonpath"
)

// --sort-by, as kubectl's get.SortObjects and get.TableSorter sort: by the
// first value the JSONPath finds in each object as it is served
// (unstructured), numbers as numbers, strings as quantities when both
// parse as one. Those live in k8s.io/kubectl/pkg/cmd/get, too costly to
// link (see get_columns.go); get_sort_test.go holds this to them.

// sortField is a --sort-by JSONPath, parsed.
type sortField struct {
	path string // as kubectl's errors name it
}

// parseSortField reads --sort-by as kubectl does: the relaxed form when it
// is one; else, for a table, the template as given (RuntimeSorter,
// TableSorter), an error for other outputs (SortObjects).
func parseSortField(s string, table bool) (sortField, error) {
	path, err := relaxedJSONPath(s)
	if err != nil && !table {
		return sortField{}, fmt.Errorf("--sort-by %s: %w", s, err)
	}
	if err != nil {
		path = s
	}
	if err := jsonpath.New("sorting").Parse(path); err != nil {
		return sortField{}, fmt.Errorf("--sort-by %s: %w", s, err)
	}
	return sortField{path: path}, nil
}

// parser is a JSONPath of the field: one per worker, as a JSONPath keeps
// state while it runs.
func (f sortField) parser() *jsonpath.JSONPath {
	p := jsonpath.New("sorting").AllowMissingKeys(true)
	p.Parse(f.path) // parsed once already by parseSortField
	return p
}

// sortKey is an object's value at the field; found is false when it has
// none.
type sortKey struct {
	value reflect.Value
	found bool
}

func sortKeyOf(p *jsonpath.JSONPath, content map[string]any) (sortKey, error) {
	values, err := p.FindResults(content)
	if err != nil || len(values) == 0 || len(values[0]) == 0 {
		return sortKey{}, err
	}
	return sortKey{value: values[0][0], found: true}, nil
}

// sortByKeys orders keys, and what they are the keys of through swap. kubectl
// sorts a table a second time when it prints it (SortingPrinter after
// RuntimeSorter), which moves rows that lack the field: twice does the
// same. A value kubectl cannot order is an error, where kubectl exits.
func sortByKeys(field sortField, keys []sortKey, swap func(i, j int), twice bool) error {
	if len(keys) == 0 {
		return nil
	}
	found := false
	for _, k := range keys {
		found = found || k.found
	}
	if !found {
		return fmt.Errorf("couldn't find any field with path %q in the list of objects", field.path)
	}
	s := &keySorter{keys: keys, swap: swap}
	sort.Sort(s)
	if twice && len(keys) > 1 && s.err == nil {
		sort.Sort(s)
	}
	if s.err != nil {
		return fmt.Errorf("--sort-by %s: %w", field.path, s.err)
	}
	return nil
}

type keySorter struct {
	keys []sortKey
	swap func(i, j int)
	err  error // the first pair that could not be ordered
}

func (s *keySorter) Len() int { return len(s.keys) }

func (s *keySorter) Swap(i, j int) {
	s.keys[i], s.keys[j] = s.keys[j], s.keys[i]
	s.swap(i, j)
}

// Less is TableSorter.Less: an object without the field comes first, even
// before another without it.
func (s *keySorter) Less(i, j int) bool {
	a, b := s.keys[i], s.keys[j]
	if !a.found {
		return true
	}
	if !b.found {
		return false
	}
	less, err := valueLess(a.value, b.value)
	if err != nil && s.err == nil {
		s.err = err
	}
	return less
}

// valueLess is kubectl's isLess on what a JSONPath finds in unstructured
// content: map and slice elements, each an interface holding nil, a map,
// a slice, a string, an int64, a float64 or a bool.
func valueLess(i, j reflect.Value) (bool, error) {
	if i.Kind() != reflect.Interface {
		return false, fmt.Errorf("unsortable type: %v", i.Kind())
	}
	switch {
	case i.IsNil() && j.IsNil():
		return false, nil
	case i.IsNil():
		return true, nil
	case j.IsNil():
		return false, nil
	}
	switch a := i.Interface().(type) {
	case int64:
		return lessAs(a, j)
	case float64:
		return lessAs(a, j)
	case string:
		b, ok := j.Interface().(string)
		if !ok {
			return false, fmt.Errorf("unsortable interface: %v", i.Kind())
		}
		qa, errA := resource.ParseQuantity(a)
		qb, errB := resource.ParseQuantity(b)
		if errA != nil || errB != nil {
			return a < b, nil
		}
		return qa.Cmp(qb) < 0, nil
	default:
		return false, fmt.Errorf("unsortable type: %T", a)
	}
}

// lessAs is a < j when j holds a T, else kubectl's error for two types.
func lessAs[T cmp.Ordered](a T, j reflect.Value) (bool, error) {
	b, ok := j.Interface().(T)
	if !ok {
		return false, fmt.Errorf("unsortable interface: %v", reflect.Interface)
	}
	return a < b, nil
}

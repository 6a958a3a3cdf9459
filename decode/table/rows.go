package table

import (
	"context"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/rest"
)

// Table is the table kube-apiserver serves kubectl for a list of objs
// (each page of a list apart): the convertor's rows in its order (the
// FlowSchema printer sorts by precedence), with NAMESPACE first when
// withNamespace (as cli-runtime's table printer adds it for
// --all-namespaces) and REVISION last, the key's mod revision. order[i] is
// the index in objs of row i. Rows carry no object; the column
// definitions are shared between calls: do not change them.
func (r *Resource) Table(objs []Object, withNamespace bool) (t *metav1.Table, order []int, err error) {
	list, index, err := r.list(objs)
	if err != nil {
		return nil, nil, err
	}
	if t, err = r.convertor().ConvertToTable(context.Background(), list, nil); err != nil && r.printers {
		// A kind kube-apiserver does not serve (what only storage
		// holds) has no printer: the generic store's default applies.
		gr := schema.GroupResource{Group: r.Group, Resource: r.Resource.Resource}
		t, err = rest.NewDefaultTableConvertor(gr).ConvertToTable(context.Background(), list, nil)
	}
	if err != nil {
		return nil, nil, err
	}
	order = make([]int, len(t.Rows))
	for i := range t.Rows {
		row := &t.Rows[i]
		j, ok := index[row.Object.Object]
		if !ok {
			return nil, nil, fmt.Errorf("the %s table has a row for an object not listed", r.Resource.Resource)
		}
		order[i] = j
		// A printer may make more cells than it defines columns (the
		// IPAddress printer adds an AGE it does not define): kubectl
		// prints the defined ones (cli-runtime's printTable, issue
		// 66379), and REVISION must follow them, one cell a column.
		n := len(t.ColumnDefinitions)
		var cells []any
		if withNamespace {
			m, err := meta.Accessor(objs[j].obj)
			if err != nil {
				return nil, nil, err
			}
			cells = append(make([]any, 0, n+2), m.GetNamespace())
		} else {
			cells = make([]any, 0, n+1)
		}
		cells = append(cells, row.Cells[:min(n, len(row.Cells))]...)
		row.Cells = append(cells[:cap(cells)-1], objs[j].revision)
		row.Object = runtime.RawExtension{}
	}
	t.ColumnDefinitions = r.columnsFor(t.ColumnDefinitions, withNamespace)
	return t, order, nil
}

// SortsPages says whether the resource's printer orders the rows of a
// page itself, so that a page's rows depend on the whole page: only
// FlowSchemas', by matching precedence (pkg/printers/internalversion's
// printFlowSchemaList). Every other printer makes each row from its
// object alone, in list order.
func (r *Resource) SortsPages() bool {
	return r.printers && r.Group == "flowcontrol.apiserver.k8s.io" && r.Resource.Resource == "flowschemas"
}

// list is objs as the list the registry hands its convertor, and where
// each item of it came from in objs.
func (r *Resource) list(objs []Object) (runtime.Object, map[runtime.Object]int, error) {
	index := make(map[runtime.Object]int, len(objs))
	if r.scheme == nil || len(objs) == 0 {
		list := &unstructured.UnstructuredList{Items: make([]unstructured.Unstructured, len(objs))}
		for i, o := range objs {
			list.Items[i] = *o.obj.(*unstructured.Unstructured)
			index[&list.Items[i]] = i
		}
		return list, index, nil
	}
	// Each object is converted into its place in the internal list, as
	// the storage's decoder would make it: no internal object is made
	// apart and copied in.
	gvk := objs[0].obj.GetObjectKind().GroupVersionKind()
	list, err := r.scheme.New(schema.GroupVersionKind{Group: gvk.Group, Version: runtime.APIVersionInternal, Kind: gvk.Kind + "List"})
	if err != nil {
		return nil, nil, err
	}
	items, err := meta.GetItemsPtr(list)
	if err != nil {
		return nil, nil, err
	}
	slice := reflect.ValueOf(items).Elem()
	slice.Set(reflect.MakeSlice(slice.Type(), len(objs), len(objs)))
	for i, o := range objs {
		item, ok := slice.Index(i).Addr().Interface().(runtime.Object)
		if !ok {
			return nil, nil, fmt.Errorf("%s holds no objects", list.GetObjectKind().GroupVersionKind().Kind)
		}
		if err := r.scheme.Convert(o.obj, item, nil); err != nil {
			return nil, nil, err
		}
		index[item] = i
	}
	return list, index, nil
}

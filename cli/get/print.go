package get

import (
	"bufio"
	"context"
	"fmt"
	"io"

	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/etcdview"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/printers"
)

// list prints the objects pages yields. YAML and JSON, -o name and custom
// columns stream in key order unless sorted; the table is printed once
// every row is in, as kubectl's is (its column widths are the widest
// cell's), and keeps the rows' cells only, not their objects; templates
// run over the List of every object, as kubectl's do.
func (l *lister) list(ctx context.Context, pages etcdview.Pager) error {
	if l.sort == nil {
		switch l.out.format {
		case decode.OutputYAML, decode.OutputJSON:
			w := l.pr.P.Writer(l.pr.Out)
			err := writeList(ctx, w, l.dec, pages, yamlOrJSON(l.out.format), l.keep())
			if ferr := w.Flush(); err == nil {
				err = ferr
			}
			return err
		case outputName, formatColumns:
			return l.stream(ctx, pages)
		}
	}
	if l.out.table() {
		t, err := l.tableRows(ctx, pages)
		if err != nil {
			return err
		}
		note := l.age.recount(l.res.Columns(l.withNamespace), t.rows, t.created)
		if err := l.printTable(t.rows); err != nil || note == "" {
			return err
		}
		_, err = fmt.Fprintln(l.pr.ErrOut, l.pr.EP.Dim(note))
		return err
	}
	var items []listed
	err := inOrder(ctx, pages, l.items, func(chunk []listed) error {
		items = append(items, chunk...)
		return nil
	})
	if err != nil {
		return err
	}
	if l.sort != nil {
		keys := make([]sortKey, len(items))
		for i := range items {
			keys[i] = items[i].key
		}
		swap := func(i, j int) { items[i], items[j] = items[j], items[i] }
		if err := sortByKeys(*l.sort, keys, swap, false); err != nil {
			return err
		}
	}
	switch l.out.format {
	case formatTemplate:
		return l.printTemplate(items)
	case decode.OutputYAML, decode.OutputJSON:
		return l.printItems(items)
	}
	return l.printLines(func(w io.Writer) error {
		for _, it := range items {
			if _, err := w.Write(it.line); err != nil {
				return err
			}
		}
		return nil
	})
}

// tableRows lists every object's table row, sorted when asked.
func (l *lister) tableRows(ctx context.Context, pages etcdview.Pager) (*tableRows, error) {
	t := &tableRows{l: l}
	if err := inOrder(ctx, pages, l.items, t.add); err != nil {
		return nil, err
	}
	if err := t.page(len(t.pending)); err != nil || l.sort == nil {
		return t, err
	}
	swap := func(i, j int) {
		t.rows[i], t.rows[j] = t.rows[j], t.rows[i]
		if t.created != nil {
			t.created[i], t.created[j] = t.created[j], t.created[i]
		}
	}
	return t, sortByKeys(*l.sort, t.keys, swap, true)
}

// keep is writeList's filter: the values that are objects, then the
// selectors and --where, on a copy of the object.
func (l *lister) keep() func(decode.Object) (bool, error) {
	return func(o decode.Object) (bool, error) {
		if !l.undecoded.object(o) {
			return false, nil
		}
		if l.sel.Empty() && l.where == nil {
			return true, nil
		}
		obj, err := l.res.Object(o.Object.DeepCopyObject(), 0)
		if err != nil {
			l.undecoded.fail(o.Key.Raw, err)
			return false, nil
		}
		if ok, err := l.sel.Matches(obj); !ok || err != nil || l.where == nil {
			return ok, err
		}
		served, err := obj.ServedContent(l.dec)
		if err != nil {
			l.undecoded.fail(o.Key.Raw, err)
			return false, nil
		}
		return l.where.keep(o.Key.Raw, served), nil
	}
}

// stream prints -o name or custom-columns lines as chunks are done.
func (l *lister) stream(ctx context.Context, pages etcdview.Pager) error {
	return l.printLines(func(w io.Writer) error {
		return inOrder(ctx, pages, l.items, func(chunk []listed) error {
			for _, it := range chunk {
				if _, err := w.Write(it.line); err != nil {
					return err
				}
			}
			return nil
		})
	})
}

// printLines runs write on the output: custom columns' header first and
// through a tabwriter, as kubectl's CustomColumnsPrinter (which lays the
// columns out once every row is in), -o name's lines as they are.
func (l *lister) printLines(write func(io.Writer) error) error {
	out := bufio.NewWriterSize(l.pr.Out, 64<<10)
	var w io.Writer = out
	var tw interface{ Flush() error }
	if l.out.format == formatColumns {
		t := printers.GetNewTabWriter(out)
		if !l.out.noHeaders {
			t.Write(columnsHeader(l.out.columns))
		}
		w, tw = t, t
	}
	err := write(w)
	if tw != nil {
		if ferr := tw.Flush(); err == nil {
			err = ferr
		}
	}
	if ferr := out.Flush(); err == nil {
		err = ferr
	}
	return err
}

// printTable prints the rows as kubectl prints a table from the server:
// cli-runtime's table printer, with text from etcd inert on a terminal and
// cells capped (palette.cell).
func (l *lister) printTable(rows []metav1.TableRow) error {
	if len(rows) == 0 {
		if l.undecoded.all() {
			return nil // the listing fails with what it could not decode
		}
		if l.res.Namespaced && !l.withNamespace && l.namespace != "" {
			fmt.Fprintf(l.pr.ErrOut, "No resources found in %s namespace.\n", l.pr.EP.Text(l.namespace))
		} else {
			fmt.Fprintln(l.pr.ErrOut, "No resources found")
		}
		return nil
	}
	for _, row := range rows {
		for j, c := range row.Cells {
			if s, ok := c.(string); ok {
				row.Cells[j] = l.pr.P.Cell(s)
			}
		}
	}
	t := &metav1.Table{ColumnDefinitions: l.res.Columns(l.withNamespace), Rows: rows}
	out := bufio.NewWriterSize(l.pr.Out, 64<<10)
	w := printers.GetNewTabWriter(out)
	p := printers.NewTablePrinter(printers.PrintOptions{Wide: l.out.format == outputWide, NoHeaders: l.out.noHeaders})
	err := p.PrintObj(t, w)
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	if ferr := out.Flush(); err == nil {
		err = ferr
	}
	return err
}

// printTemplate runs the template over what kubectl's printGeneric hands
// it: one object when a NAME was given, else a List of them all.
func (l *lister) printTemplate(items []listed) error {
	var obj *unstructured.Unstructured
	var list *unstructured.UnstructuredList
	if l.single && len(items) == 1 {
		obj = &unstructured.Unstructured{Object: items[0].content}
	} else {
		list = &unstructured.UnstructuredList{Object: map[string]any{
			"kind": "List", "apiVersion": "v1", "metadata": map[string]any{"resourceVersion": ""},
		}}
		for _, it := range items {
			list.Items = append(list.Items, unstructured.Unstructured{Object: it.content})
		}
	}
	w := l.pr.P.Writer(l.pr.Out)
	var err error
	if obj != nil {
		err = l.out.template.PrintObj(obj, w)
	} else {
		err = l.out.template.PrintObj(list, w)
	}
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	return err
}

// printItems prints sorted YAML or JSON items as the List writeList
// streams.
func (l *lister) printItems(items []listed) error {
	w := l.pr.P.Writer(l.pr.Out)
	lw := newListWriter(w, yamlOrJSON(l.out.format))
	var err error
	for _, it := range items {
		if err = lw.write(it.line); err != nil {
			break
		}
	}
	err = lw.close(err)
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	return err
}

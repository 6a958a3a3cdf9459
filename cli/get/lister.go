package get

import (
	"bytes"
	"time"

	"github.com/etcdscope/etcdscope/cli/cmdutil"
	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/decode/table"
	"github.com/etcdscope/etcdscope/etcdview"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/util/jsonpath"
)

// lister lists one resource's objects as get's flags ask: which ones (-l,
// --field-selector), in which order (--sort-by) and how (-o).
type lister struct {
	pr            cmdutil.Printer
	out           listOutput
	res           *table.Resource
	dec           decode.Decoder // JSONOnly: nothing is shown from sections
	sel           table.Selector
	sort          *sortField
	where         *whereCounts // nil without --where
	undecoded     *undecoded   // the values left out
	withNamespace bool         // -A on a namespaced resource: the NAMESPACE column
	namespace     string       // the one listed, "" for every one
	single        bool         // a NAME was given: templates run on the object, not a List
	age           *ageClock    // a table as of --rev: AGE counts to its time
}

// newLister is the lister of res for get's flags, listing namespace ns
// ("" for every one).
func newLister(pr cmdutil.Printer, res *table.Resource, f getFlags, ns string) (*lister, error) {
	sel, err := res.Selector(f.labels, f.fields)
	if err != nil {
		return nil, err
	}
	l := &lister{pr: pr, out: f.out, res: res, dec: f.dec, sel: sel, namespace: ns,
		withNamespace: res.Namespaced && ns == "", undecoded: &undecoded{}}
	l.dec.JSONOnly = true
	filter, err := compileWhere(f.where)
	if err != nil {
		return nil, err
	}
	if filter != nil {
		l.where = &whereCounts{filter: filter}
	}
	if f.sortBy != "" {
		field, err := parseSortField(f.sortBy, f.out.table())
		if err != nil {
			return nil, err
		}
		l.sort = &field
	}
	if l.out.table() {
		l.age = newAgeClock(f.rev)
	}
	return l, nil
}

// listed is what a listing keeps of one object: its sort key and what
// prints it in the output asked for.
type listed struct {
	key     sortKey
	obj     table.Object    // the table, until the object has its row
	row     metav1.TableRow // the table
	line    []byte          // -o name, custom-columns, yaml and json
	content map[string]any  // templates: the object as served, unstructured
	created time.Time       // the table as of --rev: AGE counts from it
}

// worker is one chunk worker's own state: JSONPaths keep state as they
// run.
type worker struct {
	columns []*jsonpath.JSONPath
	sort    *jsonpath.JSONPath
}

func (l *lister) newWorker() *worker {
	w := &worker{}
	if l.out.format == formatColumns {
		w.columns = columnParsers(l.out.columns)
	}
	if l.sort != nil {
		w.sort = l.sort.parser()
	}
	return w
}

// items is what the lister keeps of a chunk of values: each object it
// selects, in key order; for a table, its row, unless the resource's
// printer orders a page (tableRows makes those rows).
func (l *lister) items(kvs []etcdview.KV) ([]listed, error) {
	w := l.newWorker()
	var out []listed
	for _, kv := range kvs {
		item, ok, err := l.item(w, kv)
		if err != nil {
			return out, valueError{kv.Key, err}
		}
		if ok {
			out = append(out, item)
		}
	}
	if !l.out.table() || l.res.SortsPages() || len(out) == 0 {
		return out, nil
	}
	// Rows need no page but their own chunk: made here, they are made on
	// every core, and the objects are dropped as soon as they are.
	return makeRows(l, out)
}

func (l *lister) item(w *worker, kv etcdview.KV) (listed, bool, error) {
	var item listed
	o := l.dec.DecodeAt(kv.Key, kv.Value, kv.ModRevision)
	if !l.undecoded.object(o) {
		return item, false, nil
	}
	obj := o.Object
	if l.out.format == decode.OutputYAML || l.out.format == decode.OutputJSON {
		// Conversion may default and share o.Object, which prints as stored.
		obj = obj.DeepCopyObject()
	}
	tobj, err := l.res.Object(obj, kv.ModRevision)
	if err != nil {
		l.undecoded.fail(kv.Key, err)
		return item, false, nil
	}
	if ok, err := l.sel.Matches(tobj); !ok || err != nil {
		return item, false, err
	}
	var content map[string]any
	if w.sort != nil || w.columns != nil || l.out.format == formatTemplate || l.where != nil {
		if content, err = tobj.ServedContent(l.dec); err != nil {
			l.undecoded.fail(kv.Key, err)
			return item, false, nil
		}
	}
	if l.where != nil && !l.where.keep(kv.Key, content) {
		return item, false, nil
	}
	if w.sort != nil {
		if item.key, err = sortKeyOf(w.sort, content); err != nil {
			return item, false, err
		}
	}
	switch l.out.format {
	case "", outputWide:
		item.obj = tobj
		item.created = l.age.observe(o, kv)
	case outputName:
		item.line, err = nameLine(l.res, tobj, l.pr.P)
	case formatColumns:
		item.line, err = appendColumnsRow(nil, w.columns, content, l.pr.P)
	case formatTemplate:
		item.content = content
	default:
		item.line, err = yamlOrJSON(l.out.format).appendItem(nil, o)
	}
	return item, err == nil, err
}

// kubectlPage is kubectl get's --chunk-size: kube-apiserver makes the
// table of each page of a list apart, and a printer may reorder a page
// (FlowSchemas by precedence). With --sort-by kubectl reads one page:
// etcdscope's pages stay 500, so that a table keeps rows, not objects.
const kubectlPage = 500

// tableRows gathers the table's rows, and their sort keys, in key order.
// The rows of a resource whose printer orders a page (Resource.SortsPages)
// are made a page at a time, as kube-apiserver makes them for each page
// kubectl asks for.
type tableRows struct {
	l       *lister
	pending []listed // objects without their rows, fewer than a page
	rows    []metav1.TableRow
	keys    []sortKey   // with --sort-by, rows[i]'s
	created []time.Time // as of --rev, rows[i]'s object's creation
}

func (t *tableRows) add(items []listed) error {
	if !t.l.res.SortsPages() {
		t.keep(items)
		return nil
	}
	t.pending = append(t.pending, items...)
	for len(t.pending) >= kubectlPage {
		if err := t.page(kubectlPage); err != nil {
			return err
		}
	}
	return nil
}

func (t *tableRows) keep(items []listed) {
	for _, it := range items {
		t.rows = append(t.rows, it.row)
		if t.l.sort != nil {
			t.keys = append(t.keys, it.key)
		}
		if t.l.age != nil {
			t.created = append(t.created, it.created)
		}
	}
}

// page makes the rows of the first n pending objects.
func (t *tableRows) page(n int) error {
	if n == 0 {
		return nil
	}
	items, err := makeRows(t.l, t.pending[:n])
	if err != nil {
		return err
	}
	t.keep(items)
	t.pending = append([]listed(nil), t.pending[n:]...)
	return nil
}

// makeRows is items with their table rows, in the order the convertor
// makes them. The cells of the columns only -o wide shows are dropped
// unless it is asked for, to keep less.
func makeRows(l *lister, items []listed) ([]listed, error) {
	objs := make([]table.Object, len(items))
	for i := range items {
		objs[i] = items[i].obj
	}
	tbl, order, err := l.res.Table(objs, l.withNamespace)
	if err != nil {
		return nil, err
	}
	out := make([]listed, len(tbl.Rows))
	// The rows stay until the table prints, and most of their cells say
	// what others say ("1/1", "Running", a namespace): one copy each.
	shared := map[string]any{}
	for i, row := range tbl.Rows {
		for j, c := range row.Cells {
			if l.out.format != outputWide && tbl.ColumnDefinitions[j].Priority != 0 {
				row.Cells[j] = nil
			} else if s, ok := c.(string); ok {
				if v, ok := shared[s]; ok {
					row.Cells[j] = v
				} else {
					shared[s] = c
				}
			}
		}
		out[i] = listed{key: items[order[i]].key, row: row, created: items[order[i]].created}
	}
	return out, nil
}

// nameLine is -o name's line, as cli-runtime's NamePrinter prints it:
// kind.group/name, of the kind and group the resource is served as.
func nameLine(res *table.Resource, o table.Object, p cmdutil.Palette) ([]byte, error) {
	var b bytes.Buffer
	m := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: p.Text(o.Name())}}
	m.SetGroupVersionKind(res.Served)
	err := (&printers.NamePrinter{}).PrintObj(m, &b)
	return b.Bytes(), err
}

func yamlOrJSON(format string) listFormat {
	if format == decode.OutputYAML {
		return yamlList
	}
	return jsonList
}

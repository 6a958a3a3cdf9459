package get

import (
	"bufio"
	"context"
	"io"
	"runtime"

	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/etcdview"
)

// listFormat is how writeList prints a List as `kubectl get -o json` or
// `-o yaml` prints it: head, then open before the first item, the items,
// each but the first after sep, closeFull after them or closeEmpty when
// there are none, then tail.
type listFormat struct {
	head, open, sep, closeFull, closeEmpty, tail string
	// item appends one object.
	item func(dst []byte, o decode.Object) ([]byte, error)
}

// jsonList is writeDoc's JSON of a List: encoding/json indented by four.
var jsonList = listFormat{
	head:      "{\n    \"apiVersion\": \"v1\",\n    \"items\": [",
	sep:       ",",
	closeFull: "\n    ",
	tail:      "],\n    \"kind\": \"List\"\n}\n",
	item: func(dst []byte, o decode.Object) ([]byte, error) {
		return o.AppendJSON(append(dst, "\n        "...), "        ")
	},
}

// yamlList is sigs.k8s.io/yaml's YAML of that JSON: apiVersion, items and
// kind in its key order, each item "- " at column 0.
var yamlList = listFormat{
	head:       "apiVersion: v1\n",
	open:       "items:\n",
	closeEmpty: "items: []\n",
	tail:       "kind: List\n",
	item: func(dst []byte, o decode.Object) ([]byte, error) {
		return o.AppendYAMLItem(dst)
	},
}

// appendItem appends o as an item after others, with the separator:
// listWriter drops it before the List's first.
func (f listFormat) appendItem(dst []byte, o decode.Object) ([]byte, error) {
	return f.item(append(dst, f.sep...), o)
}

// listWriter writes a List's items as they come, then its end.
type listWriter struct {
	out    *bufio.Writer
	format listFormat
	empty  bool
}

func newListWriter(w io.Writer, format listFormat) *listWriter {
	lw := &listWriter{out: bufio.NewWriterSize(w, 256<<10), format: format, empty: true}
	lw.out.WriteString(format.head)
	return lw
}

// write writes items made by appendItem.
func (lw *listWriter) write(items []byte) error {
	if len(items) == 0 {
		return nil
	}
	if lw.empty {
		lw.out.WriteString(lw.format.open)
		items = items[len(lw.format.sep):]
		lw.empty = false
	}
	_, err := lw.out.Write(items)
	return err
}

// close ends the List, or, after err, leaves it without an end: not whole.
func (lw *listWriter) close(err error) error {
	if err != nil {
		lw.out.Flush()
		return err
	}
	if lw.empty {
		lw.out.WriteString(lw.format.closeEmpty)
	} else {
		lw.out.WriteString(lw.format.closeFull)
	}
	lw.out.WriteString(lw.format.tail)
	return lw.out.Flush()
}

// listGCPercent is GOGC while get lists: the heap may grow to five times
// what is live. What stays live is a few pages, some tens of MiB, while
// every object allocates its own as it is decoded and dropped: with the
// default the collector would run every few hundred objects, and mark it
// all each time. listMemoryLimit caps what that lets the runtime's memory
// reach: the process is 83 to 100 MB resident before it lists (the
// binary's pages, as many as the page cache holds, and the API types it
// registers), and a List must stay under 200 MB. Measured on 100k Pods as
// YAML (etcd 3.7.3, 2 cores, side by side, medians of 5): peak RSS 217 MB
// in 1.90 s at 112 MiB, 180 MB in 2.04 s at 80 (198 MB at 96).
//
// -o json keeps jsonListMemoryLimit: its items are twice the size of
// YAML's, and so are the chunks in flight (36 to 40 MB live after a
// collection, against 27 to 35). At 80 MiB it was 10% slower (2.31 s
// against 2.09, the same run), for a figure whose goal is speed (3×
// etcdctl's, 2.7× on etcd 3.4 and 3.5). It peaks at 214 MB.
//
// A table keeps its rows until it prints (kubectl's does too: column
// widths are the widest cell's), some 40 MB for 100k Pods, which the
// collector marks each time it runs. Measured on 100k Pods (etcd 3.7.3, 2
// cores): 1.55 s, 1.74 s of CPU and 203 MB peak RSS at 112 MiB; 1.37 s,
// 1.46 s and 292 MB at tableMemoryLimit; 1.32 s, 1.40 s and 312 MB at 224
// MiB. Outputs that hold every object (templates, sorted lists) keep the
// runtime's defaults: their live heap is the objects.
const (
	listGCPercent       = 400
	listMemoryLimit     = 80 << 20
	jsonListMemoryLimit = 112 << 20
	tableMemoryLimit    = 192 << 20
)

// memoryLimit is the memory limit get lists under with listGCPercent, 0
// when it keeps the runtime's defaults.
func (l *lister) memoryLimit() int64 {
	switch {
	case l.out.table():
		return tableMemoryLimit
	case l.sort != nil || l.out.format == formatTemplate:
		return 0
	case l.out.format == decode.OutputJSON:
		return jsonListMemoryLimit
	}
	return listMemoryLimit
}

// buffers recycles the chunks' output, from a few hundred KiB (250 Pods as
// YAML) to more than a MiB (as JSON): a new one grows by doubling and is
// zeroed by the allocator each time. A sync.Pool drops them at every other
// collection, and under a list's memory limit the collector runs every few
// chunks (-o json at 80 MiB: 2.65 s with the pool, 2.50 with this list, on
// 100k Pods). The list keeps as many as can be in flight; fewer (GOMAXPROCS
// + 1) regrew them again (2.84 s).
type buffers chan []byte

func newBuffers() buffers {
	return make(buffers, listReadAhead+runtime.GOMAXPROCS(0)+1)
}

// get is an empty buffer, recycled when there is one.
func (l buffers) get() []byte {
	select {
	case b := <-l:
		return b[:0]
	default:
		return nil
	}
}

// put keeps b for a later chunk.
func (l buffers) put(b []byte) {
	select {
	case l <- b:
	default:
	}
}

// writeList prints the List of `get -o json` or `-o yaml` as writeDoc
// prints the List of every object, streaming (inOrder): memory holds a few
// pages, not the whole List. keep, when not nil, says which objects are in it. The first
// error in key order ends it, after the objects before it, and so does the
// end of ctx.
func writeList(ctx context.Context, w io.Writer, dec decode.Decoder, pages etcdview.Pager, format listFormat, keep func(decode.Object) (bool, error)) error {
	lw := newListWriter(w, format)
	free := newBuffers()
	encode := func(kvs []etcdview.KV) ([]byte, error) {
		buf := free.get()
		for _, kv := range kvs {
			o := dec.DecodeAt(kv.Key, kv.Value, kv.ModRevision)
			ok, err := true, error(nil)
			if keep != nil {
				ok, err = keep(o)
			}
			if ok && err == nil {
				var item []byte
				if item, err = format.appendItem(buf, o); err == nil {
					buf = item
				}
			}
			if err != nil {
				return buf, valueError{kv.Key, err}
			}
		}
		return buf, nil
	}
	return lw.close(inOrder(ctx, pages, encode, func(b []byte) error {
		err := lw.write(b)
		free.put(b)
		return err
	}))
}

package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/spf13/cobra"
)

type getFlags struct {
	namespace     string
	allNamespaces bool
	rev           int64
	// dec is the decoder --show-secrets and the other decoding flags make.
	dec decode.Decoder
}

func newGetCmd(conn *connFlags) *cobra.Command {
	var (
		f      getFlags
		output *printFlags
	)
	cmd := &cobra.Command{
		Use:   "get KEY|RESOURCE [NAME] [-n NS] [-A] [--rev R] [-o yaml|json|raw]",
		Short: "Show one object, or a list of objects, decoded",
		Long: `get reads one etcd key, or the objects of a resource as kubectl names it
(pods, po, deployments.apps, deploy, svc, cm, ...), and prints them decoded:
YAML by default, JSON with -o json, the bytes as stored with -o raw.
metadata.resourceVersion is the key's mod revision, as the API server shows it.

A RESOURCE without NAME lists its objects in the namespace (-n, default
"default"), or in every namespace with -A: a table, or a List with -o.`,
		Example: `  etcdscope get /registry/pods/default/web-0
  etcdscope get po web-0 -o json
  etcdscope get deploy -A
  etcdscope get cm kube-root-ca.crt -n kube-system --rev 1200 -o raw`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			pr, err := output.toPrinter(cmd)
			if err != nil {
				return err
			}
			if f.dec, err = conn.decoding.decoder(); err != nil {
				return err
			}
			return withSource(cmd.Context(), conn, func(src etcdview.Source) error {
				return runGet(cmd.Context(), pr, src, args, f)
			})
		},
	}
	cmd.Flags().StringVarP(&f.namespace, "namespace", "n", "", `namespace of a namespaced RESOURCE (default "default")`)
	cmd.Flags().BoolVarP(&f.allNamespaces, "all-namespaces", "A", false, "list RESOURCE in every namespace")
	cmd.Flags().Int64Var(&f.rev, "rev", 0, "read as of this revision (0: the newest)")
	output = addPrintFlags(cmd, "", "output format: yaml, json or raw (default yaml for one object, a table for a list)",
		decode.OutputYAML, decode.OutputJSON, outputRaw)
	conn.decoding.register(cmd.Flags())
	return cmd
}

func runGet(ctx context.Context, pr printer, src etcdview.Source, args []string, f getFlags) error {
	if strings.HasPrefix(args[0], "/") || len(args) == 1 && !isResourceName(args[0]) {
		if len(args) == 2 {
			return fmt.Errorf("a key takes no NAME: give %s alone, or a resource and a name", args[0])
		}
		return getOne(ctx, pr, src, args[0], f)
	}
	res, ok := decode.LookupResource(args[0])
	if !ok {
		return fmt.Errorf("unknown resource type %q: give a resource as kubectl names it (pods, po, deploy, ...) or a key starting with /", args[0])
	}
	ns := f.namespace
	if ns == "" && res.Namespaced && !f.allNamespaces {
		ns = "default"
	}
	if !res.Namespaced {
		ns = ""
	}
	prefix := res.KeyPrefix("", ns)
	if res.Singleton {
		return getOne(ctx, pr, src, prefix, f)
	}
	if len(args) == 2 {
		if f.allNamespaces && res.Namespaced {
			return errors.New("a NAME needs one namespace: use -n instead of -A")
		}
		return getOne(ctx, pr, src, prefix+args[1], f)
	}
	return getList(ctx, pr, src, res, prefix, f)
}

// isResourceName says whether a lone argument not starting with "/" names a
// resource; otherwise it is read as a key (compact_rev_key).
func isResourceName(s string) bool {
	_, ok := decode.LookupResource(s)
	return ok
}

func getOne(ctx context.Context, pr printer, src etcdview.Source, key string, f getFlags) error {
	kv, err := src.Get(ctx, key, f.rev)
	if err != nil {
		return err
	}
	return printValue(pr, key, kv, f.dec)
}

// printValue prints one value: as stored with -o raw, wherever it goes;
// else decoded, text from etcd inert on a terminal.
func printValue(s printer, key string, kv *etcdview.KV, dec decode.Decoder) error {
	if s.output == outputRaw {
		_, err := s.out.Write(kv.Value)
		return err
	}
	o := dec.DecodeAt(key, kv.Value, kv.ModRevision)
	w := s.p.writer(s.out)
	if s.output == decode.OutputJSON {
		out, err := decode.Render(o, decode.OutputJSON, false)
		if err != nil {
			return err
		}
		if _, err = w.Write(out); err != nil {
			return err
		}
		return w.Flush()
	}
	// YAML, or everything there is to show for a value that is no object
	// (text, binary, encrypted), labelled on stderr.
	if _, err := io.WriteString(w, o.Text()); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if o.Problem != "" || o.Object == nil {
		fmt.Fprintln(s.errOut, s.ep.text(decode.EscapeKey(key)+": "+o.Label()))
	}
	return nil
}

// getList lists the objects of a resource: a table of keys, or a List of the
// decoded objects, read as of one revision.
func getList(ctx context.Context, pr printer, src etcdview.Source, res decode.Resource, prefix string, f getFlags) error {
	if pr.output == outputRaw {
		return errors.New("-o raw prints one value: give a NAME")
	}
	// A list allocates in proportion to its objects, while what stays live
	// is small beside it (a few pages, or the keys alone): see listGCPercent.
	defer debug.SetGCPercent(debug.SetGCPercent(listGCPercent))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(listMemoryLimit))
	if pr.output == "" {
		var kvs []etcdview.KV
		err := listPages(src, prefix, f.rev, false)(ctx, func(page []etcdview.KV) error {
			kvs = append(kvs, page...)
			return nil
		})
		if err != nil {
			return err
		}
		return printObjectTable(pr, res, kvs)
	}
	dec := f.dec
	dec.JSONOnly = true // each item is written from the object or its view, never its sections
	format := jsonList
	if pr.output == decode.OutputYAML {
		format = yamlList
	}
	w := pr.p.writer(pr.out)
	err := writeList(ctx, w, dec, listPages(src, prefix, f.rev, true), format)
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	return err
}

// pager reads the keys under a prefix page by page, as of one revision, and
// hands each page to yield in key order, stopping at the first error.
type pager func(ctx context.Context, yield func([]etcdview.KV) error) error

// listPages pages through prefix: keys only for the table, values too for a
// List, a page at a time instead of a Get per key (page sizes: see
// listKeysPage).
func listPages(src etcdview.Source, prefix string, rev int64, values bool) pager {
	first := etcdview.PageToken{Limit: listKeysPage}
	if values {
		first = etcdview.PageToken{Limit: listFirstValuesPage, Values: true}
	}
	return func(ctx context.Context, yield func([]etcdview.KV) error) error {
		rev := rev
		for page := first; ; {
			p, err := src.List(ctx, prefix, rev, page)
			if err != nil {
				return err
			}
			if err := yield(p.Keys); err != nil {
				return err
			}
			if p.Next == nil {
				return nil
			}
			rev, page = p.Revision, *p.Next
			if values {
				page.Limit = valuesPageLimit(p.Keys)
			}
		}
	}
}

// listKeysPage and listValuesPage are get's page sizes: keys only (about
// 100 bytes each: a page stays about 10 MiB), and keys with values of a few
// KiB each. Each page is a range stream of its own, whose chunks start
// small: 5,000 values a page read 100k Pods in half the time 1,000 do, and
// 100k pods' keys come in 0.23 s in one page, 0.34 s in pages of 10,000.
// A page of values is held whole, and values go up to 1.5 MiB (etcd's
// default request limit): the first page is a few values, and each next
// one as many as make listPageBytes at the size values had in the page
// before, at most listValuesPage. 8 MiB pages (some 2,700 Pods) list 100k
// Pods as fast as 16 MiB ones, 13 MB less resident.
const (
	listKeysPage        = 100_000
	listValuesPage      = 5_000
	listFirstValuesPage = 4
	listPageBytes       = 8 << 20
)

// valuesPageLimit is the number of values of the page after last.
func valuesPageLimit(last []etcdview.KV) int {
	size := 0
	for _, kv := range last {
		size += len(kv.Value)
	}
	if size == 0 {
		return listValuesPage
	}
	return min(max(listPageBytes*len(last)/size, 1), listValuesPage)
}

func printObjectTable(s printer, res decode.Resource, keys []etcdview.KV) error {
	if len(keys) == 0 {
		fmt.Fprintf(s.errOut, "No %s found.\n", res.Resource)
		return nil
	}
	// The columns are laid out as kubectl's tabwriter (padding 3) lays them
	// out, in two passes over the rows: tabwriter would keep every cell of
	// a 100k-row table in its own buffers until the end, and cost a third
	// of the command.
	header := []string{"NAME", "REVISION", "CREATED AT", "VERSION"}
	if res.Namespaced {
		header = append([]string{"NAMESPACE"}, header...)
	}
	type cells struct{ namespace, name string } // inert on a terminal
	rows, widths := make([]cells, len(keys)), make([]int, len(header))
	for i, h := range header {
		widths[i] = len(h)
	}
	var num [20]byte
	numWidth := func(col int, n int64) {
		widths[col] = max(widths[col], len(strconv.AppendInt(num[:0], n, 10)))
	}
	for i, kv := range keys {
		k := decode.ParseKey(kv.Key)
		name := k.Name
		if !k.IsObject {
			name = k.String()
		}
		rows[i] = cells{s.p.text(k.Namespace), s.p.text(name)}
		col := 0
		if res.Namespaced {
			widths[0] = max(widths[0], utf8.RuneCountInString(rows[i].namespace))
			col = 1
		}
		widths[col] = max(widths[col], utf8.RuneCountInString(rows[i].name))
		numWidth(col+1, kv.ModRevision)
		numWidth(col+2, kv.CreateRevision)
	}
	// padCell pads the cell that starts at b[start:] to its column's width
	// and the padding.
	const padding = 3
	padCell := func(b []byte, start, width int) []byte {
		for range width - utf8.RuneCount(b[start:]) + padding {
			b = append(b, ' ')
		}
		return b
	}
	// One write per 64 KiB, not per row: a list of 100k pods otherwise
	// costs 100k write calls.
	out := bufio.NewWriterSize(s.out, 64<<10)
	var row []byte
	cell := func(col int, text string) {
		start := len(row)
		row = padCell(append(row, text...), start, widths[col])
	}
	numCell := func(col int, n int64) {
		start := len(row)
		row = padCell(strconv.AppendInt(row, n, 10), start, widths[col])
	}
	for i, h := range header[:len(header)-1] {
		cell(i, h)
	}
	out.Write(append(append(row, header[len(header)-1]...), '\n'))
	for i, kv := range keys {
		row = row[:0]
		col := 0
		if res.Namespaced {
			cell(0, rows[i].namespace)
			col = 1
		}
		cell(col, rows[i].name)
		numCell(col+1, kv.ModRevision)
		numCell(col+2, kv.CreateRevision)
		row = append(strconv.AppendInt(row, kv.Version, 10), '\n')
		if _, err := out.Write(row); err != nil {
			return err
		}
	}
	return out.Flush()
}

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"

	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"
)

// Output formats of get and history; -o as kubectl spells it.
const (
	outputYAML  = "yaml"
	outputJSON  = "json"
	outputRaw   = "raw"
	outputTable = "table"
)

type getFlags struct {
	namespace     string
	allNamespaces bool
	rev           int64
	output        string
	// dec is the decoder --show-secrets and the other decoding flags make.
	dec decode.Decoder
}

func newGetCmd(conn *connFlags) *cobra.Command {
	var f getFlags
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
			switch f.output {
			case "", outputYAML, outputJSON, outputRaw:
			default:
				return fmt.Errorf("unknown output format %q: want yaml, json or raw", f.output)
			}
			var err error
			if f.dec, err = conn.decoding.decoder(); err != nil {
				return err
			}
			return withSource(cmd.Context(), conn, func(src etcdview.Source) error {
				return runGet(cmd, src, args, f)
			})
		},
	}
	cmd.Flags().StringVarP(&f.namespace, "namespace", "n", "", `namespace of a namespaced RESOURCE (default "default")`)
	cmd.Flags().BoolVarP(&f.allNamespaces, "all-namespaces", "A", false, "list RESOURCE in every namespace")
	cmd.Flags().Int64Var(&f.rev, "rev", 0, "read as of this revision (0: the newest)")
	cmd.Flags().StringVarP(&f.output, "output", "o", "", "output format: yaml, json or raw (default yaml for one object, a table for a list)")
	conn.decoding.register(cmd.Flags())
	return cmd
}

func runGet(cmd *cobra.Command, src etcdview.Source, args []string, f getFlags) error {
	ctx := cmd.Context()
	if strings.HasPrefix(args[0], "/") || len(args) == 1 && !isResourceName(args[0]) {
		if len(args) == 2 {
			return fmt.Errorf("a key takes no NAME: give %s alone, or a resource and a name", args[0])
		}
		return getOne(cmd, src, args[0], f)
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
		return getOne(cmd, src, prefix, f)
	}
	if len(args) == 2 {
		if f.allNamespaces && res.Namespaced {
			return errors.New("a NAME needs one namespace: use -n instead of -A")
		}
		return getOne(cmd, src, prefix+args[1], f)
	}
	return getList(ctx, cmd, src, res, prefix, f)
}

// isResourceName says whether a lone argument not starting with "/" names a
// resource; otherwise it is read as a key (compact_rev_key).
func isResourceName(s string) bool {
	_, ok := decode.LookupResource(s)
	return ok
}

func getOne(cmd *cobra.Command, src etcdview.Source, key string, f getFlags) error {
	kv, err := src.Get(cmd.Context(), key, f.rev)
	if err != nil {
		return err
	}
	w := cmd.OutOrStdout()
	if f.output == outputRaw {
		_, err := w.Write(kv.Value)
		return err
	}
	o := f.dec.DecodeAt(key, kv.Value, kv.ModRevision)
	if f.output == outputJSON {
		out, err := decode.Render(o, decode.OutputJSON, false)
		if err != nil {
			return err
		}
		_, err = w.Write(out)
		return err
	}
	// YAML, or everything there is to show for a value that is no object
	// (text, binary, encrypted), labelled on stderr.
	if _, err := io.WriteString(w, o.Text()); err != nil {
		return err
	}
	if o.Problem != "" || o.Object == nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "%s: %s\n", decode.EscapeKey(key), o.Label())
	}
	return nil
}

// getList lists the objects of a resource: a table of keys, or a List of the
// decoded objects, read as of one revision.
func getList(ctx context.Context, cmd *cobra.Command, src etcdview.Source, res decode.Resource, prefix string, f getFlags) error {
	if f.output == outputRaw {
		return errors.New("-o raw prints one value: give a NAME")
	}
	// The table needs keys only, in large pages: etcd walks its index from
	// each page's first key to the end of the range, so fewer pages cost it
	// less. A List reads the values with the keys, a page at a time, instead
	// of a Get per key.
	first := etcdview.PageToken{Limit: listKeysPage}
	if f.output != "" {
		first = etcdview.PageToken{Limit: listValuesPage, Values: true}
	}
	var kvs []etcdview.KV
	rev := f.rev
	for page := first; ; {
		p, err := src.List(ctx, prefix, rev, page)
		if err != nil {
			return err
		}
		kvs, rev = append(kvs, p.Keys...), p.Revision
		if p.Next == nil {
			break
		}
		page = *p.Next
	}
	if f.output == "" {
		return printObjectTable(cmd, res, kvs)
	}
	dec := f.dec
	dec.JSONOnly = true // the List is built from each object's JSON
	items, err := decodeAll(dec, kvs)
	if err != nil {
		return err
	}
	if f.output == outputJSON {
		return writeJSONList(cmd.OutOrStdout(), items)
	}
	return writeDoc(cmd.OutOrStdout(), f.output, listDoc(items))
}

func listDoc(items []json.RawMessage) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "List", "items": items}
}

// writeJSONList prints listDoc(items) as writeDoc does, streaming: each item
// is indented into place once and written out, where encoding the whole
// List would compact and indent every item again in one buffer as large as
// the output (most of the time of a 100k-pod list).
func writeJSONList(w io.Writer, items []json.RawMessage) error {
	out := bufio.NewWriterSize(w, 256<<10)
	out.WriteString("{\n    \"apiVersion\": \"v1\",\n    \"items\": [")
	var buf bytes.Buffer
	for i, item := range items {
		if i > 0 {
			out.WriteByte(',')
		}
		out.WriteString("\n        ")
		buf.Reset()
		if err := json.Indent(&buf, bytes.TrimSpace(item), "        ", "    "); err != nil {
			return err
		}
		out.Write(buf.Bytes())
	}
	if len(items) > 0 {
		out.WriteString("\n    ")
	}
	out.WriteString("],\n    \"kind\": \"List\"\n}\n")
	return out.Flush()
}

// listKeysPage and listValuesPage are get's page sizes: keys only, and keys
// with values of a few KiB each (a page stays a few MiB).
const (
	listKeysPage   = 10_000
	listValuesPage = 1_000
)

// decodeAll decodes every value to JSON on every core, in key order.
func decodeAll(dec decode.Decoder, kvs []etcdview.KV) ([]json.RawMessage, error) {
	items := make([]json.RawMessage, len(kvs))
	errs := make([]error, len(kvs))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(kvs); i = int(next.Add(1) - 1) {
				kv := kvs[i]
				js, err := dec.DecodeAt(kv.Key, kv.Value, kv.ModRevision).JSON(false)
				if err != nil {
					errs[i] = fmt.Errorf("%s: %w", decode.EscapeKey(kv.Key), err)
				}
				items[i] = js
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err // the first in key order, as a sequential decode would stop
		}
	}
	return items, nil
}

func printObjectTable(cmd *cobra.Command, res decode.Resource, keys []etcdview.KV) error {
	if len(keys) == 0 {
		fmt.Fprintf(cmd.ErrOrStderr(), "No %s found.\n", res.Resource)
		return nil
	}
	// One buffered write per screenful, not per row: a list of 100k pods
	// otherwise costs 100k write calls. Rows are built with append, not
	// Fprintf, for the same reason.
	out := bufio.NewWriterSize(cmd.OutOrStdout(), 64<<10)
	tw := tabwriter.NewWriter(out, 0, 0, 3, ' ', 0)
	if res.Namespaced {
		io.WriteString(tw, "NAMESPACE\t")
	}
	io.WriteString(tw, "NAME\tREVISION\tCREATED AT\tVERSION\n")
	var row []byte
	for _, kv := range keys {
		k := decode.ParseKey(kv.Key)
		name := k.Name
		if !k.IsObject {
			name = k.String()
		}
		row = row[:0]
		if res.Namespaced {
			row = append(append(row, k.Namespace...), '\t')
		}
		row = append(append(row, name...), '\t')
		row = append(strconv.AppendInt(row, kv.ModRevision, 10), '\t')
		row = append(strconv.AppendInt(row, kv.CreateRevision, 10), '\t')
		row = append(strconv.AppendInt(row, kv.Version, 10), '\n')
		if _, err := tw.Write(row); err != nil {
			return err
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return out.Flush()
}

// writeDoc prints v as indented JSON, or as YAML converted from that JSON
// with keys sorted, as kubectl prints both.
func writeDoc(w io.Writer, output string, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "    ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	out := buf.Bytes()
	if output == outputYAML {
		y, err := yaml.JSONToYAML(out)
		if err != nil {
			return err
		}
		out = y
	}
	_, err := w.Write(out)
	return err
}

// Package get is `etcdscope get`, as kubectl's pkg/cmd/get is kubectl get:
// one key, or the objects of a resource as kubectl lists them (the columns
// kube-apiserver's printers make, -o wide, name, custom-columns, jsonpath
// and go-template, YAML and JSON Lists streamed), selected by -l,
// --field-selector and --where, ordered by --sort-by. NewCmd, for cli's
// root command, is all it exports.
package get

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/etcdscope/etcdscope/cli/cmdutil"
	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/decode/table"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/etcdview/resource"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
)

type getFlags struct {
	namespace     string
	allNamespaces bool
	rev           int64
	keys          bool
	labels        string // -l
	fields        string // --field-selector
	sortBy        string
	where         string // --where, a CEL expression
	// dec is the decoder --show-secrets and the other decoding flags make.
	dec decode.Decoder
	out listOutput
}

// NewCmd is `etcdscope get`, reading the source conn names.
func NewCmd(conn *cmdutil.ConnFlags) *cobra.Command {
	var (
		f      getFlags
		output *getOutputFlags
	)
	cmd := &cobra.Command{
		Use:   "get KEY|RESOURCE [NAME] [-n NS] [-A] [-l SELECTOR] [--rev R] [-o FORMAT]",
		Short: "Show one object, or a list of objects, decoded",
		Long: `get reads one etcd key, or the objects of a resource as kubectl names it
(pods, po, deployments.apps, deploy, svc, cm, a custom resource's names, ...),
and prints them decoded: YAML by default, JSON with -o json, the bytes as
stored with -o raw. metadata.resourceVersion is the key's mod revision, as the
API server shows it.

A RESOURCE without NAME lists its objects in the namespace (-n, default
"default"), or in every namespace with -A, as kubectl get does: the columns
kube-apiserver's printers make for the kind (a custom resource's printer
columns, its CRD read at the same revision), and REVISION, the key's mod
revision; -o wide, name, jsonpath=, custom-columns=, go-template= as
kubectl's; -o yaml or json for a List. -l and --field-selector select as the
API server does, --sort-by orders by a JSONPath, and --where keeps the
objects a CEL expression is true of, the object bound to "object" as
kubectl is served it (kube-apiserver's CEL libraries and cost limit); an
object it cannot be evaluated on (a missing field) is skipped and counted
on stderr, and if no object could be, get fails. --keys lists keys and their
revisions without reading values, the fastest listing. A value that is not
an object is left out of a listing, and counted on stderr with the first
one's key; if no value could be decoded, get fails.`,
		Example: `  etcdscope get /registry/pods/default/web-0
  etcdscope get po web-0 -o json
  etcdscope get pods -A -o wide --field-selector status.phase=Running
  etcdscope get deploy -A -l app=web --sort-by .metadata.creationTimestamp
  etcdscope get pods -A --where 'object.spec.containers.exists(c, c.image.startsWith("nginx"))'
  etcdscope get pods -A -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}'
  etcdscope get cm kube-root-ca.crt -n kube-system --rev 1200 -o raw`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			pr, err := output.ToPrinter(cmd)
			if err != nil {
				return err
			}
			if f.out, err = output.listOutput(); err != nil {
				return err
			}
			if err = f.check(); err != nil {
				return err
			}
			if f.dec, err = conn.Decoding.Decoder(); err != nil {
				return err
			}
			return cmdutil.WithSource(cmd.Context(), conn, func(src etcdview.Source) error {
				return runGet(cmd.Context(), pr, src, args, f)
			})
		},
	}
	cmd.Flags().StringVarP(&f.namespace, "namespace", "n", "", `namespace of a namespaced RESOURCE (default "default")`)
	cmd.Flags().BoolVarP(&f.allNamespaces, "all-namespaces", "A", false, "list RESOURCE in every namespace")
	cmd.Flags().Int64Var(&f.rev, "rev", 0, "read as of this revision (0: the newest)")
	cmd.Flags().BoolVar(&f.keys, "keys", false, "list RESOURCE's keys with their revisions and version, without reading values")
	cmd.Flags().StringVarP(&f.labels, "selector", "l", "", "label selector, as kubectl's: -l app=web,tier!=db")
	cmd.Flags().StringVar(&f.fields, "field-selector", "", "field selector, the fields the API server supports for the kind: --field-selector status.phase=Running")
	cmd.Flags().StringVar(&f.where, "where", "", `keep the objects a CEL expression is true of, after -l and --field-selector: --where 'object.status.phase != "Running"'`)
	cmd.Flags().StringVar(&f.sortBy, "sort-by", "", "sort by a JSONPath of the object as served, as kubectl's: --sort-by .metadata.creationTimestamp")
	output = addGetOutputFlags(cmd)
	conn.Decoding.Register(cmd.Flags())
	return cmd
}

// check refuses flags that do not go together, before anything is read.
func (f getFlags) check() error {
	if err := cmdutil.CheckRev("rev", f.rev); err != nil {
		return err
	}
	if _, err := labels.Parse(f.labels); err != nil {
		return fmt.Errorf("-l %s: %w", f.labels, err)
	}
	if _, err := fields.ParseSelector(f.fields); err != nil {
		return fmt.Errorf("--field-selector %s: %w", f.fields, err)
	}
	if f.sortBy != "" {
		if _, err := parseSortField(f.sortBy, f.out.table()); err != nil {
			return err
		}
	}
	if f.keys && (f.labels != "" || f.fields != "" || f.sortBy != "" || f.where != "" || f.out.format != "") {
		return errors.New("--keys lists keys without reading values: it takes no -l, --field-selector, --sort-by, --where or -o")
	}
	_, err := compileWhere(f.where)
	return err
}

// selects says whether any flag asks for objects to be read and
// selected or ordered.
func (f getFlags) selects() bool {
	return f.labels != "" || f.fields != "" || f.sortBy != "" || f.where != ""
}

// printsOne says whether -o prints one object as the value it is (YAML,
// JSON, raw), rather than as a listing of one.
func (f getFlags) printsOne() bool {
	switch f.out.format {
	case "", decode.OutputYAML, decode.OutputJSON, cmdutil.OutputRaw:
		return !f.selects()
	}
	return false
}

func runGet(ctx context.Context, pr cmdutil.Printer, src etcdview.Source, args []string, f getFlags) error {
	var res *table.Resource
	var resErr error // the custom resources could not be read
	if !strings.HasPrefix(args[0], "/") {
		res, f.rev, resErr = resource.Resolve(ctx, src, f.dec, args[0], f.rev)
		if res == nil && len(args) == 2 {
			if resErr != nil {
				return resErr
			}
			return resource.NoType(args[0])
		}
	}
	if res == nil {
		// compact_rev_key, or a key starting with "/".
		if len(args) == 2 {
			return fmt.Errorf("a key takes no NAME: give %s alone, or a resource and a name", args[0])
		}
		if !f.printsOne() || f.keys {
			return fmt.Errorf("%s is a key: -o wide, name and templates, --keys, -l, --field-selector, --where and --sort-by list a RESOURCE", args[0])
		}
		err := getOne(ctx, pr, src, args[0], f)
		if errors.Is(err, etcdview.ErrNotFound) && !strings.HasPrefix(args[0], "/") {
			// Neither a resource nor a key: what kubectl would say.
			err = resource.NoType(args[0])
		}
		if err != nil && resErr != nil {
			return errors.Join(resErr, err)
		}
		return err
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
		switch {
		case f.allNamespaces && res.Namespaced:
			return errors.New("a NAME needs one namespace: use -n instead of -A")
		case f.labels != "" || f.fields != "":
			return errors.New("a NAME cannot be given with a selector")
		case f.keys:
			return errors.New("--keys lists a RESOURCE: give no NAME")
		case f.printsOne():
			return getOne(ctx, pr, src, prefix+args[1], f)
		}
	}
	masks := watchMasks(&pr, res, f)
	l, err := newLister(pr, res, f, ns)
	if err != nil {
		return err
	}
	defer masks.report(pr)
	defer func() {
		if w := res.Unconverted(); w != "" {
			fmt.Fprintln(pr.ErrOut, pr.EP.Text(w))
		}
	}()
	if len(args) == 2 {
		l.single = true
		err = l.list(ctx, onePage(src, prefix+args[1], f.rev))
	} else {
		err = getList(ctx, l, src, prefix, f)
	}
	if err != nil {
		return err
	}
	err = l.undecoded.report(pr)
	if werr := l.where.report(pr); err == nil {
		err = werr
	}
	return err
}

func getOne(ctx context.Context, pr cmdutil.Printer, src etcdview.Source, key string, f getFlags) error {
	kv, err := src.Get(ctx, key, f.rev)
	if err != nil {
		return err
	}
	return printValue(pr, key, kv, f.dec)
}

// printValue prints one value: as stored with -o raw, wherever it goes;
// else decoded, text from etcd inert on a terminal.
func printValue(s cmdutil.Printer, key string, kv *etcdview.KV, dec decode.Decoder) error {
	o := dec.DecodeAt(key, kv.Value, kv.ModRevision)
	if s.Output == cmdutil.OutputRaw {
		if o.RawHidden() {
			return errors.New("-o raw of a Secret prints its values: add --show-secrets")
		}
		_, err := s.Out.Write(kv.Value)
		return err
	}
	w := s.P.Writer(s.Out)
	if s.Output == decode.OutputJSON {
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
		fmt.Fprintln(s.ErrOut, s.EP.Text(decode.EscapeKey(key)+": "+o.Label()))
	}
	return nil
}

// getList lists the objects of a resource, read as of one revision: its
// keys alone with --keys, else its decoded objects as l prints them.
func getList(ctx context.Context, l *lister, src etcdview.Source, prefix string, f getFlags) error {
	if l.pr.Output == cmdutil.OutputRaw {
		return errors.New("-o raw prints one value: give a NAME")
	}
	// A list allocates in proportion to its objects, while what stays live
	// is small beside it (a few pages, the rows, or the keys alone): see
	// listGCPercent.
	limit := l.memoryLimit()
	if f.keys {
		limit = listMemoryLimit
	}
	if limit > 0 {
		defer debug.SetGCPercent(debug.SetGCPercent(listGCPercent))
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(limit))
	}
	if f.keys {
		var kvs []etcdview.KV
		err := etcdview.Pages(src, prefix, f.rev, etcdview.Paging{})(ctx, func(p etcdview.Page) error {
			kvs = append(kvs, p.Keys...)
			return nil
		})
		if err != nil {
			return err
		}
		return printObjectTable(l.pr, l.res.Resource, kvs)
	}
	return l.list(ctx, etcdview.Pages(src, prefix, f.rev, etcdview.Paging{Values: true}))
}

// onePage is a pager of the one value at key.
func onePage(src etcdview.Source, key string, rev int64) etcdview.Pager {
	return func(ctx context.Context, yield func(etcdview.Page) error) error {
		kv, err := src.Get(ctx, key, rev)
		if err != nil {
			return err
		}
		return yield(etcdview.Page{Keys: []etcdview.KV{*kv}, Revision: rev})
	}
}

package cli

import (
	"errors"
	"fmt"
	"io"

	"github.com/dustin/go-humanize/english"
	"github.com/etcdscope/etcdscope/cli/cmdutil"
	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/etcdview/restore"
	"github.com/spf13/cobra"
)

type restoreFlags struct {
	namespace string
	selector  string
	rev       int64
	output    *cmdutil.PrintFlags
}

func newRestoreCmd(conn *cmdutil.ConnFlags) *cobra.Command {
	f := &restoreFlags{}
	cmd := &cobra.Command{
		Use:   "restore KEY | RESOURCE NAME [-n NS] [--rev R] | --namespace NS [--rev R] [-l SELECTOR] [-o yaml|json]",
		Short: "Print what was, deleted or changed since, as a manifest kubectl apply -f - takes",
		Long: `restore prints, on stdout and nothing else, a manifest that
kubectl apply -f - takes: one object as it was at revision --rev, or
everything a user wrote in a namespace then. It never writes to etcd: the
apply is yours.

With KEY, or RESOURCE NAME as get names them, the object as it was at --rev
(default: the newest); a deleted object as it last was before its deletion.
With --namespace and no object, the Namespace and every object in it, in an
order kubectl applies (ServiceAccounts, RBAC, ConfigMaps and Secrets,
claims, Services, workloads, the rest, custom resources), -l keeping the
objects a label selector matches.

Each object is as the API server served it, without what the server sets
(resourceVersion, uid, creationTimestamp, generation, managedFields, the
deletion fields, selfLink, status), without ownerReferences to owners gone
by now, a Service without its allocated cluster IP, a Job without its
generated selector. What the cluster makes again is left out: Pods of a
ReplicaSet, Job, StatefulSet or DaemonSet, ReplicaSets of a Deployment,
claims of a StatefulSet's volumeClaimTemplates, ControllerRevisions,
Endpoints, EndpointSlices, Events, Leases, service-account tokens, the
kube-root-ca.crt ConfigMap and the default ServiceAccount. Secrets are
restored only with --show-secrets. stderr says the revision read, each
object left out and why, and what was dropped from an object.`,
		Example: `  etcdscope restore deploy web -n shop --rev 41200 | kubectl apply -f -
  etcdscope restore /registry/configmaps/shop/settings
  etcdscope restore --namespace shop --rev 41200 --show-secrets | kubectl apply -f -
  etcdscope restore --namespace shop --rev 41200 -l app=web -o json`,
		Args: cobra.MaximumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			pr, err := f.output.ToPrinter(cmd)
			if err != nil {
				return err
			}
			if err := f.check(args); err != nil {
				return err
			}
			dec, err := conn.Decoding.Decoder()
			if err != nil {
				return err
			}
			opts := restore.Options{ShowSecrets: dec.ShowSecrets, Selector: f.selector, Decoder: dec}
			return cmdutil.WithSource(cmd.Context(), conn, func(src etcdview.Source) error {
				var m *restore.Manifest
				if len(args) == 0 {
					m, err = restore.Namespace(cmd.Context(), src, f.namespace, f.rev, opts)
				} else {
					var key string
					if key, err = objectKey(cmd.Context(), src, dec, args, f.namespace); err != nil {
						return err
					}
					m, err = restore.Object(cmd.Context(), src, key, f.rev, opts)
				}
				if err != nil {
					return err
				}
				return printRestore(pr, m, f.output.Output)
			})
		},
	}
	cmd.Flags().StringVarP(&f.namespace, "namespace", "n", "", `the namespace to restore; with RESOURCE NAME, its namespace (default "default")`)
	cmd.Flags().StringVarP(&f.selector, "selector", "l", "", "with --namespace, restore only the objects this label selector matches (as kubectl -l)")
	cmd.Flags().Int64Var(&f.rev, "rev", 0, "restore as of this revision (0: the newest)")
	f.output = cmdutil.AddPrintFlags(cmd, decode.OutputYAML, "yaml (the default) or json", decode.OutputYAML, decode.OutputJSON)
	conn.Decoding.Register(cmd.Flags())
	return cmd
}

// check refuses arguments that do not go together, before anything is read.
func (f *restoreFlags) check(args []string) error {
	if err := cmdutil.CheckRev("rev", f.rev); err != nil {
		return err
	}
	switch {
	case len(args) == 0 && f.namespace == "":
		return errors.New("give an object (KEY or RESOURCE NAME) or --namespace NS")
	case len(args) > 0 && f.selector != "":
		return errors.New("--selector goes with --namespace and no object")
	}
	return nil
}

// printRestore writes the manifest on stdout and, on stderr, what was read
// and left out; a manifest that holds nothing is an error, as kubectl
// apply's "no objects passed to apply" would be.
func printRestore(pr cmdutil.Printer, m *restore.Manifest, output string) error {
	doc := m.YAML
	if output == decode.OutputJSON {
		doc = m.JSON
	}
	if len(doc) > 0 {
		w := pr.P.Writer(pr.Out)
		if _, err := w.Write(doc); err != nil {
			return err
		}
		if err := w.Flush(); err != nil {
			return err
		}
	}
	if err := restoreNotes(pr.ErrOut, pr.EP, m); err != nil {
		return err
	}
	if len(m.Objects) == 0 {
		return errors.New("nothing to restore: every object read was left out")
	}
	return nil
}

// restoreNotes are the lines stderr gets: the revision and counts, each
// object left out and why, and what was dropped from one restored.
func restoreNotes(w io.Writer, p cmdutil.Palette, m *restore.Manifest) error {
	_, err := fmt.Fprintf(w, "restored %s as of revision %d, left out %d\n", english.Plural(len(m.Objects), "object", ""), m.Revision, len(m.LeftOut))
	for _, o := range m.Objects {
		for _, d := range o.Dropped {
			if err == nil {
				_, err = fmt.Fprintf(w, "dropped from %s: %s\n", p.Text(ident(o.Kind, o.Namespace, o.Name)), p.Text(d))
			}
		}
		if o.Note != "" && err == nil {
			_, err = fmt.Fprintf(w, "added %s: %s\n", p.Text(ident(o.Kind, o.Namespace, o.Name)), p.Text(o.Note))
		}
	}
	// A kind left out many times for one reason (a namespace's Events)
	// is one line.
	count := map[restore.LeftOut]int{}
	for _, l := range m.LeftOut {
		count[restore.LeftOut{Kind: l.Kind, Why: l.Why}]++
	}
	for _, l := range m.LeftOut {
		group := restore.LeftOut{Kind: l.Kind, Why: l.Why}
		n := count[group]
		switch {
		case err != nil:
		case n > maxLeftOutLines:
			_, err = fmt.Fprintf(w, "left out %d of kind %s: %s\n", n, p.Text(l.Kind), p.Text(l.Why))
			count[group] = -1
		case n > 0:
			_, err = fmt.Fprintf(w, "left out %s: %s\n", p.Text(ident(l.Kind, l.Namespace, l.Name)), p.Text(l.Why))
		}
	}
	return err
}

// maxLeftOutLines is how many objects of one kind left out for one reason
// are named one a line; more are counted on one.
const maxLeftOutLines = 5

// ident names an object as kubectl's messages do: Kind ns/name.
func ident(kind, ns, name string) string {
	if ns == "" {
		return kind + " " + name
	}
	return kind + " " + ns + "/" + name
}

package cli

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/etcdscope/etcdscope/cli/cmdutil"
	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/etcdview/owners"
	"github.com/etcdscope/etcdscope/etcdview/resource"
	"github.com/spf13/cobra"
)

type ownersFlags struct {
	namespace string
	rev       int64
	orphans   bool
	output    *cmdutil.PrintFlags
}

// outputTree is owners' default: the tree, as kubectl-tree draws it.
const outputTree = "tree"

func newOwnersCmd(conn *cmdutil.ConnFlags) *cobra.Command {
	f := &ownersFlags{}
	cmd := &cobra.Command{
		Use:   "owners KEY | RESOURCE NAME [-n NS] [--rev R] [-o tree|json] | --orphans [-n NS]",
		Short: "Show what owns an object and what it owns, or what the garbage collector is stuck on",
		Long: `owners reads the metadata of every object stored below /registry at one
revision (Events aside: the garbage collector ignores them) and matches
ownerReferences to owners by uid, as Kubernetes' garbage collector does.

With KEY, or RESOURCE NAME as kubectl names them, it draws the chain from
each root down to the object, and below it every dependent, recursively,
each with its key, revision, age and deletion state. An owner no object has
shows as missing: the collector deletes a dependent once every owner it
names is gone.

--orphans lists instead, with one line of why each: objects whose owners are
all gone (the collector deletes them; an object whose ownerReferences were
removed, by kubectl delete --cascade=orphan, is no orphan), references the
collector cannot act on, dependents with blockOwnerDeletion that hold an
owner's foreground deletion, and owners stuck with the orphan or
foregroundDeletion finalizer.`,
		Example: `  etcdscope owners deploy web
  etcdscope owners /registry/pods/default/web-7d9c-x2xq9
  etcdscope owners rs web-7d9c -n shop --rev 41200 -o json
  etcdscope owners --orphans -n kube-system`,
		RunE: func(cmd *cobra.Command, args []string) error {
			pr, err := f.output.ToPrinter(cmd)
			if err != nil {
				return err
			}
			if err := f.check(cmd, args); err != nil {
				return err
			}
			dec, err := conn.Decoding.Decoder()
			if err != nil {
				return err
			}
			return cmdutil.WithSource(cmd.Context(), conn, func(src etcdview.Source) error {
				return runOwners(cmd.Context(), pr, src, dec, f, args)
			})
		},
	}
	cmd.Flags().StringVarP(&f.namespace, "namespace", "n", "", `namespace of a namespaced RESOURCE (default "default"); with --orphans, list only this namespace's`)
	cmd.Flags().Int64Var(&f.rev, "rev", 0, "read as of this revision (0: the newest)")
	cmd.Flags().BoolVar(&f.orphans, "orphans", false, "list orphans, invalid references and blocked deletions instead of one object's tree")
	f.output = cmdutil.AddPrintFlags(cmd, "", "tree (the default) or json", outputTree, decode.OutputJSON)
	conn.Decoding.Register(cmd.Flags())
	return cmd
}

// check refuses arguments that do not go together, before anything is read.
func (f *ownersFlags) check(cmd *cobra.Command, args []string) error {
	if err := cmdutil.CheckRev("rev", f.rev); err != nil {
		return err
	}
	switch {
	case f.orphans && len(args) > 0:
		return errors.New("--orphans lists the whole store: give no KEY or RESOURCE")
	case f.orphans && f.output.Output == outputTree:
		return errors.New("--orphans prints a table: -o json or none")
	case f.orphans:
		return nil
	case len(args) == 0 || len(args) > 2:
		return errors.New("give a KEY, or a RESOURCE and a NAME, or --orphans")
	case strings.HasPrefix(args[0], "/") && len(args) == 2:
		return fmt.Errorf("a key takes no NAME: give %s alone, or a resource and a name", args[0])
	case strings.HasPrefix(args[0], "/") && cmd.Flags().Changed("namespace"):
		return errors.New("-n goes with a RESOURCE NAME or --orphans: a key names its namespace itself")
	case !strings.HasPrefix(args[0], "/") && len(args) == 1:
		return fmt.Errorf("%s: give the NAME of the object too, or a key starting with /", args[0])
	}
	return nil
}

func runOwners(ctx context.Context, pr cmdutil.Printer, src etcdview.Source, dec decode.Decoder, f *ownersFlags, args []string) error {
	// The target is checked at the revision the read pins, before the
	// whole store is read for it.
	var key string
	var targetErr error
	pinned := func(rev int64) error {
		if !f.orphans {
			key, targetErr = ownersTarget(ctx, src, dec, args, f.namespace, rev)
		}
		return targetErr
	}
	g, rev, err := owners.Read(ctx, src, dec, f.rev, owners.Options{Pinned: pinned, Progress: ownersProgress(pr)})
	if targetErr != nil {
		return targetErr
	}
	if err := ownersReadEnded(pr, err); err != nil {
		return err
	}
	noteUnreadable(pr, g.Unreadable())
	if f.orphans {
		return printFindings(pr, g, rev, f.namespace)
	}
	id, ok := g.Lookup(key)
	if !ok {
		return fmt.Errorf("%s holds no object with metadata at revision %d", decode.EscapeKey(key), rev)
	}
	if err := printOwnerTree(pr, g, id, rev); err != nil {
		return err
	}
	if len(g.Owners(id)) == 0 {
		fmt.Fprintln(pr.ErrOut, pr.EP.Dim(g.Object(id).Ident()+" has no ownerReferences: nothing owns it, and the garbage collector never deletes it for an owner"))
	}
	return nil
}

// ownersProgress is the progress line of the values read, on a terminal.
func ownersProgress(pr cmdutil.Printer) func(int64) {
	line := progressLine(pr)
	if line == nil {
		return nil
	}
	return func(read int64) { line(etcdview.ScanProgress{Phase: etcdview.ScanValues, Done: read}) }
}

// ownersReadEnded clears the progress line of the values once they are read,
// or were being read when err came, and returns err as owners says it: the
// error of the read itself, without the directory (a compaction says which
// revision).
func ownersReadEnded(pr cmdutil.Printer, err error) error {
	var page *owners.ReadError
	switch ce := (*etcdview.CompactedError)(nil); {
	case err == nil:
		clearProgress(pr.ErrOut)
	case errors.As(err, &page):
		clearProgress(pr.ErrOut)
		return page.Err
	case errors.As(err, &ce):
		return ce // the read it failed in says nothing more
	}
	return err
}

// ownersTarget is the key args name (KEY, or RESOURCE NAME in ns), checked
// to hold a value at rev before the whole store is read for it.
func ownersTarget(ctx context.Context, src etcdview.Source, dec decode.Decoder, args []string, ns string, rev int64) (string, error) {
	key, missing := args[0], ""
	if len(args) == 2 {
		res, _, err := resource.Resolve(ctx, src, dec, args[0], rev)
		switch {
		case err != nil:
			return "", err
		case res == nil:
			return "", fmt.Errorf("unknown resource type %q: give a resource as kubectl names it (pods, po, deploy, ...) or a key starting with /", args[0])
		case !res.Namespaced:
			ns = ""
		case ns == "":
			ns = "default"
		}
		key = res.KeyPrefix("", ns) + args[1]
		missing = fmt.Sprintf("%s %q not found", res.Resource.Resource, args[1])
		if ns != "" {
			missing += " in namespace " + ns
		}
	}
	if owners.Ignored(decode.ParseKey(key)) {
		return "", fmt.Errorf("%s is an Event: the garbage collector ignores Events, so owners does not read them", decode.EscapeKey(key))
	}
	_, err := src.Get(ctx, key, rev)
	switch {
	case errors.Is(err, etcdview.ErrNotFound) && missing != "":
		return "", fmt.Errorf("%s at revision %d (no key %s)", missing, rev, decode.EscapeKey(key))
	case errors.Is(err, etcdview.ErrNotFound):
		return "", fmt.Errorf("%s does not exist at revision %d", decode.EscapeKey(key), rev)
	}
	return key, err
}

// noteUnreadable says on stderr what the graph could not see: values that
// hold no object, by format (an encrypted Secret's ownerReferences are
// unknown without --encryption-config).
func noteUnreadable(pr cmdutil.Printer, unreadable map[decode.Format]int) {
	if len(unreadable) == 0 {
		return
	}
	var parts []string
	n := 0
	for f, c := range unreadable {
		parts = append(parts, fmt.Sprintf("%d %s", c, f))
		n += c
	}
	sort.Strings(parts)
	hint := ""
	if unreadable[decode.FormatEncrypted] > 0 {
		hint = "; --encryption-config decrypts values encrypted at rest"
	}
	fmt.Fprintln(pr.ErrOut, pr.EP.Dim(fmt.Sprintf("%d values hold no object with metadata (%s) and are not in the graph%s", n, strings.Join(parts, ", "), hint)))
}

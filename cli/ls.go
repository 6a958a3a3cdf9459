package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/etcdscope/etcdscope/cli/cmdutil"
	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/spf13/cobra"
)

func newLsCmd(conn *cmdutil.ConnFlags) *cobra.Command {
	var (
		rev   int64
		total bool
		long  bool
	)
	cmd := &cobra.Command{
		Use:   "ls [PREFIX] [-l] [--rev R] [--count]",
		Short: "List one level of the key tree; -l adds the number of keys below each entry",
		Long: `ls lists the entries one level below PREFIX, read as a directory (/registry and
/registry/ are the same): the full prefix of a directory, ending in /, or the
key itself, one a line. With no PREFIX it lists the top of the keyspace. A key
given as PREFIX is listed itself.

ls never reads every key below PREFIX: a few ranges per entry, however many
keys there are, and on etcd 3.7 and later etcd does not walk them either. -l
puts the number of keys before each entry, and --count prints the number of
keys below PREFIX alone: etcd walks its index over every key it counts (about
170 ms a million keys), so both cost time in proportion to the keys.`,
		Example: `  etcdscope ls /registry
  etcdscope ls -l /registry/pods/kube-system --rev 1200
  etcdscope ls --db member/snap/db /registry --count`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cmdutil.CheckRev("rev", rev); err != nil {
				return err
			}
			prefix := ""
			if len(args) == 1 {
				prefix = args[0]
			}
			return cmdutil.WithSource(cmd.Context(), conn, func(src etcdview.Source) error {
				if total {
					return printTotal(cmd.Context(), cmdutil.PrinterFor(cmd), src, prefix, rev)
				}
				lvl, err := listLevel(cmd.Context(), src, prefix, rev)
				if err != nil {
					return err
				}
				if long {
					if err := etcdview.CountChildren(cmd.Context(), src, &lvl); err != nil {
						return err
					}
				}
				return printLevel(cmdutil.PrinterFor(cmd), lvl, long)
			})
		},
	}
	cmd.Flags().Int64Var(&rev, "rev", 0, "read the keyspace as of this revision (0: the newest)")
	cmd.Flags().BoolVarP(&long, "long", "l", false, "put the number of keys below each entry before it")
	cmd.Flags().BoolVar(&total, "count", false, "print only the number of keys below PREFIX")
	return cmd
}

// listLevel reads the level below prefix as a directory; a prefix that
// opens nothing but is a key lists that key alone, as ls lists a file.
func listLevel(ctx context.Context, src etcdview.Source, prefix string, rev int64) (etcdview.Level, error) {
	dir := asDir(prefix)
	lvl, err := src.Children(ctx, dir, rev)
	if err != nil || len(lvl.Children) > 0 || dir == prefix {
		return lvl, err
	}
	switch _, err := src.Get(ctx, prefix, lvl.Revision); {
	case err == nil:
		lvl.Children = []etcdview.Child{{Name: prefix, Prefix: prefix, Count: 1}}
	case !errors.Is(err, etcdview.ErrNotFound):
		return lvl, err
	}
	return lvl, nil
}

// asDir is prefix read as a directory: /registry is /registry/.
func asDir(prefix string) string {
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		return prefix + "/"
	}
	return prefix
}

// printTotal prints the number of keys below prefix read as a directory,
// or 1 for a key that opens nothing: one count-only range.
func printTotal(ctx context.Context, pr cmdutil.Printer, src etcdview.Source, prefix string, rev int64) error {
	dir := asDir(prefix)
	n, err := src.Count(ctx, dir, rev)
	if err != nil {
		return err
	}
	if n == 0 && dir != prefix {
		switch _, err := src.Get(ctx, prefix, rev); {
		case err == nil:
			n = 1
		case !errors.Is(err, etcdview.ErrNotFound):
			return err
		}
	}
	_, err = fmt.Fprintln(pr.Out, n)
	return err
}

// printLevel prints one entry a line, the full prefix or key, which pastes
// into the next command; long puts the count before it, right-aligned, as
// `du` and `uniq -c` do. A terminal gets a key that is not printable UTF-8
// quoted; a pipe gets it exact, as stored.
func printLevel(pr cmdutil.Printer, lvl etcdview.Level, long bool) error {
	width := 1
	for _, c := range lvl.Children {
		width = max(width, len(strconv.FormatInt(c.Count, 10)))
	}
	var b strings.Builder
	for _, c := range lvl.Children {
		name := c.Prefix
		if pr.P.TTY {
			name = decode.EscapeKey(name)
		}
		if c.Dir {
			name = pr.P.Dir(name)
		}
		if long {
			fmt.Fprintf(&b, "%*d  ", width, c.Count)
		}
		b.WriteString(name)
		b.WriteByte('\n')
	}
	_, err := io.WriteString(pr.Out, b.String())
	return err
}

package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/spf13/cobra"
)

func newLsCmd(conn *connFlags) *cobra.Command {
	var (
		rev   int64
		total bool
	)
	cmd := &cobra.Command{
		Use:   "ls [PREFIX] [--rev R] [--count]",
		Short: "List one level of the key tree, with the number of keys below each entry",
		Long: `ls lists the entries one level below PREFIX, read as a directory (/registry and
/registry/ are the same), each with the number of keys it holds: the full
prefix of a directory, ending in /, or the key itself. With no PREFIX it lists
the top of the keyspace. It never reads every key below PREFIX: one range per
entry, however many keys there are. A key given as PREFIX is listed itself.`,
		Example: `  etcdscope ls /registry
  etcdscope ls /registry/pods/kube-system --rev 1200
  etcdscope ls --db member/snap/db /registry --count`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			prefix := ""
			if len(args) == 1 {
				prefix = args[0]
			}
			return withSource(cmd.Context(), conn, func(src etcdview.Source) error {
				lvl, err := listLevel(cmd, src, prefix, rev)
				if err != nil {
					return err
				}
				if total {
					var n int64
					for _, c := range lvl.Children {
						n += c.Count
					}
					fmt.Fprintln(cmd.OutOrStdout(), n)
					return nil
				}
				return printLevel(cmd, lvl)
			})
		},
	}
	cmd.Flags().Int64Var(&rev, "rev", 0, "read the keyspace as of this revision (0: the newest)")
	cmd.Flags().BoolVar(&total, "count", false, "print only the number of keys below PREFIX")
	return cmd
}

// listLevel reads the level below prefix as a directory; a prefix that
// opens nothing but is a key lists that key alone, as ls lists a file.
func listLevel(cmd *cobra.Command, src etcdview.Source, prefix string, rev int64) (etcdview.Level, error) {
	dir := prefix
	if dir != "" && !strings.HasSuffix(dir, "/") {
		dir += "/"
	}
	lvl, err := src.Children(cmd.Context(), dir, rev)
	if err != nil || len(lvl.Children) > 0 || dir == prefix {
		return lvl, err
	}
	if _, err := src.Get(cmd.Context(), prefix, lvl.Revision); err == nil {
		lvl.Children = []etcdview.Child{{Name: prefix, Prefix: prefix, Count: 1}}
	}
	return lvl, nil
}

// printLevel prints one entry a line, as `du` and `uniq -c` do: the count
// right-aligned, then the full prefix or key, which pastes into the next
// command.
func printLevel(cmd *cobra.Command, lvl etcdview.Level) error {
	p := paletteFor(cmd.OutOrStdout())
	width := 1
	for _, c := range lvl.Children {
		width = max(width, len(strconv.FormatInt(c.Count, 10)))
	}
	var b strings.Builder
	for _, c := range lvl.Children {
		name := decode.EscapeKey(c.Prefix)
		if c.Dir {
			name = p.dir(name)
		}
		fmt.Fprintf(&b, "%*d  %s\n", width, c.Count, name)
	}
	_, err := io.WriteString(cmd.OutOrStdout(), b.String())
	return err
}

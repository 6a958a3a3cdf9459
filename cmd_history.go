package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/dustin/go-humanize"
	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/spf13/cobra"
)

func newHistoryCmd(conn *connFlags) *cobra.Command {
	var (
		diff   bool
		output string
	)
	cmd := &cobra.Command{
		Use:   "history KEY [--diff] [-o yaml|json]",
		Short: "Show every revision of one key etcd still holds, newest first",
		Long: `history lists the revisions of KEY that etcd still holds, newest first: each
write with the fields it changed, each deletion, across re-creations. It says
where compaction cut the history off. --diff shows each change as a unified
diff of the decoded objects; -o yaml or -o json prints every revision's object.`,
		Example: `  etcdscope history /registry/deployments/default/web
  etcdscope history /registry/pods/default/web-0 --diff
  etcdscope history --db member/snap/db /registry/pods/default/web-0 -o json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if output != "" && output != outputYAML && output != outputJSON {
				return fmt.Errorf("unknown output format %q: want yaml or json", output)
			}
			return withSource(cmd.Context(), conn, func(src etcdview.Source) error {
				h, err := src.History(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				if len(h.Entries) == 0 {
					msg := fmt.Sprintf("no revision of %s found", decode.EscapeKey(h.Key))
					if t := h.Truncated(); t != "" {
						msg += " (" + t + ")"
					}
					return fmt.Errorf("%s", msg)
				}
				switch {
				case output != "":
					return writeDoc(cmd.OutOrStdout(), output, historyDoc(h))
				case diff:
					return printHistoryDiffs(cmd.OutOrStdout(), paletteFor(cmd.OutOrStdout()), h)
				}
				return printHistory(cmd.OutOrStdout(), paletteFor(cmd.OutOrStdout()), h)
			})
		},
	}
	cmd.Flags().BoolVar(&diff, "diff", false, "show each revision as a diff from the one before")
	cmd.Flags().StringVarP(&output, "output", "o", "", "print every revision's object: yaml or json")
	conn.decoding.register(cmd.Flags())
	return cmd
}

// change names what an entry did, in watch's words; the oldest retained
// write whose earlier versions were compacted is a modification.
func change(e etcdview.Entry) etcdview.EventType {
	switch {
	case e.Deleted:
		return etcdview.Deleted
	case e.KV.Version == 1:
		return etcdview.Added
	}
	return etcdview.Modified
}

func paintChange(p palette, t etcdview.EventType) string {
	switch t {
	case etcdview.Added:
		return p.added(string(t))
	case etcdview.Deleted:
		return p.removed(string(t))
	}
	return p.changed(string(t))
}

func printHistory(w io.Writer, p palette, h etcdview.History) error {
	tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
	fmt.Fprintln(tw, "REVISION\tCHANGE\tVERSION\tSIZE\tWHAT CHANGED")
	for i, e := range h.Entries {
		var what, size, version string
		if !e.Deleted {
			size, version = humanize.IBytes(uint64(len(e.KV.Value))), fmt.Sprint(e.KV.Version)
			if i+1 < len(h.Entries) && !h.Entries[i+1].Deleted {
				what = decode.Diff(h.Entries[i+1].Object, e.Object).Summary()
			}
		}
		// tabwriter counts the colour codes as width: pad the plain word.
		t := change(e)
		fmt.Fprintf(tw, "%d\t%s%s\t%s\t%s\t%s\n", e.KV.ModRevision, paintChange(p, t), strings.Repeat(" ", len("MODIFIED")-len(t)), version, size, what)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return truncatedNote(w, p, h)
}

func printHistoryDiffs(w io.Writer, p palette, h etcdview.History) error {
	for i, e := range h.Entries {
		fmt.Fprintln(w, p.bold(fmt.Sprintf("revision %d", e.KV.ModRevision))+" "+paintChange(p, change(e)))
		switch {
		case e.Deleted:
		case i+1 == len(h.Entries) || h.Entries[i+1].Deleted:
			fmt.Fprint(w, e.Object.Text())
		default:
			for _, line := range strings.SplitAfter(decode.Diff(h.Entries[i+1].Object, e.Object).Unified, "\n") {
				switch {
				case strings.HasPrefix(line, "+++"), strings.HasPrefix(line, "---"):
					line = p.bold(line)
				case strings.HasPrefix(line, "+"):
					line = p.added(line)
				case strings.HasPrefix(line, "-"):
					line = p.removed(line)
				case strings.HasPrefix(line, "@@"):
					line = p.dim(line)
				}
				fmt.Fprint(w, line)
			}
		}
		fmt.Fprintln(w)
	}
	return truncatedNote(w, p, h)
}

func truncatedNote(w io.Writer, p palette, h etcdview.History) error {
	if t := h.Truncated(); t != "" {
		_, err := fmt.Fprintln(w, p.dim(t))
		return err
	}
	return nil
}

// historyEntry is one revision in -o json and -o yaml.
type historyEntry struct {
	Revision       int64           `json:"revision"`
	Change         string          `json:"change"`
	CreateRevision int64           `json:"createRevision,omitempty"`
	Version        int64           `json:"version,omitempty"`
	Object         json.RawMessage `json:"object,omitempty"`
	Value          string          `json:"value,omitempty"` // a value that is no object, as text
}

func historyDoc(h etcdview.History) map[string]any {
	entries := make([]historyEntry, 0, len(h.Entries))
	for _, e := range h.Entries {
		he := historyEntry{Revision: e.KV.ModRevision, Change: string(change(e)), CreateRevision: e.KV.CreateRevision, Version: e.KV.Version}
		if !e.Deleted {
			if js, err := e.Object.JSON(false); err == nil {
				he.Object = js
			} else {
				he.Value = e.Object.Text()
			}
		}
		entries = append(entries, he)
	}
	doc := map[string]any{"key": h.Key, "revision": h.Revision, "entries": entries}
	if h.CompactedAt != 0 {
		doc["compactedAt"] = h.CompactedAt
	}
	return doc
}

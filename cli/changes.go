package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/etcdscope/etcdscope/cli/cmdutil"
	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/etcdview/changes"
	"github.com/spf13/cobra"
)

// defaultSince is the window of changes with neither --since nor --from-rev.
const defaultSince = 10 * time.Minute

func newChangesCmd(conn *cmdutil.ConnFlags) *cobra.Command {
	var (
		r      changes.Range
		output *cmdutil.PrintFlags
	)
	cmd := &cobra.Command{
		Use:   "changes [PREFIX] [--since 10m | --from-rev A] [--to-rev B] [-o table|json]",
		Short: "Show what changed in a window of revisions, and who changed it",
		Long: `changes reads every change below PREFIX (every key when none is given) in a
window of revisions, and groups them by resource and namespace: how many
objects were ADDED, MODIFIED and DELETED; for each object, the fields that
differ from before the window to after it, and its writers: the managedFields
entries (manager, operation, subresource, time) its writes added or renewed.
A deletion's author is recorded nowhere in etcd.

etcd stores no time. The times of revisions are estimates, marked ≈, ≥ or
≤, from the times the objects themselves record: Leases' renew times,
managedFields times, creation and Event timestamps. A writer's time is the
one its managedFields entry records, by the API server's clock. On a
recording (etcdscope record) --since uses the times its revisions arrived
at, and the window's ends are at those. --since 10m (the default) starts the window at the
revision estimated ten minutes ago, found by a binary search on the most
often renewed Lease (a read per step, about 20 for a million revisions);
--from-rev A starts it at revision A. When etcd has compacted the start, the
window says where its history begins, and starts there.

Live, the window is read through a watch from its first revision, ended at
its last (--to-rev, default the head): etcd reads every revision of the
window from its backend, and each change's previous value. The read ends at
the first change after the window, or when etcd says the watch has caught up;
etcd before 3.4.31 and 3.5.13 cannot say so in order, and there the read of a
window whose end is quiet ends at the next change below PREFIX. Against --db,
the file's history is replayed, and --since counts back from the newest
time the file records, not from now. Nothing is written.`,
		Example: `  etcdscope changes
  etcdscope changes /registry/deployments/ --since 1h
  etcdscope changes --from-rev 1200 --to-rev 1500 -o json
  etcdscope changes --db member/snap/db --since 30m`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				r.Prefix = args[0]
			}
			return runChanges(cmd, conn, output, r)
		},
	}
	cmd.Flags().DurationVar(&r.Since, "since", 0, "start at the revision estimated this long ago (default 10m unless --from-rev)")
	cmd.Flags().Int64Var(&r.From, "from-rev", 0, "start at this revision")
	cmd.Flags().Int64Var(&r.To, "to-rev", 0, "end at this revision (default: the head)")
	cmd.MarkFlagsMutuallyExclusive("since", "from-rev")
	output = cmdutil.AddPrintFlags(cmd, "", "table (default) or json", cmdutil.OutputTable, decode.OutputJSON)
	conn.Decoding.Register(cmd.Flags())
	return cmd
}

func runChanges(cmd *cobra.Command, conn *cmdutil.ConnFlags, output *cmdutil.PrintFlags, r changes.Range) error {
	pr, err := output.ToPrinter(cmd)
	if err != nil {
		return err
	}
	if err := checkRange(&r, cmd.Flags().Changed("since")); err != nil {
		return err
	}
	dec, err := conn.Decoding.Decoder()
	if err != nil {
		return err
	}
	return cmdutil.WithSource(cmd.Context(), conn, func(src etcdview.Source) error {
		// --since counts back from now on a live store, and from the
		// file's newest time on a file: --db, or a kine file that
		// discovery found.
		if _, file := src.(etcdview.Offline); !file {
			r.Now = time.Now()
		}
		if fresh, err := neverWritten(cmd.Context(), src); err != nil || fresh {
			if err == nil {
				err = printNeverWritten(pr, r.Prefix)
			}
			return err
		}
		w, err := changes.Read(cmd.Context(), src, dec, r, nil)
		if err != nil {
			return err
		}
		if pr.Output == decode.OutputJSON {
			return cmdutil.WriteDoc(pr.P.Writer(pr.Out), decode.OutputJSON, changesDoc(r.Prefix, w))
		}
		return printChanges(pr.Out, pr.P, r.Prefix, w)
	})
}

// neverWritten says whether the store is at revision 1, where etcd starts:
// no revision holds a change, and the read needs none. A watch of the
// window would wait for a change after it, or, on etcd before 3.4.31 and
// 3.5.13, which cannot be asked whether it has caught up, for its own
// progress notification, ten minutes on.
func neverWritten(ctx context.Context, src etcdview.Source) (bool, error) {
	st, err := src.Status(ctx)
	return err == nil && st.Revision <= 1, err
}

// freshNote is what changes says of a store nothing was written to.
const freshNote = "No changes: etcd is at revision 1, nothing was ever written"

func printNeverWritten(pr cmdutil.Printer, prefix string) error {
	if pr.Output == decode.OutputJSON {
		rev := revisionJSON{Revision: 1, Estimate: changes.Unknown.Word()}
		return cmdutil.WriteDoc(pr.P.Writer(pr.Out), decode.OutputJSON, changesJSON{Prefix: prefix, From: rev, To: rev, Head: 1,
			Notes: []string{freshNote}, Groups: []changeGroupJSON{}})
	}
	_, err := fmt.Fprintln(pr.Out, freshNote)
	return err
}

// checkRange refuses a window that cannot be before anything is read, and
// gives it the default --since.
func checkRange(r *changes.Range, sinceGiven bool) error {
	switch {
	case sinceGiven && r.Since <= 0:
		return fmt.Errorf("--since %s: want a positive duration, such as 10m", r.Since)
	case r.From < 0 || r.To < 0:
		return errors.New("--from-rev and --to-rev are revisions: want positive numbers")
	case r.To > 0 && r.From > r.To:
		return fmt.Errorf("--from-rev %d is after --to-rev %d", r.From, r.To)
	}
	if r.From == 0 && !sinceGiven {
		r.Since = defaultSince
	}
	return nil
}

// printChanges writes the window, the counts of each group, then one row
// per object.
func printChanges(out io.Writer, p cmdutil.Palette, prefix string, w changes.Window) error {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	for _, line := range windowLines(prefix, w) {
		fmt.Fprintln(tw, p.Text(line))
	}
	if len(w.Groups) == 0 {
		fmt.Fprintln(tw, "No changes.")
		return tw.Flush()
	}
	fmt.Fprintln(tw, "\nRESOURCE\tNAMESPACE\tADDED\tMODIFIED\tDELETED\tOBJECTS")
	for _, g := range w.Groups {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\n", p.Cell(g.ResourceName()), p.Cell(cell(g.Namespace)), g.Added, g.Modified, g.Deleted, len(g.Objects))
	}
	// SUMMARY, the longest cell, is last: tabwriter pads every column but
	// the last to its widest cell, and a summary of many fields padded
	// every row to 500 characters.
	fmt.Fprintln(tw, "\nRESOURCE\tNAMESPACE\tNAME\tADDED\tMODIFIED\tDELETED\tREVISIONS\tLAST CHANGE (EST.)\tWRITERS\tSUMMARY")
	for _, g := range w.Groups {
		for _, o := range g.Objects {
			writers := make([]string, len(o.Writers))
			for i, wr := range o.Writers {
				writers[i] = wr.String()
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\n", p.Cell(g.ResourceName()), p.Cell(cell(g.Namespace)), p.Cell(o.Name),
				o.Added, o.Modified, o.Deleted, o.Revisions(), w.Times.At(o.LastRevision),
				p.Cell(cell(strings.Join(writers, ", "))), p.Cell(o.Summary))
		}
	}
	return tw.Flush()
}

// timesFrom says where the times of the window's ends come from.
func timesFrom(w changes.Window) string {
	if w.Recorded {
		return "the times the recording received these revisions"
	}
	return "times are estimates, from the times objects record"
}

// windowLines say which revisions the window covers, their estimated
// times, and how it was found.
func windowLines(prefix string, w changes.Window) []string {
	below := "every key"
	if prefix != "" {
		below = "keys below " + prefix
	}
	lines := []string{
		fmt.Sprintf("%s (head %d), %s: %d changes", w.Span(), w.Head, below, w.Events),
		fmt.Sprintf("From %s to %s: %s", w.Times.At(w.From), w.Times.At(w.To), timesFrom(w)),
	}
	if w.Since != "" {
		lines = append(lines, "Window "+w.Since)
	}
	if w.CompactedAt != 0 {
		lines = append(lines, fmt.Sprintf("History before revision %d was compacted: the window starts there", w.CompactedAt))
	}
	for _, n := range w.Notes {
		lines = append(lines, "Note: "+n)
	}
	return lines
}

// cell is s for a table cell, "-" when empty (a cluster-scoped
// resource's namespace, an object without writers), so that every row has
// as many fields as the header.
func cell(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// The JSON document of changes -o json. Every time of a revision is an
// estimate, with its bound ("about", "at least", "at most").
type (
	changesJSON struct {
		Prefix      string            `json:"prefix"`
		From        revisionJSON      `json:"from"`
		To          revisionJSON      `json:"to"`
		Head        int64             `json:"head"`
		CompactedAt int64             `json:"historyBeginsAt,omitempty"`
		Since       string            `json:"since,omitempty"`
		Notes       []string          `json:"notes,omitempty"`
		Events      int               `json:"events"`
		Counts      changes.Counts    `json:"counts"`
		Groups      []changeGroupJSON `json:"groups"`
	}
	revisionJSON struct {
		Revision      int64      `json:"revision"`
		EstimatedTime *time.Time `json:"estimatedTime,omitempty"`
		Estimate      string     `json:"estimate"`
	}
	changeGroupJSON struct {
		Group     string             `json:"group"`
		Resource  string             `json:"resource"`
		Namespace string             `json:"namespace,omitempty"`
		Counts    changes.Counts     `json:"counts"`
		Objects   []changeObjectJSON `json:"objects"`
	}
	changeObjectJSON struct {
		Key           string         `json:"key"`
		Name          string         `json:"name"`
		Counts        changes.Counts `json:"counts"`
		FirstRevision int64          `json:"firstRevision"`
		LastRevision  revisionJSON   `json:"lastRevision"`
		Summary       string         `json:"summary"`
		Writers       []writerJSON   `json:"writers"`
	}
	writerJSON struct {
		Manager     string     `json:"manager"`
		Operation   string     `json:"operation"`
		Subresource string     `json:"subresource,omitempty"`
		Time        *time.Time `json:"time,omitempty"`
	}
)

func changesDoc(prefix string, w changes.Window) changesJSON {
	doc := changesJSON{Prefix: prefix, From: revisionDoc(w.Times, w.From), To: revisionDoc(w.Times, w.To), Head: w.Head,
		CompactedAt: w.CompactedAt, Since: w.Since, Notes: w.Notes, Events: w.Events, Counts: w.Counts, Groups: []changeGroupJSON{}}
	for _, g := range w.Groups {
		gj := changeGroupJSON{Group: g.Group, Resource: g.Resource, Namespace: g.Namespace, Counts: g.Counts}
		for _, o := range g.Objects {
			oj := changeObjectJSON{Key: o.Key, Name: o.Name, Counts: o.Counts, FirstRevision: o.FirstRevision,
				LastRevision: revisionDoc(w.Times, o.LastRevision), Summary: o.Summary, Writers: []writerJSON{}}
			for _, wr := range o.Writers {
				wj := writerJSON{Manager: wr.Manager, Operation: wr.Operation, Subresource: wr.Subresource}
				if !wr.Time.IsZero() {
					t := wr.Time.UTC()
					wj.Time = &t
				}
				oj.Writers = append(oj.Writers, wj)
			}
			gj.Objects = append(gj.Objects, oj)
		}
		doc.Groups = append(doc.Groups, gj)
	}
	return doc
}

func revisionDoc(times *changes.TimeMap, rev int64) revisionJSON {
	e := times.At(rev)
	r := revisionJSON{Revision: rev, Estimate: e.Bound.Word()}
	if e.Bound != changes.Unknown {
		t := e.Time.UTC()
		r.EstimatedTime = &t
	}
	return r
}

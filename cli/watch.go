package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"

	"github.com/dustin/go-humanize"
	"github.com/etcdscope/etcdscope/cli/cmdutil"
	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/spf13/cobra"
)

func newWatchCmd(conn *cmdutil.ConnFlags) *cobra.Command {
	var (
		rev    int64
		output *cmdutil.PrintFlags
	)
	cmd := &cobra.Command{
		Use:   "watch [PREFIX] [--rev R] [-o json]",
		Short: "Print every change below PREFIX, one line per event, until interrupted",
		Long: `watch prints each change of a key below PREFIX (every key when none is given)
as one line: revision, ADDED, MODIFIED or DELETED, key and value size; with
-o json, one JSON object per line. --rev R starts at revision R, replaying
what etcd still holds. The stream resumes by itself after a broken
connection or a leader change, with no event lost or repeated; notes about it
go to stderr. Against --db it replays the file's changes and ends.`,
		Example: `  etcdscope watch /registry/pods/
  etcdscope watch /registry/ --rev 1200 -o json | jq .key`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			pr, err := output.ToPrinter(cmd)
			if err != nil {
				return err
			}
			if err := cmdutil.CheckRev("rev", rev); err != nil {
				return err
			}
			prefix := ""
			if len(args) == 1 {
				prefix = args[0]
			}
			return cmdutil.WithSource(cmd.Context(), conn, func(src etcdview.Source) error {
				batches := src.Watch(cmd.Context(), prefix, etcdview.WatchOptions{Rev: rev})
				return printWatch(pr, batches)
			})
		},
	}
	cmd.Flags().Int64Var(&rev, "rev", 0, "start at this revision (0: changes from now on)")
	output = cmdutil.AddPrintFlags(cmd, "", "json: one JSON object per event", decode.OutputJSON)
	return cmd
}

// printWatch prints each batch's events as they come, a write a batch:
// nothing is held but the batch being printed. Lines name keys escaped;
// JSON, whose encoder leaves C1 and bidi controls as they are, is inert
// on a terminal.
func printWatch(s cmdutil.Printer, batches <-chan etcdview.Batch) error {
	out := bufio.NewWriterSize(s.Out, 64<<10)
	w := io.Writer(out)
	printEvent := printEventLine(s.P)
	if s.Output == decode.OutputJSON {
		// Each write is a whole line of UTF-8: the writer holds nothing
		// back to flush.
		w, printEvent = s.P.Writer(out), printEventJSON
	}
	for b := range batches {
		if b.Note != "" {
			fmt.Fprintln(s.ErrOut, s.EP.Text("etcdscope: "+b.Note))
		}
		if b.Err != nil {
			out.Flush() // what came before it
			return b.Err
		}
		for _, ev := range b.Events {
			if err := printEvent(w, ev); err != nil {
				return err
			}
		}
		if err := out.Flush(); err != nil {
			return err
		}
	}
	return out.Flush()
}

func printEventLine(p cmdutil.Palette) func(io.Writer, etcdview.Event) error {
	return func(w io.Writer, ev etcdview.Event) error {
		size := ""
		if ev.Type != etcdview.Deleted {
			size = humanize.IBytes(uint64(len(ev.KV.Value)))
		}
		_, err := fmt.Fprintf(w, "%d %s %s %s\n", ev.KV.ModRevision, p.Change(ev.Type), decode.EscapeKey(ev.KV.Key), size)
		return err
	}
}

// eventJSON is one line of watch -o json.
type eventJSON struct {
	Revision int64  `json:"revision"`
	Type     string `json:"type"`
	Key      string `json:"key"`
	Size     int    `json:"size"`
	Version  int64  `json:"version,omitempty"`
	PrevSize *int   `json:"prevSize,omitempty"`
}

func printEventJSON(w io.Writer, ev etcdview.Event) error {
	e := eventJSON{Revision: ev.KV.ModRevision, Type: string(ev.Type), Key: ev.KV.Key, Size: len(ev.KV.Value), Version: ev.KV.Version}
	if ev.Prev != nil {
		n := len(ev.Prev.Value)
		e.PrevSize = &n
	}
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

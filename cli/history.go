package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dustin/go-humanize"
	"github.com/etcdscope/etcdscope/cli/cmdutil"
	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/spf13/cobra"
)

func newHistoryCmd(conn *cmdutil.ConnFlags) *cobra.Command {
	var (
		diff, all bool
		namespace string
		output    *cmdutil.PrintFlags
	)
	cmd := &cobra.Command{
		Use:   "history KEY|RESOURCE NAME|RESOURCE/NAME [-n NS] [--all-incarnations] [--diff] [-o yaml|json]",
		Short: "Show every revision of one key etcd still holds, newest first",
		Long: `history lists the revisions of KEY that etcd still holds, newest first: each
write with the fields it changed, each deletion. It says where compaction cut
the history off. --diff shows each change as a unified diff of the decoded
objects; -o yaml or -o json prints every revision's object. An object can be
named as get names it: RESOURCE NAME or RESOURCE/NAME, in the namespace -n
(default "default").

On a live etcd it reads the key's current incarnation, one read per version,
or, for a deleted key, the last incarnation up to its deletion, and says
when an earlier one (before a deletion and re-creation) exists.
--all-incarnations reads those too: etcd has no read for them but a replay
of its whole history, which takes seconds on a store of millions of
revisions (a progress line shows on a terminal). An offline file (--db)
always gives every incarnation.`,
		Example: `  etcdscope history /registry/deployments/default/web
  etcdscope history pod web-0 -n default --diff
  etcdscope history sts/web
  etcdscope history /registry/pods/default/web-0 --all-incarnations
  etcdscope history --db member/snap/db /registry/pods/default/web-0 -o json`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			pr, err := output.ToPrinter(cmd)
			if err != nil {
				return err
			}
			dec, err := conn.Decoding.Decoder()
			if err != nil {
				return err
			}
			return cmdutil.WithSource(cmd.Context(), conn, func(src etcdview.Source) error {
				key, err := objectKey(cmd.Context(), src, dec, args, namespace)
				if err != nil {
					return err
				}
				opts := etcdview.HistoryOptions{AllIncarnations: all}
				var line *replayLine
				if all && pr.EP.TTY {
					line = &replayLine{w: pr.ErrOut, start: time.Now()}
					opts.Progress = line.show
				}
				h, err := src.History(cmd.Context(), key, opts)
				line.clear()
				if err != nil {
					return err
				}
				if len(h.Entries) == 0 {
					return h.NoRevision(readEarlier)
				}
				return printHistoryAs(pr, h, dec, diff)
			})
		},
	}
	cmd.Flags().BoolVar(&all, "all-incarnations", false, "also read the incarnations before the one read (a deleted key's is its last): a replay of etcd's whole history")
	cmd.Flags().StringVarP(&namespace, "namespace", "n", "", `namespace of a namespaced RESOURCE (default "default")`)
	cmd.Flags().BoolVar(&diff, "diff", false, "show each revision as a diff from the one before")
	output = cmdutil.AddPrintFlags(cmd, "", "print every revision's object: yaml or json", decode.OutputYAML, decode.OutputJSON)
	conn.Decoding.Register(cmd.Flags())
	return cmd
}

// readEarlier is how the command names the flag that reads what a
// history left unread.
const readEarlier = "(read with --all-incarnations)"

// replayLine shows a replay's progress on one line of a terminal, redrawn
// in place; nil shows nothing.
type replayLine struct {
	w     io.Writer
	start time.Time
	drawn bool
}

func (l *replayLine) show(p etcdview.ReplayProgress) {
	fmt.Fprintf(l.w, "\r\x1b[K%s, %.1fs", p, time.Since(l.start).Seconds())
	l.drawn = true
}

// clear erases the line, so that what follows on the terminal starts on a
// clean one.
func (l *replayLine) clear() {
	if l != nil && l.drawn {
		fmt.Fprint(l.w, "\r\x1b[K")
	}
}

// printHistoryAs prints h: as a document with -o, as diffs with --diff,
// else as a table. Each revision is written as it is read, through one
// buffer: a key with 100k revisions never has a second copy of them all
// built in memory, as a whole document or a table would be.
func printHistoryAs(s cmdutil.Printer, h etcdview.History, d decode.Decoder, diff bool) error {
	out := bufio.NewWriterSize(s.Out, 64<<10)
	var err error
	switch {
	case s.Output != "":
		w := s.P.Writer(out)
		if err = printHistoryDoc(w, h, d, s.Output); err == nil {
			err = w.Flush()
		}
	case diff:
		err = printHistoryDiffs(out, s.P, h, d)
	default:
		err = printHistory(out, s.P, h, d)
	}
	if ferr := out.Flush(); err == nil {
		err = ferr
	}
	return err
}

// printHistory writes the table as tabwriter (padding 3) would lay it
// out, without holding its cells: every column but the last is known from
// the revisions before the summaries, which are written a row at a time.
func printHistory(w io.Writer, p cmdutil.Palette, h etcdview.History, d decode.Decoder) error {
	header := []string{"REVISION", "CHANGE", "VERSION", "SIZE", "WHAT CHANGED"}
	widths := []int{len(header[0]), len("MODIFIED"), len(header[2]), len(header[3])}
	for _, e := range h.Entries {
		rev, version, size := historyCells(e)
		widths[0] = max(widths[0], len(rev))
		widths[2] = max(widths[2], len(version))
		widths[3] = max(widths[3], len(size))
	}
	const padding = 3
	pad := func(b []byte, cell string, width int) []byte {
		b = append(b, cell...)
		for range width - utf8.RuneCountInString(cell) + padding {
			b = append(b, ' ')
		}
		return b
	}
	var row []byte
	for i, cell := range header[:4] {
		row = pad(row, cell, widths[i])
	}
	if _, err := fmt.Fprintf(w, "%s%s\n", row, header[4]); err != nil {
		return err
	}
	err := h.EachRevision(d, func(i int, e etcdview.Entry, before *decode.Object, after decode.Object) error {
		rev, version, size := historyCells(e)
		t := e.Type()
		what := ""
		if t == etcdview.Modified && before != nil {
			what = p.Text(etcdview.Summary(t, before, after))
		}
		row = pad(row[:0], rev, widths[0])
		// The word is painted after its padding is counted.
		row = append(row, p.Change(t)...)
		row = pad(row, "", widths[1]-len(t))
		row = pad(pad(row, version, widths[2]), size, widths[3])
		_, err := fmt.Fprintf(w, "%s%s\n", row, what)
		return err
	})
	if err != nil {
		return err
	}
	return truncatedNote(w, p, h)
}

// historyCells are an entry's revision, version and size, as the table
// shows them; a deletion has neither version nor size. A value's version
// is 1 or more on etcd; kine keeps none (0 in every value): "-", unknown.
func historyCells(e etcdview.Entry) (rev, version, size string) {
	rev = strconv.FormatInt(e.KV.ModRevision, 10)
	if !e.Deleted {
		version, size = strconv.FormatInt(e.KV.Version, 10), humanize.IBytes(uint64(len(e.KV.Value)))
		if e.KV.Version == 0 {
			version = "-"
		}
	}
	return rev, version, size
}

func printHistoryDiffs(w io.Writer, p cmdutil.Palette, h etcdview.History, d decode.Decoder) error {
	err := h.EachRevision(d, func(i int, e etcdview.Entry, before *decode.Object, after decode.Object) error {
		fmt.Fprintln(w, p.Bold(fmt.Sprintf("revision %d", e.KV.ModRevision))+" "+p.Change(e.Type()))
		switch {
		case e.Deleted:
		case before == nil:
			tw := p.Writer(w)
			io.WriteString(tw, after.Text())
			tw.Flush()
		default:
			writeUnified(w, p, decode.Diff(*before, after).Unified)
		}
		_, err := fmt.Fprintln(w)
		return err
	})
	if err != nil {
		return err
	}
	return truncatedNote(w, p, h)
}

// writeUnified writes a unified diff coloured as the TUI colours it.
func writeUnified(w io.Writer, p cmdutil.Palette, unified string) {
	for line := range strings.Lines(unified) {
		text, nl := strings.CutSuffix(line, "\n")
		switch decode.KindOfDiffLine(text) {
		case decode.DiffHeader:
			text = p.Bold(text)
		case decode.DiffAdded:
			text = p.Added(text)
		case decode.DiffRemoved:
			text = p.Removed(text)
		case decode.DiffHunk:
			text = p.Dim(text)
		default:
			text = p.Text(text)
		}
		io.WriteString(w, text)
		if nl {
			io.WriteString(w, "\n")
		}
	}
}

// truncatedNote says under the revisions where compaction cut the history
// off, and that an earlier incarnation exists when one was seen and not
// read, a line each. That there may be one is not said, as it could be
// said of most keys.
func truncatedNote(w io.Writer, p cmdutil.Palette, h etcdview.History) error {
	if t := h.Truncated(); t != "" {
		if _, err := fmt.Fprintln(w, p.Dim(t)); err != nil {
			return err
		}
	}
	if h.Earlier == etcdview.EarlierUnread {
		_, err := fmt.Fprintln(w, p.Dim(h.EarlierNote()+" "+readEarlier))
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

// historyEntryOf is e as -o json and -o yaml show it.
func historyEntryOf(e etcdview.Entry, d decode.Decoder) historyEntry {
	he := historyEntry{Revision: e.KV.ModRevision, Change: string(e.Type()), CreateRevision: e.KV.CreateRevision, Version: e.KV.Version}
	if !e.Deleted {
		o := e.Object(d)
		if js, err := o.JSON(false); err == nil {
			he.Object = js
		} else {
			he.Value = o.Text()
		}
	}
	return he
}

// printHistoryDoc writes h as the document kubectl's printers would make
// of {compactedAt, earlierIncarnations, earlierSeenAt, entries, key,
// revision} (writeDoc: JSON indented by four, or that JSON as
// sigs.k8s.io/yaml writes it), an entry at a time: the keys come in the
// order both write them, and each entry is written where the whole
// document would have it.
func printHistoryDoc(w io.Writer, h etcdview.History, d decode.Decoder, output string) error {
	var head, tail []byte
	var err error
	before := historyDocHead(h)
	key, _ := json.Marshal(h.Key)
	end := fmt.Appendf(nil, `{"key":%s,"revision":%d}`, key, h.Revision)
	if output == decode.OutputYAML {
		if head, err = decode.JSONToYAML(nil, []byte("{"+before+"}")); err != nil {
			return err
		}
		head = append(head, "entries:\n"...)
		if tail, err = decode.JSONToYAML(nil, end); err != nil {
			return err
		}
	} else {
		if head, err = jsonIndent([]byte("{" + before + `,"entries":[]}`)); err != nil {
			return err
		}
		head = head[:len(head)-len("]\n}\n")] // up to "entries": [, the items follow
		if tail, err = jsonIndent(append([]byte(`{"x":0,`), end[1:]...)); err != nil {
			return err
		}
		tail = append([]byte("\n    ],"), tail[len("{\n    \"x\": 0,"):]...)
	}
	if _, err := w.Write(head); err != nil {
		return err
	}
	var item []byte
	for i, e := range h.Entries {
		js, err := json.Marshal(historyEntryOf(e, d))
		if err != nil {
			return err
		}
		if output == decode.OutputYAML {
			item, err = decode.JSONToYAMLItem(item[:0], js)
		} else {
			item, err = jsonItem(item[:0], js, i == 0)
		}
		if err != nil {
			return err
		}
		if _, err := w.Write(item); err != nil {
			return err
		}
	}
	_, err = w.Write(tail)
	return err
}

// historyDocHead is the fields of the history document before its
// entries, as JSON without braces.
func historyDocHead(h etcdview.History) string {
	var fields []string
	if h.CompactedAt != 0 {
		fields = append(fields, fmt.Sprintf(`"compactedAt":%d`, h.CompactedAt))
	}
	fields = append(fields, fmt.Sprintf(`"earlierIncarnations":%q`, h.Earlier))
	if h.EarlierSeenAt != 0 {
		fields = append(fields, fmt.Sprintf(`"earlierSeenAt":%d`, h.EarlierSeenAt))
	}
	return strings.Join(fields, ",")
}

// jsonIndent is js as writeDoc indents it.
func jsonIndent(js []byte) ([]byte, error) {
	var b bytes.Buffer
	if err := json.Indent(&b, js, "", "    "); err != nil {
		return nil, err
	}
	return append(b.Bytes(), '\n'), nil
}

// jsonItem appends js as an item of the array at depth 1 writeDoc indents.
func jsonItem(dst, js []byte, first bool) ([]byte, error) {
	if !first {
		dst = append(dst, ',')
	}
	dst = append(dst, "\n        "...)
	b := bytes.NewBuffer(dst)
	if err := json.Indent(b, js, "        ", "    "); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

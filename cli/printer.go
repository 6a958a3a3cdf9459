package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/spf13/cobra"
	"golang.org/x/term"
	"sigs.k8s.io/yaml"
)

// The -o formats that are not decode's (decode.OutputYAML, OutputJSON,
// OutputProto), spelled as kubectl and etcdctl spell them.
const (
	outputRaw   = "raw"   // the value as etcd holds it
	outputTable = "table" // columns, as kubectl and etcdctl -w table print them
)

// printFlags is one command's -o, as kubectl's PrintFlags: the formats the
// command prints, checked in one place, with one wording, before the
// command reads anything; toPrinter builds what prints.
type printFlags struct {
	output  string
	formats []string
	// templated are the formats that take a value, "jsonpath=TEMPLATE".
	templated []string
}

// addPrintFlags registers -o on cmd: formats are what it accepts, def its
// default ("" for the command's own default, which usage describes).
func addPrintFlags(cmd *cobra.Command, def, usage string, formats ...string) *printFlags {
	f := &printFlags{formats: formats}
	cmd.Flags().StringVarP(&f.output, "output", "o", def, usage)
	return f
}

// toPrinter is the printer of cmd for the -o given, or the error that
// names the formats cmd has. No -o, or an empty one, is the default.
func (f *printFlags) toPrinter(cmd *cobra.Command) (printer, error) {
	name, _, _ := strings.Cut(f.output, "=")
	if f.output != "" && !slices.Contains(f.formats, f.output) && !slices.Contains(f.templated, name) {
		want := slices.Clone(f.formats)
		for _, t := range f.templated {
			want = append(want, t+"=...")
		}
		list := strings.Join(want, ", ")
		if n := len(want); n > 1 {
			list = strings.Join(want[:n-1], ", ") + " or " + want[n-1]
		}
		return printer{}, fmt.Errorf("unknown output format %q: want %s", f.output, list)
	}
	pr := printerFor(cmd)
	pr.output = f.output
	return pr, nil
}

// printer is where a command prints and how: its output and error streams,
// each with how it shows text (palette: inert on a terminal, exact to a
// pipe), and the -o format ("" for the command's default).
type printer struct {
	out, errOut io.Writer
	p, ep       palette
	output      string
}

// printerFor is the printer of a command without -o.
func printerFor(cmd *cobra.Command) printer {
	out, errOut := cmd.OutOrStdout(), cmd.ErrOrStderr()
	return printer{out: out, errOut: errOut, p: paletteFor(out), ep: paletteFor(errOut)}
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
	if output == decode.OutputYAML {
		y, err := yaml.JSONToYAML(out)
		if err != nil {
			return err
		}
		out = y
	}
	_, err := w.Write(out)
	return err
}

// maxCellRunes caps the text of a table's cell: a column is as wide as its
// widest cell, so one 30 KB key padded each of 20k rows to 30 KB (600 MB).
// kubectl does not cap, and its tables are the model: the cap is above
// the longest text Kubernetes bounds in a column, an Event's message
// (events.k8s.io's note, at most 1024 characters: kube-apiserver's
// ValidateEventCreate); at 256 runes the events' tables differed from
// kubectl's. -o name, json, yaml and raw print the whole.
const maxCellRunes = 1024

// capCell is s cut to maxCellRunes runes, the last of them "…", when it is
// longer.
func capCell(s string) string {
	if len(s) <= maxCellRunes {
		return s // bytes are at least as many as runes
	}
	n := 0
	for i := range s {
		if n == maxCellRunes-1 {
			if utf8.RuneCountInString(s[i:]) > 1 {
				return s[:i] + "…"
			}
			return s
		}
		n++
	}
	return s
}

// palette is how one output stream shows text. On a terminal, text from etcd
// is made inert (decode.Inert: escape sequences in a value shown, never
// obeyed) and, unless NO_COLOR is set (https://no-color.org), coloured with
// ANSI SGR codes. A pipe or a file gets the bytes as they are, uncoloured.
type palette struct {
	tty   bool // w is a terminal
	color bool // tty and NO_COLOR unset or empty
}

func paletteFor(w io.Writer) palette {
	tty := isTerminal(w)
	return palette{tty: tty, color: tty && os.Getenv("NO_COLOR") == ""}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// text is s as this stream shows one line of it: inert on a terminal.
func (p palette) text(s string) string {
	if p.tty {
		return decode.Inert(s)
	}
	return s
}

// cell is s as this stream shows it in a table's cell: inert on a
// terminal, and capped.
func (p palette) cell(s string) string { return capCell(p.text(s)) }

func (p palette) paint(code, s string) string {
	s = p.text(s)
	if !p.color || s == "" {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

func (p palette) dir(s string) string     { return p.paint("1;34", s) }
func (p palette) dim(s string) string     { return p.paint("2", s) }
func (p palette) added(s string) string   { return p.paint("32", s) }
func (p palette) changed(s string) string { return p.paint("33", s) }
func (p palette) removed(s string) string { return p.paint("31", s) }
func (p palette) bold(s string) string    { return p.paint("1", s) }

// change is ADDED, MODIFIED or DELETED: green, yellow or red.
func (p palette) change(t etcdview.EventType) string {
	switch t {
	case etcdview.Added:
		return p.added(string(t))
	case etcdview.Deleted:
		return p.removed(string(t))
	}
	return p.changed(string(t))
}

// writer is w for a stream of text blocks (YAML, JSON, tables without
// colour): on a terminal every write is made inert, keeping its newlines and
// tabs; elsewhere bytes pass through exact, so pipes and files get what etcd
// holds. Flush it when the stream ends.
func (p palette) writer(w io.Writer) *textWriter {
	return &textWriter{w: w, inert: p.tty}
}

// textWriter passes writes through decode.InertText when inert. A UTF-8
// sequence cut between two writes is held back until its end arrives, so
// that it is not shown as two invalid bytes.
type textWriter struct {
	w     io.Writer
	inert bool
	held  []byte
}

func (tw *textWriter) Write(p []byte) (int, error) {
	if !tw.inert {
		return tw.w.Write(p)
	}
	buf := append(tw.held, p...)
	cut := len(buf) - partialRuneSuffix(buf)
	tw.held = append(tw.held[:0:0], buf[cut:]...)
	if cut > 0 {
		if _, err := io.WriteString(tw.w, decode.InertText(string(buf[:cut]))); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// partialRuneSuffix is the length of an incomplete UTF-8 sequence at the end
// of b that more bytes could complete: 0 to 3.
func partialRuneSuffix(b []byte) int {
	for n := 1; n <= 3 && n <= len(b); n++ {
		c := b[len(b)-n]
		if c < utf8.RuneSelf {
			return 0
		}
		if utf8.RuneStart(c) {
			if utf8.FullRune(b[len(b)-n:]) {
				return 0
			}
			return n
		}
	}
	return 0
}

// Flush writes what is held back: a trailing sequence that never completed,
// shown as the invalid bytes it is.
func (tw *textWriter) Flush() error {
	if len(tw.held) == 0 {
		return nil
	}
	_, err := io.WriteString(tw.w, decode.InertText(string(tw.held)))
	tw.held = nil
	return err
}

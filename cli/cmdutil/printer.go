package cmdutil

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
	OutputRaw   = "raw"   // the value as etcd holds it
	OutputTable = "table" // columns, as kubectl and etcdctl -w table print them
)

// PrintFlags is one command's -o, as kubectl's PrintFlags: the formats the
// command prints, checked in one place, with one wording, before the
// command reads anything; toPrinter builds what prints.
type PrintFlags struct {
	Output  string
	Formats []string
	// Templated are the formats that take a value, "jsonpath=TEMPLATE".
	Templated []string
}

// AddPrintFlags registers -o on cmd: formats are what it accepts, def its
// default ("" for the command's own default, which usage describes).
func AddPrintFlags(cmd *cobra.Command, def, usage string, formats ...string) *PrintFlags {
	f := &PrintFlags{Formats: formats}
	cmd.Flags().StringVarP(&f.Output, "output", "o", def, usage)
	return f
}

// ToPrinter is the printer of cmd for the -o given, or the error that
// names the formats cmd has. No -o, or an empty one, is the default.
func (f *PrintFlags) ToPrinter(cmd *cobra.Command) (Printer, error) {
	name, _, _ := strings.Cut(f.Output, "=")
	if f.Output != "" && !slices.Contains(f.Formats, f.Output) && !slices.Contains(f.Templated, name) {
		want := slices.Clone(f.Formats)
		for _, t := range f.Templated {
			want = append(want, t+"=...")
		}
		list := strings.Join(want, ", ")
		if n := len(want); n > 1 {
			list = strings.Join(want[:n-1], ", ") + " or " + want[n-1]
		}
		return Printer{}, fmt.Errorf("unknown output format %q: want %s", f.Output, list)
	}
	pr := PrinterFor(cmd)
	pr.Output = f.Output
	return pr, nil
}

// Printer is where a command prints and how: its output and error streams,
// each with how it shows text (a Palette: inert on a terminal, exact to a
// pipe), and the -o format ("" for the command's default).
type Printer struct {
	Out, ErrOut io.Writer
	P, EP       Palette // Out's and ErrOut's
	Output      string
}

// PrinterFor is the printer of a command without -o.
func PrinterFor(cmd *cobra.Command) Printer {
	out, errOut := cmd.OutOrStdout(), cmd.ErrOrStderr()
	return Printer{Out: out, ErrOut: errOut, P: PaletteFor(out), EP: PaletteFor(errOut)}
}

// WriteDoc prints v as indented JSON, or as YAML converted from that JSON
// with keys sorted, as kubectl prints both.
func WriteDoc(w io.Writer, output string, v any) error {
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

// MaxCellRunes caps the text of a table's cell: a column is as wide as its
// widest cell, so one 30 KB key padded each of 20k rows to 30 KB (600 MB).
// kubectl does not cap, and its tables are the model: the cap is above
// the longest text Kubernetes bounds in a column, an Event's message
// (events.k8s.io's note, at most 1024 characters: kube-apiserver's
// ValidateEventCreate); at 256 runes the events' tables differed from
// kubectl's. -o name, json, yaml and raw print the whole.
const MaxCellRunes = 1024

// CapCell is s cut to MaxCellRunes runes, the last of them "…", when it is
// longer.
func CapCell(s string) string {
	if len(s) <= MaxCellRunes {
		return s // bytes are at least as many as runes
	}
	n := 0
	for i := range s {
		if n == MaxCellRunes-1 {
			if utf8.RuneCountInString(s[i:]) > 1 {
				return s[:i] + "…"
			}
			return s
		}
		n++
	}
	return s
}

// Palette is how one output stream shows text. On a terminal, text from etcd
// is made inert (decode.Inert: escape sequences in a value shown, never
// obeyed) and, unless NO_COLOR is set (https://no-color.org), coloured with
// ANSI SGR codes. A pipe or a file gets the bytes as they are, uncoloured.
type Palette struct {
	TTY   bool // w is a terminal
	Color bool // TTY and NO_COLOR unset or empty
}

func PaletteFor(w io.Writer) Palette {
	tty := IsTerminal(w)
	return Palette{TTY: tty, Color: tty && os.Getenv("NO_COLOR") == ""}
}

func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// Text is s as this stream shows one line of it: inert on a terminal.
func (p Palette) Text(s string) string {
	if p.TTY {
		return decode.Inert(s)
	}
	return s
}

// Cell is s as this stream shows it in a table's cell: inert on a
// terminal, and capped.
func (p Palette) Cell(s string) string { return CapCell(p.Text(s)) }

func (p Palette) paint(code, s string) string {
	s = p.Text(s)
	if !p.Color || s == "" {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

func (p Palette) Dir(s string) string     { return p.paint("1;34", s) }
func (p Palette) Dim(s string) string     { return p.paint("2", s) }
func (p Palette) Added(s string) string   { return p.paint("32", s) }
func (p Palette) Changed(s string) string { return p.paint("33", s) }
func (p Palette) Removed(s string) string { return p.paint("31", s) }
func (p Palette) Bold(s string) string    { return p.paint("1", s) }

// Change is ADDED, MODIFIED or DELETED: green, yellow or red.
func (p Palette) Change(t etcdview.EventType) string {
	switch t {
	case etcdview.Added:
		return p.Added(string(t))
	case etcdview.Deleted:
		return p.Removed(string(t))
	}
	return p.Changed(string(t))
}

// Writer is w for a stream of text blocks (YAML, JSON, tables without
// colour): on a terminal every write is made inert, keeping its newlines and
// tabs; elsewhere bytes pass through exact, so pipes and files get what etcd
// holds. Flush it when the stream ends.
func (p Palette) Writer(w io.Writer) *TextWriter {
	return &TextWriter{w: w, inert: p.TTY}
}

// TextWriter passes writes through decode.InertText when inert. A UTF-8
// sequence cut between two writes is held back until its end arrives, so
// that it is not shown as two invalid bytes.
type TextWriter struct {
	w     io.Writer
	inert bool
	held  []byte
}

func (tw *TextWriter) Write(p []byte) (int, error) {
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
func (tw *TextWriter) Flush() error {
	if len(tw.held) == 0 {
		return nil
	}
	_, err := io.WriteString(tw.w, decode.InertText(string(tw.held)))
	tw.held = nil
	return err
}

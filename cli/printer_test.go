package cli

import (
	"bytes"
	"fmt"
	"testing"
)

func TestTextWriterOnATerminalShowsControlsAndKeepsRunesWhole(t *testing.T) {
	in := "data:\n  motd: \x1b]0;owned\x07\x1b[2J日本\u202eend\n"
	want := "data:\n  motd: \\x1b]0;owned\\x07\\x1b[2J日本\\u202eend\n"
	var out bytes.Buffer
	w := palette{tty: true}.writer(&out)
	for i := range len(in) { // one byte a write: every rune is cut somewhere
		if _, err := w.Write([]byte{in[i]}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if out.String() != want {
		t.Errorf("terminal got %q, want %q", out.String(), want)
	}
}

func TestTextWriterFlushShowsACutSequenceAsBytes(t *testing.T) {
	var out bytes.Buffer
	w := palette{tty: true}.writer(&out)
	w.Write([]byte("ok \xe6\x97"))
	w.Flush()
	if want := `ok \xe6\x97`; out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
}

func TestPipesGetExactBytes(t *testing.T) {
	in := "\x1b]0;owned\x07\xff\u202e"
	var out bytes.Buffer
	p := palette{}
	w := p.writer(&out)
	w.Write([]byte(in))
	w.Flush()
	if out.String() != in || p.text(in) != in || p.dir(in) != in {
		t.Errorf("a pipe got %q, want the exact bytes %q", out.String(), in)
	}
}

func TestPaintOnATerminalColoursInertText(t *testing.T) {
	p := palette{tty: true, color: true}
	if got, want := p.dir("a\x1b[2Jb"), "\x1b[1;34ma\\x1b[2Jb\x1b[0m"; got != want {
		t.Errorf("dir = %q, want %q", got, want)
	}
}

// TestEveryCommandRefusesAnUnknownFormatBeforeItReads gives each command
// an -o it does not print, and an endpoint that refuses: the error names
// the formats the command has, in one wording, and comes before any
// connection is tried.
func TestEveryCommandRefusesAnUnknownFormatBeforeItReads(t *testing.T) {
	refused := fmt.Sprintf("127.0.0.1:%d", closedPort(t))
	for _, tc := range []struct {
		args   []string
		output string
		want   string
	}{
		{[]string{"get", "po", "web-0"}, "table", "want yaml, json, raw, wide, name, custom-columns=..., custom-columns-file=..., go-template=..., go-template-file=..., jsonpath=..., jsonpath-file=..., jsonpath-as-json=..., template=... or templatefile=..."},
		{[]string{"history", "/registry/pods/default/web-0"}, "wide", "want yaml or json"},
		{[]string{"watch"}, "wide", "want json"},
		{[]string{"status"}, "wide", "want table or json"},
		{[]string{"decode"}, "wide", "want yaml, json or proto"},
	} {
		msg := runFails(t, append(tc.args, "--endpoints", refused, "-o", tc.output)...)
		if want := fmt.Sprintf("Error: unknown output format %q: %s", tc.output, tc.want); msg != want {
			t.Errorf("%s -o %s: %q, want %q", tc.args[0], tc.output, msg, want)
		}
	}
}

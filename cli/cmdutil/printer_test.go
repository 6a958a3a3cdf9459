package cmdutil

import (
	"bytes"
	"strings"
	"testing"
)

func TestTextWriterOnATerminalShowsControlsAndKeepsRunesWhole(t *testing.T) {
	in := "data:\n  motd: \x1b]0;owned\x07\x1b[2J日本\u202eend\n"
	want := "data:\n  motd: \\x1b]0;owned\\x07\\x1b[2J日本\\u202eend\n"
	var out bytes.Buffer
	w := Palette{TTY: true}.Writer(&out)
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
	w := Palette{TTY: true}.Writer(&out)
	w.Write([]byte("ok \xe6\x97"))
	w.Flush()
	if want := `ok \xe6\x97`; out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
}

func TestPipesGetExactBytes(t *testing.T) {
	in := "\x1b]0;owned\x07\xff\u202e"
	var out bytes.Buffer
	p := Palette{}
	w := p.Writer(&out)
	w.Write([]byte(in))
	w.Flush()
	if out.String() != in || p.Text(in) != in || p.Dir(in) != in {
		t.Errorf("a pipe got %q, want the exact bytes %q", out.String(), in)
	}
}

func TestPaintOnATerminalColoursInertText(t *testing.T) {
	p := Palette{TTY: true, Color: true}
	if got, want := p.Dir("a\x1b[2Jb"), "\x1b[1;34ma\\x1b[2Jb\x1b[0m"; got != want {
		t.Errorf("dir = %q, want %q", got, want)
	}
}

func TestCapCell(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{strings.Repeat("x", MaxCellRunes), strings.Repeat("x", MaxCellRunes)},
		{strings.Repeat("x", MaxCellRunes+1), strings.Repeat("x", MaxCellRunes-1) + "…"},
		{strings.Repeat("日", MaxCellRunes), strings.Repeat("日", MaxCellRunes)},
		{strings.Repeat("日", MaxCellRunes+5), strings.Repeat("日", MaxCellRunes-1) + "…"},
		{strings.Repeat("\xff", MaxCellRunes+5), strings.Repeat("\xff", MaxCellRunes-1) + "…"},
	} {
		if got := CapCell(tc.in); got != tc.want {
			t.Errorf("capCell(%d bytes) = %q, want %q", len(tc.in), got, tc.want)
		}
	}
}

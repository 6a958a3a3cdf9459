package main

import (
	"bytes"
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

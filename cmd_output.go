package main

import (
	"io"
	"os"

	"golang.org/x/term"
)

// palette colours CLI output with ANSI SGR codes, only on a terminal and
// only when NO_COLOR is unset or empty (https://no-color.org): a pipe or a
// file gets plain text.
type palette struct{ on bool }

func paletteFor(w io.Writer) palette {
	f, ok := w.(*os.File)
	return palette{on: ok && os.Getenv("NO_COLOR") == "" && term.IsTerminal(int(f.Fd()))}
}

func (p palette) paint(code, s string) string {
	if !p.on || s == "" {
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

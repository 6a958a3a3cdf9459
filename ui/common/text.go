package common

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/dustin/go-humanize/english"
	"github.com/etcdscope/etcdscope/decode"
)

// This file is where strings become terminal text. Keys, names, values,
// summaries and errors that quote them come from etcd, where whoever may
// write a ConfigMap or an annotation put them; kube-apiserver stores any
// string. Each reaches the screen through Text, Render, Cell, NewLine,
// StyledLine or PlainLines (and YAMLLines and DiffLines, built on it), which
// pass it through decode.Inert: an ESC, a C1 control, a bidi override or a
// byte that is not UTF-8 shows as a visible escape and never acts on the
// terminal. Line keeps its text unexported so that a row cannot be made any
// other way.

// maxLineBytes bounds one row of text. The panes do not scroll sideways, so
// what lies past the widest terminal is never seen; keeping it would make a
// 1 MiB annotation a 1 MiB row that every redraw measures again.
const maxLineBytes = 2048

// tabStop is where a tab in a block of text moves to: every 8 cells, as a
// terminal sets its tab stops.
const tabStop = 8

// Text makes s, one row's worth of data, fit for the terminal: active
// characters escaped (tab and newline too: a row has no layout of its own),
// and cut to maxLineBytes.
func Text(s string) string {
	s, cut := cutRow(s)
	s = decode.Inert(s)
	if t, again := cutRow(s); again || cut {
		// Not a slice of the original: a row keeps only what it shows.
		return strings.Clone(t)
	}
	return s
}

// cutRow is s cut to at most maxLineBytes, at the start of a rune when
// there is one within a rune's length of the cut.
func cutRow(s string) (string, bool) {
	if len(s) <= maxLineBytes {
		return s, false
	}
	n := maxLineBytes
	for i := 1; i < utf8.UTFMax && !utf8.RuneStart(s[n]); i++ {
		n--
	}
	return s[:n], true
}

// Render is s drawn as Text in st: a title, a status, an error.
func Render(st lipgloss.Style, s string) string { return st.Render(Text(s)) }

// Cell is s as Text, fitted to exactly width cells, for a table column.
func Cell(s string, width int) string { return Pad(Text(s), width) }

// Line is one precomputed row of text: styled for ordinary display, plain
// for the cursor row, which is drawn in reverse video over the bare text.
// Both hold inert text only; the constructors below make it so.
type Line struct {
	plain, styled string
}

// NewLine is a row with no style.
func NewLine(s string) Line {
	t := Text(s)
	return Line{plain: t, styled: t}
}

// StyledLine is a row drawn in st.
func StyledLine(st lipgloss.Style, s string) Line {
	t := Text(s)
	return Line{plain: t, styled: st.Render(t)}
}

// Append is l followed by more on the same row.
func (l Line) Append(more ...Line) Line {
	for _, m := range more {
		l.plain += m.plain
		l.styled += m.styled
	}
	return l
}

// PlainLines splits a block of text (an object, a diff) into rows that
// carry no style. Tabs are expanded to spaces, so that the cells a row takes
// are the cells it is measured to take.
func PlainLines(text string) []Line {
	parts := strings.Split(strings.TrimRight(decode.InertText(text), "\n"), "\n")
	out := make([]Line, len(parts))
	for i, p := range parts {
		p, cut := cutRow(p)
		p, again := cutRow(expandTabs(p))
		if cut || again {
			p = strings.Clone(p)
		}
		out[i] = Line{plain: p, styled: p}
	}
	return out
}

// expandTabs replaces each tab of an inert row by the spaces up to the next
// tab stop.
func expandTabs(s string) string {
	if strings.IndexByte(s, '\t') < 0 {
		return s
	}
	var b strings.Builder
	col := 0
	for {
		seg, rest, found := strings.Cut(s, "\t")
		b.WriteString(seg)
		col += ansi.StringWidth(seg)
		if !found {
			return b.String()
		}
		pad := tabStop - col%tabStop
		b.WriteString(strings.Repeat(" ", pad))
		col += pad
		s = rest
	}
}

// Count is n and noun, singular for one: "1 key", "3 keys".
func Count[N ~int | ~int64 | ~uint64](n N, noun string) string {
	return fmt.Sprintf("%d %s", n, english.PluralWord(int(n), noun, ""))
}

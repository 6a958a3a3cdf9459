package common_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/etcdscope/etcdscope/ui/common"
	"github.com/etcdscope/etcdscope/ui/uitest"
	"github.com/muesli/termenv"
)

func init() { lipgloss.SetColorProfile(termenv.Ascii) }

func TestDataShowsEscapedNeverActive(t *testing.T) {
	tests := []struct {
		in, row, block string
	}{
		{"\x1b]0;pwned\x07", `\x1b]0;pwned\x07`, `\x1b]0;pwned\x07`},
		{"\x1b]52;c;cHduZWQ=\x07", `\x1b]52;c;cHduZWQ=\x07`, `\x1b]52;c;cHduZWQ=\x07`},
		{"\x1b[2J\x1b[H", `\x1b[2J\x1b[H`, `\x1b[2J\x1b[H`},
		{"a\u009b31mb", `a\u009b31mb`, `a\u009b31mb`},
		{"\u202eevil", `\u202eevil`, `\u202eevil`},
		{"bad \xff\xfe", `bad \xff\xfe`, `bad \xff\xfe`},
		{"del\x7f cr\r", `del\x7f cr\r`, `del\x7f cr\r`},
		// A row has no layout: tab and newline are escaped. A block keeps
		// its lines and expands tabs to the next stop of 8 cells.
		{"a\tb\nc", `a\tb\nc`, "a       b\nc"},
		{"tab\tstop\t|", `tab\tstop\t|`, "tab     stop    |"},
		{"héllo, 世界", "héllo, 世界", "héllo, 世界"},
	}
	st := lipgloss.NewStyle().Bold(true)
	for _, tc := range tests {
		if got := common.Text(tc.in); got != tc.row {
			t.Errorf("Text(%q) = %q, want %q", tc.in, got, tc.row)
		}
		if got := common.Render(st, tc.in); got != tc.row {
			t.Errorf("Render(%q) = %q, want %q", tc.in, got, tc.row)
		}
		for _, l := range []common.Line{common.NewLine(tc.in), common.StyledLine(st, tc.in)} {
			if plain, styled := l.Parts(); plain != tc.row || styled != tc.row {
				t.Errorf("line of %q = %q, %q; want %q", tc.in, plain, styled, tc.row)
			}
		}
		var block []string
		for _, l := range common.PlainLines(tc.in) {
			plain, _ := l.Parts()
			block = append(block, plain)
		}
		if got := strings.Join(block, "\n"); got != tc.block {
			t.Errorf("PlainLines(%q) = %q, want %q", tc.in, got, tc.block)
		}
	}
}

func TestLongValueIsCutToARowsWorth(t *testing.T) {
	tests := []struct{ value, starts string }{
		{strings.Repeat("é", 1<<20) + "\x1b]0;pwned\x07", "ééé"},
		{strings.Repeat("\x80", 1<<20), `\x80\x80`},
		{strings.Repeat("\x1b", 1<<20), `\x1b\x1b`},
	}
	for _, tc := range tests {
		for _, got := range []string{common.Text(tc.value), firstPlain(common.PlainLines(tc.value))} {
			if len(got) > common.MaxLineBytes || len(got) < common.MaxLineBytes-utf8.UTFMax || !utf8.ValidString(got) || !strings.HasPrefix(got, tc.starts) {
				t.Errorf("a row of %d bytes became %d bytes (valid UTF-8 %v), starting %q", len(tc.value), len(got), utf8.ValidString(got), got[:min(len(got), 8)])
			}
		}
	}
}

func firstPlain(lines []common.Line) string {
	plain, _ := lines[0].Parts()
	return plain
}

// FuzzRowsHoldNothingActive feeds any bytes to every constructor of text
// and checks what comes out: nothing a terminal acts on, a row at most
// MaxLineBytes, a cell exactly its width, and Text a no-op on its own output.
func FuzzRowsHoldNothingActive(f *testing.F) {
	f.Add(uitest.Hostile, 20)
	f.Add("a\tb\n\tc\r\n", 3)
	f.Add("\xe2\x80", 1)
	f.Add(strings.Repeat("\x1b", 3000), 7)
	st := lipgloss.NewStyle().Bold(true)
	f.Fuzz(func(t *testing.T, s string, width int) {
		width = max(0, width%200)
		text := common.Text(s)
		if common.Text(text) != text {
			t.Errorf("Text is not a no-op on its own output %q", text)
		}
		rows := []string{text, common.Render(st, s)}
		for _, l := range append(common.PlainLines(s), common.NewLine(s), common.StyledLine(st, s), common.NewLine(s).Append(common.StyledLine(st, s))) {
			plain, styled := l.Parts()
			rows = append(rows, plain, styled)
		}
		for _, r := range rows {
			if bad := uitest.Active(r); len(bad) > 0 || strings.ContainsAny(r, "\n\t") {
				t.Errorf("row %q holds %v", r, bad)
			}
			if len(r) > 2*common.MaxLineBytes {
				t.Errorf("row of %d bytes", len(r))
			}
		}
		if c := common.Cell(s, width); ansi.StringWidth(c) != width || len(uitest.Active(c)) > 0 {
			t.Errorf("Cell(%q, %d) = %q, %d cells wide", s, width, c, ansi.StringWidth(c))
		}
	})
}

package common

import (
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
)

// Fit truncates s, which may hold escape sequences, to width cells.
func Fit(s string, width int) string {
	if width <= 0 {
		return ""
	}
	return ansi.Truncate(s, width, "…")
}

// Pad fits s to exactly width cells.
func Pad(s string, width int) string {
	s = Fit(s, width)
	if w := ansi.StringWidth(s); w < width {
		s += strings.Repeat(" ", width-w)
	}
	return s
}

// RenderWindow draws the rows of lines the cursor shows, width cells wide,
// each behind a two-cell gutter that marks the cursor row with "> ": the
// marker keeps the selection visible under NO_COLOR, where sel (reverse
// video when the pane has the focus) draws nothing. Only the visible rows are
// touched, so the cost does not depend on len(lines).
// A pane without the focus passes mark false: no row is marked.
func RenderWindow(lines []Line, c Cursor, width int, sel lipgloss.Style, mark bool) string {
	return RenderRows(len(lines), c, func(i int) Line { return lines[i] }, width, sel, mark)
}

// RenderRows is RenderWindow for a list of n rows laid out on demand: row is
// called for the visible rows only, so a list of 100k keys or a full tail
// costs a screenful.
func RenderRows(n int, c Cursor, row func(i int) Line, width int, sel lipgloss.Style, mark bool) string {
	from, to := c.Window(n)
	rows := make([]string, 0, c.Height)
	for i := from; i < to; i++ {
		l := row(i)
		if mark && i == c.Pos {
			rows = append(rows, sel.Render(Pad("> "+l.plain, width)))
			continue
		}
		rows = append(rows, Fit("  "+l.styled, width))
	}
	return FillHeight(rows, c.Height)
}

// FillHeight joins rows and pads them with empty rows to height.
func FillHeight(rows []string, height int) string {
	for len(rows) < height {
		rows = append(rows, "")
	}
	if len(rows) > height {
		rows = rows[:max(height, 0)]
	}
	return strings.Join(rows, "\n")
}

// Box places s in exactly width x height cells, so panes line up side by side.
func Box(s string, width, height int) string {
	rows := strings.Split(s, "\n")
	for i, r := range rows {
		rows[i] = Pad(r, width)
	}
	for len(rows) < height {
		rows = append(rows, strings.Repeat(" ", max(width, 0)))
	}
	return strings.Join(rows[:max(height, 0)], "\n")
}

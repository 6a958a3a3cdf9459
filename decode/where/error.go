package where

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/etcdscope/etcdscope/decode"
	"github.com/google/cel-go/cel"
)

// Error is an expression that does not compile, and where: Line and Column
// count from 1, Column in characters as cel-go counts them.
type Error struct {
	Expr         string
	Line, Column int
	Msg          string
}

// snippetWidth is how much of the source line an error quotes: the line
// fits a terminal of 80 columns after the " | " margin.
const snippetWidth = 76

// Error is "line:column: message", then the source line and a caret under
// the column, as cel-go's issues show them; a long line is quoted around
// the column only, and the line is inert on a terminal.
func (e *Error) Error() string {
	head := fmt.Sprintf("%d:%d: %s", e.Line, e.Column, decode.Inert(e.Msg))
	lines := strings.Split(e.Expr, "\n")
	if e.Line < 1 || e.Line > len(lines) {
		return head
	}
	line := []rune(lines[e.Line-1])
	col := min(max(e.Column-1, 0), len(line))
	from := max(0, col-snippetWidth/2)
	to := min(len(line), from+snippetWidth)
	from = max(0, min(from, to-snippetWidth))
	before, after := decode.Inert(string(line[from:col])), decode.Inert(string(line[col:to]))
	if from > 0 {
		before = "…" + before
	}
	if to < len(line) {
		after += "…"
	}
	caret := strings.Repeat(".", utf8.RuneCountInString(before)) + "^"
	return head + "\n | " + before + after + "\n | " + caret
}

// issueError is the first of cel-go's issues (the one the others usually
// follow from), and how many more there were.
func issueError(expr string, iss *cel.Issues) *Error {
	errs := iss.Errors()
	first := errs[0]
	e := &Error{Expr: expr, Line: first.Location.Line(), Column: max(first.Location.Column()+1, 1), Msg: first.Message}
	if len(errs) > 1 {
		e.Msg += fmt.Sprintf(" (and %d more)", len(errs)-1)
	}
	return e
}

// tooLong is the error of an expression over MaxLength: it points at the
// first character past it.
func tooLong(expr string) *Error {
	cut := expr[:MaxLength]
	nl := strings.Count(cut, "\n")
	col := utf8.RuneCountInString(cut[strings.LastIndexByte(cut, '\n')+1:]) + 1
	return &Error{Expr: expr, Line: nl + 1, Column: col,
		Msg: fmt.Sprintf("the expression is %d bytes, more than the %d a filter may have", len(expr), MaxLength)}
}

// exprStart is the line and column of the expression's first character:
// what an error about the whole expression points at (cel-go's own
// position of a call is its parenthesis).
func exprStart(expr string) (line, col int) {
	line, col = 1, 1
	for _, r := range expr {
		switch {
		case r == '\n':
			line, col = line+1, 1
		case unicode.IsSpace(r):
			col++
		default:
			return line, col
		}
	}
	return line, col
}

package yamlout

import (
	"strings"
	"unicode/utf8"
)

// yamlStyle is how a scalar is written.
type yamlStyle int

const (
	yamlPlain yamlStyle = iota
	yamlSingleQuoted
	yamlDoubleQuoted
	yamlLiteral
)

// stringScalar writes a string as go-yaml's encoder asks for it
// (encoder.stringv): a literal block when it holds a line feed, plain when
// it would read back as the same string, double-quoted otherwise; the
// emitter may then fall back to a quoted style.
// shape is analyzeScalar(s).
func (e *yamlEmitter) stringScalar(s string, shape scalarShape, ctx yamlContext) {
	style := yamlDoubleQuoted
	switch {
	case !shape.ascii && strings.IndexByte(s, '\n') >= 0:
		style = yamlLiteral
	case plainReadsAsString(s):
		style = yamlPlain
	}
	e.scalar(s, shape, style, ctx)
}

// numberShape is the shape of every number, true, false and null: plain
// ASCII that starts with a digit, a '-' before a digit, or a letter.
var numberShape = scalarShape{plain: true, singleQuoted: true, block: true, ascii: true}

// scalarShape is what go-yaml's emitter finds in a scalar's text
// (yaml_emitter_analyze_scalar), for the block context this emitter
// writes in: which styles can write it.
type scalarShape struct {
	multiline, plain, singleQuoted, block bool
	// ascii is true when the scalar is known to be printable ASCII (one
	// column a byte) with no break.
	ascii bool
}

func analyzeScalar(s string) scalarShape {
	if s == "" {
		return scalarShape{plain: true, singleQuoted: true}
	}
	if quietText(s) {
		return scalarShape{plain: true, singleQuoted: true, block: true, ascii: true}
	}
	var (
		indicators, breaks, special                bool
		leadingSpace, leadingBreak, trailingSpace  bool
		trailingBreak, breakSpace, spaceBreak      bool
		precededByWhitespace, prevSpace, prevBreak = true, false, false
	)
	if strings.HasPrefix(s, "---") || strings.HasPrefix(s, "...") {
		indicators = true
	}
	for i := 0; i < len(s); {
		w := yamlWidth(s[i])
		followedByWhitespace := i+w >= len(s) || s[i+w] == ' ' || s[i+w] == '\t'
		if c := s[i]; c > ' ' && c < '~' && c != '#' && c != ':' && c != '-' && c != '?' && i > 0 {
			// Printable ASCII that is no indicator here: nothing to note.
			prevSpace, prevBreak, precededByWhitespace = false, false, false
			i++
			continue
		}
		switch c := s[i]; {
		case i == 0 && strings.IndexByte("#,[]{}&*!|>'\"%@`", c) >= 0:
			indicators = true
		case (c == '?' && i == 0 || c == ':' || c == '-' && i == 0) && followedByWhitespace:
			indicators = true
		case c == '#' && i > 0 && precededByWhitespace:
			indicators = true
		}
		if !yamlPrintable(s, i) {
			special = true
		}
		switch {
		case s[i] == ' ':
			leadingSpace = leadingSpace || i == 0
			trailingSpace = trailingSpace || i+w == len(s)
			breakSpace = breakSpace || prevBreak
			prevSpace, prevBreak = true, false
		case yamlBreak(s, i):
			breaks = true
			leadingBreak = leadingBreak || i == 0
			trailingBreak = trailingBreak || i+w == len(s)
			spaceBreak = spaceBreak || prevSpace
			prevSpace, prevBreak = false, true
		default:
			prevSpace, prevBreak = false, false
		}
		precededByWhitespace = s[i] == ' ' || s[i] == '\t' || s[i] == 0 || yamlBreak(s, i)
		i += w
	}
	shape := scalarShape{multiline: breaks, plain: true, singleQuoted: true, block: true}
	if leadingSpace || leadingBreak || trailingSpace || trailingBreak || breakSpace || breaks || indicators {
		shape.plain = false
	}
	if trailingSpace {
		shape.block = false
	}
	if breakSpace {
		shape.singleQuoted = false
	}
	if spaceBreak || special {
		shape.plain, shape.singleQuoted, shape.block = false, false, false
	}
	return shape
}

// quietText says whether s is printable ASCII that go-yaml's analysis finds
// nothing in: it starts with a letter, a digit or '/', ends with no space,
// and holds no ": " or " #" (indicators), nor a ':' at its end, a tab or a
// control. Most names, labels, times, URLs and messages are.
func quietText(s string) bool {
	c, last := s[0], len(s)-1
	if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '/') || s[last] == ' ' || s[last] == ':' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !quietByte[c] {
			if c != ':' && c != '#' || c == ':' && s[i+1] == ' ' || c == '#' && s[i-1] == ' ' {
				return false
			}
		}
	}
	return true
}

// quietByte marks printable ASCII but ':' and '#'.
var quietByte = func() (t [256]bool) {
	for c := ' '; c <= '~'; c++ {
		t[c] = c != ':' && c != '#'
	}
	return t
}()

// printableASCII says whether every byte of s is printable ASCII that the
// style writes as it is: in quoted, marked true.
func printableASCII(s string, quoted *[256]bool) bool {
	for i := 0; i < len(s); i++ {
		if !quoted[s[i]] {
			return false
		}
	}
	return true
}

// singleQuoted and doubleQuoted mark the bytes each style writes as they
// are: printable ASCII but its quote (and, in double quotes, '\\').
var singleQuoted, doubleQuoted = func() (single, double [256]bool) {
	for c := ' '; c <= '~'; c++ {
		single[c], double[c] = c != '\'', c != '"' && c != '\\'
	}
	return single, double
}()

// noFold says whether s, written from the current column, has no space
// past the best width, where the quoted and plain styles fold: none at all,
// or s ends before (a rune's column is at most the emitter's plus its byte
// offset).
func (e *yamlEmitter) noFold(s string) bool {
	return e.column+len(s) <= yamlBestWidth+1 || strings.IndexByte(s, ' ') < 0
}

// writeText appends s, which holds no line break, whole.
func (e *yamlEmitter) writeText(s string) {
	e.out = append(e.out, s...)
	e.column += utf8.RuneCountInString(s)
}

// yamlWidth is the length of the UTF-8 sequence that starts with c.
func yamlWidth(c byte) int {
	switch {
	case c&0x80 == 0:
		return 1
	case c&0xe0 == 0xc0:
		return 2
	case c&0xf0 == 0xe0:
		return 3
	}
	return 4
}

// yamlPrintable is go-yaml's is_printable at s[i]: line feed, printable
// ASCII, and the rest of the Basic Multilingual Plane but the C1 controls,
// surrogates, the byte order mark and U+FFFE/U+FFFF. Runes past it
// (emoji, ...) are not: go-yaml escapes them.
func yamlPrintable(s string, i int) bool {
	c := s[i]
	switch {
	case c == '\n' || c >= 0x20 && c <= 0x7e:
		return true
	case c == 0xc2:
		return s[i+1] >= 0xa0
	case c > 0xc2 && c < 0xed, c == 0xee:
		return true
	case c == 0xed:
		return s[i+1] < 0xa0
	case c == 0xef:
		return !(s[i+1] == 0xbb && s[i+2] == 0xbf) && !(s[i+1] == 0xbf && (s[i+2] == 0xbe || s[i+2] == 0xbf))
	}
	return false
}

// yamlBreak is go-yaml's is_break at s[i]: CR, LF, NEL, LS or PS.
func yamlBreak(s string, i int) bool {
	switch s[i] {
	case '\r', '\n':
		return true
	case 0xc2:
		return s[i+1] == 0x85
	case 0xe2:
		return s[i+1] == 0x80 && (s[i+2] == 0xa8 || s[i+2] == 0xa9)
	}
	return false
}

// scalar writes s in style, or the first style after it that can write s
// (yaml_emitter_select_scalar_style), indented one level deeper than its
// parent while it is written.
func (e *yamlEmitter) scalar(s string, shape scalarShape, style yamlStyle, ctx yamlContext) {
	if ctx.simpleKey && shape.multiline {
		style = yamlDoubleQuoted
	}
	if style == yamlPlain && (!shape.plain || s == "" && ctx.simpleKey) {
		style = yamlSingleQuoted
	}
	if style == yamlSingleQuoted && !shape.singleQuoted {
		style = yamlDoubleQuoted
	}
	if style == yamlLiteral && (!shape.block || ctx.simpleKey) {
		style = yamlDoubleQuoted
	}
	outer := e.indent
	if e.indent < 0 {
		e.indent = yamlBestIndent
	} else {
		e.indent += yamlBestIndent
	}
	breaks := !ctx.simpleKey
	switch style {
	case yamlPlain:
		e.writePlain(s, shape.ascii, breaks)
	case yamlSingleQuoted:
		e.writeSingleQuoted(s, breaks)
	case yamlDoubleQuoted:
		e.writeDoubleQuoted(s, breaks)
	case yamlLiteral:
		e.writeLiteral(s)
	}
	e.indent = outer
}

// writeRune copies the rune at s[i] and says where the next one starts.
func (e *yamlEmitter) writeRune(s string, i int) int {
	w := yamlWidth(s[i])
	e.out = append(e.out, s[i:i+w]...)
	e.column++
	return i + w
}

// writeBreak copies the line break at s[i]: a line feed as the emitter's
// break, the others as they are.
func (e *yamlEmitter) writeBreak(s string, i int) int {
	if s[i] == '\n' {
		e.out = append(e.out, '\n')
		i++
	} else {
		i = e.writeRune(s, i)
	}
	e.column = 0
	return i
}

// writePlain writes s unquoted, folding at a single space once past the
// best width. A plain scalar never holds a break (analyzeScalar).
func (e *yamlEmitter) writePlain(s string, ascii, allowBreaks bool) {
	if !e.whitespace {
		e.out = append(e.out, ' ')
		e.column++
	}
	if !allowBreaks || e.noFold(s) {
		if ascii {
			e.out = append(e.out, s...)
			e.column += len(s)
		} else {
			e.writeText(s)
		}
		e.whitespace, e.indention = false, false
		return
	}
	spaces := false
	for i := 0; i < len(s); {
		if s[i] == ' ' {
			i = e.writeSpace(s, i, allowBreaks && !spaces && e.column > yamlBestWidth && s[i+1] != ' ')
			spaces = true
			continue
		}
		i = e.writeRune(s, i)
		e.indention, spaces = false, false
	}
	e.whitespace, e.indention = false, false
}

// writeSpace writes the space at s[i], or, when the line folds there, a
// line break and the indentation in its place, and says where the next
// rune starts. Each style has its own rule for where a line may fold.
func (e *yamlEmitter) writeSpace(s string, i int, fold bool) int {
	if !fold {
		return e.writeRune(s, i)
	}
	e.writeIndent()
	return i + 1
}

func (e *yamlEmitter) writeSingleQuoted(s string, allowBreaks bool) {
	e.writeIndicator("'", true, false, false)
	if (!allowBreaks || e.noFold(s)) && printableASCII(s, &singleQuoted) {
		e.writeText(s)
		e.writeIndicator("'", false, false, false)
		e.whitespace, e.indention = false, false
		return
	}
	spaces, breaks := false, false
	for i := 0; i < len(s); {
		switch {
		case s[i] == ' ':
			i = e.writeSpace(s, i, allowBreaks && !spaces && e.column > yamlBestWidth && i > 0 && i < len(s)-1 && s[i+1] != ' ')
			spaces = true
		case yamlBreak(s, i):
			if !breaks && s[i] == '\n' {
				e.out = append(e.out, '\n')
				e.column = 0
			}
			i = e.writeBreak(s, i)
			e.indention, breaks = true, true
		default:
			if breaks {
				e.writeIndent()
			}
			if s[i] == '\'' {
				e.out = append(e.out, '\'')
				e.column++
			}
			i = e.writeRune(s, i)
			e.indention, spaces, breaks = false, false, false
		}
	}
	e.writeIndicator("'", false, false, false)
	e.whitespace, e.indention = false, false
}

// yamlEscapes are the short escapes of go-yaml's double-quoted style.
var yamlEscapes = map[rune]byte{
	0x00: '0', 0x07: 'a', 0x08: 'b', 0x09: 't', 0x0a: 'n', 0x0b: 'v', 0x0c: 'f', 0x0d: 'r',
	0x1b: 'e', '"': '"', '\\': '\\', 0x85: 'N', 0xa0: '_', 0x2028: 'L', 0x2029: 'P',
}

func (e *yamlEmitter) writeDoubleQuoted(s string, allowBreaks bool) {
	e.writeIndicator(`"`, true, false, false)
	// go-yaml's is_bom looks at the start of the value, not at the rune
	// being written: after a leading BOM it escapes every rune.
	if (!allowBreaks || e.noFold(s)) && printableASCII(s, &doubleQuoted) {
		e.writeText(s)
		e.writeIndicator(`"`, false, false, false)
		e.whitespace, e.indention = false, false
		return
	}
	bom := strings.HasPrefix(s, "\ufeff")
	spaces := false
	for i := 0; i < len(s); {
		if bom || !yamlPrintable(s, i) || yamlBreak(s, i) || s[i] == '"' || s[i] == '\\' {
			r, w := utf8.DecodeRuneInString(s[i:])
			i += w
			e.out = append(e.out, '\\')
			e.column++
			if c, ok := yamlEscapes[r]; ok {
				e.out = append(e.out, c)
				e.column++
			} else {
				e.writeHexEscape(r)
			}
			spaces = false
			continue
		}
		if s[i] == ' ' {
			fold := allowBreaks && !spaces && e.column > yamlBestWidth && i > 0 && i < len(s)-1
			if i = e.writeSpace(s, i, fold); fold && s[i] == ' ' {
				// A space that starts the next line would be folded
				// away when read: escaped, it stays.
				e.out = append(e.out, '\\')
				e.column++
			}
			spaces = true
			continue
		}
		i = e.writeRune(s, i)
		spaces = false
	}
	e.writeIndicator(`"`, false, false, false)
	e.whitespace, e.indention = false, false
}

// writeHexEscape writes r as xXX, uXXXX or UXXXXXXXX, in upper case.
func (e *yamlEmitter) writeHexEscape(r rune) {
	letter, digits := byte('U'), 8
	switch {
	case r <= 0xff:
		letter, digits = 'x', 2
	case r <= 0xffff:
		letter, digits = 'u', 4
	}
	e.out = append(e.out, letter)
	for k := (digits - 1) * 4; k >= 0; k -= 4 {
		e.out = append(e.out, "0123456789ABCDEF"[(r>>k)&0xf])
	}
	e.column += 1 + digits
}

// writeLiteral writes s as a literal block ("|"), with an indentation
// hint when it starts with a space or a break and a chomping hint that
// keeps its final line breaks exactly.
func (e *yamlEmitter) writeLiteral(s string) {
	e.writeIndicator("|", true, false, false)
	if s[0] == ' ' || yamlBreak(s, 0) {
		e.writeIndicator(string(rune('0'+yamlBestIndent)), false, false, false)
	}
	if chomp := literalChomp(s); chomp != "" {
		e.writeIndicator(chomp, false, false, false)
	}
	e.out = append(e.out, '\n')
	e.column = 0
	e.whitespace, e.indention = true, true
	for i := 0; i < len(s); {
		if yamlBreak(s, i) {
			i = e.writeBreak(s, i)
			e.indention = true
			continue
		}
		end := nextBreak(s, i+1)
		e.writeIndent()
		e.writeText(s[i:end])
		e.indention, i = false, end
	}
}

// nextBreak is the index of the first break in s from i, or len(s): the
// next line feed, unless an LS or PS (the only other breaks a literal
// holds) comes first.
func nextBreak(s string, i int) int {
	end := len(s)
	if n := strings.IndexByte(s[i:], '\n'); n >= 0 {
		end = i + n
	}
	for j := i; j < end; {
		n := strings.IndexByte(s[j:end], 0xe2)
		if n < 0 {
			break
		}
		if j += n; yamlBreak(s, j) {
			return j
		}
		j++
	}
	return end
}

// literalChomp is "-" when s does not end in a break, "+" when it ends in
// more than one or is one, "" when it ends in exactly one.
func literalChomp(s string) string {
	last := len(s) - 1
	for s[last]&0xc0 == 0x80 {
		last--
	}
	if !yamlBreak(s, last) {
		return "-"
	}
	if last == 0 {
		return "+"
	}
	prev := last - 1
	for s[prev]&0xc0 == 0x80 {
		prev--
	}
	if yamlBreak(s, prev) {
		return "+"
	}
	return ""
}

package decode

import (
	"strconv"
	"unicode/utf8"
)

// Inert returns s fit to reach a terminal as text. Anything a terminal would
// act on instead of print is written as a visible Go escape: the C0 controls
// (ESC, BEL, CR, ... and here also tab and newline), DEL, the C1 controls
// (U+0080–U+009F: a UTF-8 terminal may read U+009B as CSI), the Unicode
// bidi controls that reorder what follows them on screen, the line and
// paragraph separators, and bytes that are not UTF-8 (a terminal in an 8-bit
// mode reads 0x9b as CSI too). Everything else is kept, so printable text of
// any script comes back unchanged, and without an allocation.
//
// Values in etcd are written by whoever may write a ConfigMap, an annotation
// or a key; etcdscope shows them to cluster admins. Every string that came
// from etcd passes through Inert or InertText before it reaches a terminal.
func Inert(s string) string { return inert(s, false) }

// InertText is Inert for a block of lines: tab and newline stay as they are.
func InertText(s string) string { return inert(s, true) }

func inert(s string, layout bool) string {
	i := firstActive(s, layout)
	if i < 0 {
		return s
	}
	b := make([]byte, 0, len(s)+16)
	b = append(b, s[:i]...)
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if isControlByte(c, layout) {
				b = appendEscape(b, rune(c))
			} else {
				b = append(b, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b = append(b, `\x`...)
			b = append(b, hexDigits[c>>4], hexDigits[c&0xf])
		case isActiveRune(r):
			b = appendEscape(b, r)
		default:
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return string(b)
}

// firstActive is the index of the first byte Inert must rewrite, or -1.
func firstActive(s string, layout bool) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if isControlByte(c, layout) {
				return i
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || isActiveRune(r) {
			return i
		}
		i += n
	}
	return -1
}

func isControlByte(c byte, layout bool) bool {
	if layout && (c == '\n' || c == '\t') {
		return false
	}
	return c < 0x20 || c == 0x7f
}

// isActiveRune reports the non-ASCII runes a terminal acts on or that move
// the text around them: C1 controls, bidi embeddings, overrides and isolates,
// the bidi marks, and the line and paragraph separators.
func isActiveRune(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f:
		return true
	case r >= 0x2028 && r <= 0x202e:
		return true
	case r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

const hexDigits = "0123456789abcdef"

// appendEscape writes r as Go writes it in a quoted string: \t, \n and \r by
// name, other ASCII controls as \xNN, the rest as \uNNNN.
func appendEscape(b []byte, r rune) []byte {
	switch r {
	case '\t':
		return append(b, `\t`...)
	case '\n':
		return append(b, `\n`...)
	case '\r':
		return append(b, `\r`...)
	}
	if r < utf8.RuneSelf {
		return append(b, '\\', 'x', hexDigits[r>>4], hexDigits[r&0xf])
	}
	b = append(b, `\u`...)
	h := strconv.FormatInt(int64(r), 16)
	for i := len(h); i < 4; i++ {
		b = append(b, '0')
	}
	return append(b, h...)
}

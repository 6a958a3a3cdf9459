package encjson

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"slices"
	"strings"
)

// errKeyNotUTF8 stops Indent at an object key that held invalid
// UTF-8: encoding/json wrote its bad bytes as \ufffd, and the order of the
// key among the others depended on the bytes that are gone.
var errKeyNotUTF8 = errors.New("an object key is not UTF-8")

// Indenter reorders and indents encoding/json's output.
type Indenter struct {
	Spans
	members []member // a stack: the members of the objects being written
	prefix  string
	// MetaOnly keeps apiVersion, kind and metadata of the outer object.
	MetaOnly bool
}

// member is one name/value pair of an object in src: the name with its
// quotes at key:keyEnd, the value at value:end; escaped when the name holds
// a backslash.
type member struct {
	// head is the name's first 8 bytes, big-endian, zero-padded: most
	// names differ in them, and integers compare fast.
	head                    uint64
	key, keyEnd, value, end int32
	escaped                 bool
}

// Indent appends src, one JSON value as encoding/json writes it
// (compact, valid, HTML characters escaped), to dst as json.MarshalIndent(v,
// prefix, "    ") writes v, that value decoded into maps: the members of
// every object in the byte order of their names (encoding/json's order for
// map keys), arrays in their order, scalars byte for byte.
func (x *Indenter) Indent(dst, src []byte, prefix string) ([]byte, error) {
	x.prefix = prefix
	x.Index(src)
	dst, _, err := x.value(dst, 0, 0)
	x.Src = nil
	return dst, err
}

// value writes the value at src[i], depth levels deep, and says where it ends.
func (x *Indenter) value(dst []byte, i, depth int) ([]byte, int, error) {
	switch x.Src[i] {
	case '{':
		return x.object(dst, i, depth)
	case '[':
		return x.array(dst, i, depth)
	}
	end := x.ValueEnd(i)
	return append(dst, x.Src[i:end]...), end, nil
}

func (x *Indenter) object(dst []byte, i, depth int) ([]byte, int, error) {
	end := int(x.Ends[i])
	if x.Src[i+1] == '}' {
		return append(dst, "{}"...), end, nil
	}
	base := len(x.members)
	for j := i + 1; ; {
		m := member{key: int32(j), keyEnd: x.Ends[j]}
		m.value = m.keyEnd + 1
		m.end = int32(x.ValueEnd(int(m.value)))
		name := x.Src[m.key+1 : m.keyEnd-1]
		m.head = nameHead(x.Src, int(m.key)+1, len(name))
		if m.escaped = bytes.IndexByte(name, '\\') >= 0; m.escaped && replacedInvalidUTF8(name) {
			x.members = x.members[:base]
			return dst, end, errKeyNotUTF8
		}
		if !(depth == 0 && x.MetaOnly) || string(name) == "apiVersion" || string(name) == "kind" || string(name) == "metadata" {
			x.members = append(x.members, m)
		}
		if x.Src[m.end] == '}' {
			break
		}
		j = int(m.end) + 1
	}
	x.sortMembers(x.members[base:])
	top := len(x.members)
	dst = append(dst, '{')
	for k := base; k < top; k++ {
		m := x.members[k] // a copy: writing the value pushes members
		if k > base {
			dst = append(dst, ',')
		}
		dst = x.newline(dst, depth+1)
		dst = append(dst, x.Src[m.key:m.keyEnd]...)
		dst = append(dst, ':', ' ')
		var err error
		if dst, _, err = x.value(dst, int(m.value), depth+1); err != nil {
			x.members = x.members[:base]
			return dst, end, err
		}
	}
	x.members = x.members[:base]
	if top == base {
		return append(dst, '}'), end, nil // every member left out (MetaOnly)
	}
	return append(x.newline(dst, depth), '}'), end, nil
}

func (x *Indenter) array(dst []byte, i, depth int) ([]byte, int, error) {
	end := int(x.Ends[i])
	if x.Src[i+1] == ']' {
		return append(dst, "[]"...), end, nil
	}
	dst = append(dst, '[')
	for j := i + 1; ; j++ {
		if j > i+1 {
			dst = append(dst, ',')
		}
		dst = x.newline(dst, depth+1)
		var err error
		if dst, j, err = x.value(dst, j, depth+1); err != nil {
			return dst, end, err
		}
		if x.Src[j] == ']' {
			break
		}
	}
	return append(x.newline(dst, depth), ']'), end, nil
}

func (x *Indenter) newline(dst []byte, depth int) []byte {
	dst = append(dst, '\n')
	dst = append(dst, x.prefix...)
	for range depth {
		dst = append(dst, "    "...)
	}
	return dst
}

// sortMembers sorts an object's members by name. Objects have a few to a few
// dozen members: an insertion sort, on the heads first, beats a general sort.
func (x *Indenter) sortMembers(ms []member) {
	if len(ms) > 32 {
		slices.SortFunc(ms, x.compareNames)
		return
	}
	for i := 1; i < len(ms); i++ {
		m := ms[i]
		j := i
		for ; j > 0 && x.less(m, ms[j-1]); j-- {
			ms[j] = ms[j-1]
		}
		ms[j] = m
	}
}

// nameHead is the head of the n-byte name at src[i:].
func nameHead(src []byte, i, n int) uint64 {
	if len(src)-i >= 8 {
		h := binary.BigEndian.Uint64(src[i:])
		if n < 8 {
			h &^= ^uint64(0) >> (8 * n) // the quote and what follows
		}
		return h
	}
	var h uint64
	for k := range min(n, 8) {
		h |= uint64(src[i+k]) << (56 - 8*k)
	}
	return h
}

func (x *Indenter) less(a, b member) bool {
	if a.head != b.head && !a.escaped && !b.escaped {
		return a.head < b.head
	}
	return x.compareNames(a, b) < 0
}

// compareNames orders member names as encoding/json orders map keys: by
// their bytes, compared unescaped.
func (x *Indenter) compareNames(a, b member) int {
	if !a.escaped && !b.escaped {
		return bytes.Compare(x.Src[a.key+1:a.keyEnd-1], x.Src[b.key+1:b.keyEnd-1])
	}
	return strings.Compare(unquote(x.Src[a.key:a.keyEnd]), unquote(x.Src[b.key:b.keyEnd]))
}

// replacedInvalidUTF8 says whether a string as encoding/json wrote it holds
// the escape it writes for each invalid byte (a real U+FFFD stays as it is).
func replacedInvalidUTF8(s []byte) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			if bytes.HasPrefix(s[i+1:], []byte("ufffd")) {
				return true
			}
			i++ // the escaped byte: a \\ is not the start of another escape
		}
	}
	return false
}

func unquote(s []byte) string {
	var u string
	json.Unmarshal(s, &u) // encoding/json wrote it: it parses
	return u
}

package yamlout

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// node writes the JSON value at src[i].
func (e *yamlEmitter) node(i int, ctx yamlContext) error {
	switch e.Src[i] {
	case '{':
		if e.Src[i+1] == '}' {
			e.emptyFlow("{}")
			return nil
		}
		return e.mapping(i)
	case '[':
		if e.Src[i+1] == ']' {
			e.emptyFlow("[]")
			return nil
		}
		return e.sequence(i, ctx)
	case '"':
		s, err := e.unquote(i)
		if err != nil {
			return err
		}
		e.stringScalar(s, analyzeScalar(s), ctx)
		return nil
	}
	e.scalar(e.numberText(e.text[i:e.ValueEnd(i)]), numberShape, yamlPlain, ctx)
	return nil
}

func (e *yamlEmitter) mapping(i int) error {
	outer := e.enterMapping()
	base := len(e.keys)
	defer func() { e.indent, e.keys = outer, e.keys[:base] }()
	if err := e.members(i); err != nil {
		return err
	}
	for k := base; k < len(e.keys); k++ {
		e.writeIndent()
		if err := e.member(e.keys[k]); err != nil {
			return err
		}
	}
	return nil
}

// member writes one key of a block mapping and its value, from the start
// of the key's line. key is a copy: writing the value pushes keys.
func (e *yamlEmitter) member(key yamlKey) error {
	e.writeKey(key.name)
	return e.node(int(key.value), yamlContext{mapping: true})
}

// members pushes the members of the object at src[i] on keys in go-yaml's
// order. A name that comes twice (encoding/json writes two invalid UTF-8
// names as the same string) keeps its last value, as go-yaml's decoder does.
func (e *yamlEmitter) members(i int) error {
	base := len(e.keys)
	for j := i + 1; ; {
		name, err := e.unquote(j)
		if err != nil {
			return err
		}
		value := int(e.Ends[j]) + 1
		e.keys = append(e.keys, yamlKey{name: name, value: int32(value), order: int32(len(e.keys) - base)})
		end := e.ValueEnd(value)
		if e.Src[end] == '}' {
			break
		}
		j = end + 1
	}
	sortYAMLKeys(e.keys[base:])
	keep := e.keys[:base]
	for k, key := range e.keys[base:] {
		if next := base + k + 1; next < len(e.keys) && e.keys[next].name == key.name {
			continue
		}
		keep = append(keep, key)
	}
	e.keys = keep
	return nil
}

func (e *yamlEmitter) sequence(i int, ctx yamlContext) error {
	outer := e.enterSequence(ctx)
	defer func() { e.indent = outer }()
	for j := i + 1; ; {
		e.startItem()
		if err := e.node(j, yamlContext{}); err != nil {
			return err
		}
		end := e.ValueEnd(j)
		if e.Src[end] == ']' {
			return nil
		}
		j = end + 1
	}
}

// unquote is the JSON string at src[i], unescaped.
func (e *yamlEmitter) unquote(i int) (string, error) {
	end := int(e.Ends[i])
	s := e.text[i+1 : end-1]
	if strings.IndexByte(s, '\\') < 0 {
		return s, nil
	}
	b := make([]byte, 0, len(s))
	for k := 0; k < len(s); k++ {
		c := s[k]
		if c != '\\' {
			b = append(b, c)
			continue
		}
		k++
		switch s[k] {
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			if k+5 > len(s) {
				return "", errBadJSONString
			}
			r, err := strconv.ParseUint(s[k+1:k+5], 16, 32)
			// go-yaml refuses the surrogates, which encoding/json never
			// writes (it writes every other rune as UTF-8).
			if err != nil || r >= 0xd800 && r <= 0xdfff {
				return "", errBadJSONString
			}
			b = utf8.AppendRune(b, rune(r))
			k += 4
		default: // " \ /
			b = append(b, s[k])
		}
	}
	return string(b), nil
}

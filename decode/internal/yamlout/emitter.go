// Package yamlout is decode's YAML emitter: byte for byte what
// sigs.k8s.io/yaml writes (kubectl -o yaml), many times faster, straight
// from encoding/json's output or from a typed object (see yamlEmitter).
package yamlout

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/etcdscope/etcdscope/decode/internal/encjson"
)

// yamlEmitter writes, straight from one JSON value as encoding/json writes
// it (or from a typed object, typed.go), the YAML that
// sigs.k8s.io/yaml.JSONToYAML writes for it, which is what kubectl -o yaml
// prints. JSONToYAML reads the JSON with go-yaml v2 (numbers resolved as
// YAML 1.1 plain scalars, strings kept as strings) into maps, and encodes
// them with go-yaml v2's emitter: keys in its natural order, block style,
// indent 2, a sequence under a key not indented, lines folded at a space
// past column 80, each string in the first style that reads back as itself.
// The emitter keeps go-yaml's layout state (column, indent, whitespace,
// indention) and applies its rules to it one for one, so that each can be
// checked against it: decode's TestYAMLMatchesSigsYAML does, byte for
// byte, over a fuzzed object of every kind of client-go's scheme,
// FuzzYAMLEmitter and FuzzJSONToYAML over arbitrary values.
//
// sigs.k8s.io/yaml stays the reference; this exists for speed. The round
// trip parses the JSON into maps, sorts each through reflection and
// encodes it through an event queue: 510 µs for a small Pod, where this
// takes 19 µs (decode's BenchmarkSigsYAMLPod, BenchmarkYAMLEmitterPod).
type yamlEmitter struct {
	encjson.Spans
	text string // src as a string: its substrings cost no allocation
	out  []byte

	column     int  // of the next character, in runes
	indent     int  // of the node being written, -1 at the root
	whitespace bool // the last character written was a space or a break
	indention  bool // only indentation is on the line so far

	keys  []yamlKey     // a stack: the members of the JSON objects being written
	typed []typedMember // a stack: the fields and entries of the typed values being written

	// simpleKeys is how each simple key was written: what a simple key
	// looks like depends on the key alone (it never folds nor breaks), and
	// the same few hundred field names come back in every object.
	simpleKeys map[string]writtenKey
}

// writtenKey is a simple key as written, after the space that may precede
// it, and the columns it takes.
type writtenKey struct {
	text    string
	columns int
}

// maxSimpleKeys bounds simpleKeys: map keys from etcd (labels,
// annotations, ConfigMap data) are unbounded.
const maxSimpleKeys = 4096

// yamlKey is one member of a JSON object: its name unescaped, where its
// value starts, and its place among the members.
type yamlKey struct {
	name  string
	value int32
	order int32
}

const (
	yamlBestIndent = 2
	yamlBestWidth  = 80
)

var errBadJSONString = errors.New("a JSON string escape YAML cannot read back")

var yamlEmitters = sync.Pool{New: func() any { return new(yamlEmitter) }}

// JSONToYAML appends to dst what sigs.k8s.io/yaml.JSONToYAML writes for
// the JSON value js.
func JSONToYAML(dst, js []byte) ([]byte, error) {
	js, err := compactJSON(js)
	if err != nil {
		return dst, err
	}
	return Document(dst, js)
}

// JSONToYAMLItem appends the JSON value js as an item of a sequence that is
// the value of a key of the root mapping ("items:" of a List), as
// JSONToYAML writes each item there: "- " at column 0, the item's lines
// below it indented by two, and a line break at the end.
func JSONToYAMLItem(dst, js []byte) ([]byte, error) {
	js, err := compactJSON(js)
	if err != nil {
		return dst, err
	}
	return Item(dst, js)
}

// compactJSON is js as the emitter reads it: compact, valid, UTF-8.
func compactJSON(js []byte) ([]byte, error) {
	var b bytes.Buffer
	if err := json.Compact(&b, js); err != nil {
		return nil, err
	}
	if !utf8.Valid(b.Bytes()) {
		return nil, errors.New("JSON that is not UTF-8")
	}
	return b.Bytes(), nil
}

// Document is JSONToYAML for js as encoding/json writes it.
func Document(dst, js []byte) ([]byte, error) {
	e := yamlEmitters.Get().(*yamlEmitter)
	defer e.release()
	e.start(dst, js, -1)
	err := e.node(0, yamlContext{})
	e.writeIndent() // go-yaml's document end
	return e.out, err
}

// Item is JSONToYAMLItem for js as encoding/json writes it.
func Item(dst, js []byte) ([]byte, error) {
	e := yamlEmitters.Get().(*yamlEmitter)
	defer e.release()
	e.start(dst, js, 0)
	e.writeIndicator("-", true, false, true)
	err := e.node(0, yamlContext{})
	e.indent = 0
	e.writeIndent() // the next item's, or the next key's
	return e.out, err
}

// start readies e to write the JSON js after dst.
func (e *yamlEmitter) start(dst, js []byte, indent int) {
	e.Index(js)
	e.text = string(js)
	// The YAML of an object is about as long as its compact JSON: names
	// lose their quotes, lines gain their indentation.
	e.begin(slices.Grow(dst, len(js)+len(js)/2), indent)
}

// begin readies e to write after dst, at the start of a line, indent deep.
func (e *yamlEmitter) begin(dst []byte, indent int) {
	e.out = dst
	e.column, e.indent = 0, indent
	e.whitespace, e.indention = true, true
}

func (e *yamlEmitter) release() {
	e.Src, e.text, e.out = nil, "", nil
	clear(e.keys[:cap(e.keys)]) // names point into the text
	clear(e.typed[:cap(e.typed)])
	e.keys, e.typed = e.keys[:0], e.typed[:0]
	yamlEmitters.Put(e)
}

// yamlContext is where a node is written, as go-yaml's emitter tracks it.
type yamlContext struct {
	mapping, simpleKey bool
}

// emptyFlow writes an empty mapping or sequence, which go-yaml writes in
// flow style whatever style was asked.
func (e *yamlEmitter) emptyFlow(s string) {
	e.writeIndicator(s[:1], true, true, false)
	e.writeIndicator(s[1:], false, false, false)
}

// writeIndent starts the next node: on a new line unless only indentation
// is on this one, indented to the current indent.
func (e *yamlEmitter) writeIndent() {
	indent := max(e.indent, 0)
	if !e.indention || e.column > indent || e.column == indent && !e.whitespace {
		e.out = append(e.out, '\n')
		e.column = 0
	}
	if n := indent - e.column; n > 0 {
		e.out = append(e.out, yamlSpaces[:n%len(yamlSpaces)]...)
		for range n / len(yamlSpaces) {
			e.out = append(e.out, yamlSpaces...)
		}
		e.column = indent
	}
	e.whitespace, e.indention = true, true
}

const yamlSpaces = "                                                                "

// writeIndicator writes one of YAML's indicators ("-", ":", "?", quotes,
// brackets), after a space when it needs one.
func (e *yamlEmitter) writeIndicator(s string, needSpace, isWhitespace, isIndention bool) {
	if needSpace && !e.whitespace {
		e.out = append(e.out, ' ')
		e.column++
	}
	e.out = append(e.out, s...)
	e.column += utf8.RuneCountInString(s)
	e.whitespace = isWhitespace
	e.indention = e.indention && isIndention
}

// enterMapping sets the indent of a block mapping's keys, and returns the
// indent to restore after it.
func (e *yamlEmitter) enterMapping() (outer int) {
	outer = e.indent
	if e.indent < 0 {
		e.indent = 0
	} else {
		e.indent += yamlBestIndent
	}
	return outer
}

// enterSequence sets the indent of a block sequence's items, and returns
// the indent to restore after it. A sequence that is the value of a simple
// key is not indented.
func (e *yamlEmitter) enterSequence(ctx yamlContext) (outer int) {
	outer = e.indent
	switch {
	case e.indent < 0:
		e.indent = 0
	case !(ctx.mapping && !e.indention):
		e.indent += yamlBestIndent
	}
	return outer
}

// startItem starts an item of a block sequence: "-" on its line.
func (e *yamlEmitter) startItem() {
	e.writeIndent()
	e.writeIndicator("-", true, false, true)
}

// writeKey writes a key of a block mapping, from the start of its line,
// and the ":" its value follows.
func (e *yamlEmitter) writeKey(name string) {
	if !e.whitespace {
		e.out = append(e.out, ' ') // what every style writes first
		e.column++
		e.whitespace = true
	}
	if k, ok := e.simpleKeys[name]; ok {
		e.putKey(k)
		return
	}
	// go-yaml writes a key as a simple key ("name: value") when it is one
	// line of at most 128 bytes, else as "? name" then ": value".
	shape := analyzeScalar(name)
	if simple := len(name) <= 128 && !shape.multiline; !simple {
		e.writeIndicator("?", true, false, true)
		e.stringScalar(name, shape, yamlContext{mapping: true})
		e.writeIndent()
		e.writeIndicator(":", true, false, true)
		return
	}
	start, column := len(e.out), e.column
	e.stringScalar(name, shape, yamlContext{mapping: true, simpleKey: true})
	if len(e.simpleKeys) < maxSimpleKeys {
		if e.simpleKeys == nil {
			e.simpleKeys = map[string]writtenKey{}
		}
		e.simpleKeys[strings.Clone(name)] = writtenKey{string(e.out[start:]), e.column - column}
	}
	e.writeIndicator(":", false, false, false)
}

// putKey writes a simple key as written before, from the start of its
// line, and the ":" its value follows.
func (e *yamlEmitter) putKey(k writtenKey) {
	if !e.whitespace {
		e.out = append(e.out, ' ')
		e.column++
	}
	e.out = append(e.out, k.text...)
	e.column += k.columns
	e.whitespace, e.indention = false, false
	e.writeIndicator(":", false, false, false)
}

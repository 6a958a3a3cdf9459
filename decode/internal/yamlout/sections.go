package yamlout

import (
	"slices"
	"strings"
)

// Top is a top-level field of an object and where its YAML starts.
type Top struct {
	Name  string
	Start int
}

// Sections appends the YAML of the object whose JSON js is with its
// top-level fields in the order decode's Object shows them (SectionOrder),
// folded, when not empty, as a comment line after metadata. Each field
// comes out as JSONToYAML writes it in the whole object, which is what it
// writes for the field alone: a key of the root mapping starts at column 0
// with the emitter in the same state whatever came before, so the order
// changes nothing but the order. tops says where each field starts.
func Sections(dst, js []byte, folded string) ([]byte, []Top, error) {
	e := yamlEmitters.Get().(*yamlEmitter)
	defer e.release()
	e.start(dst, js, -1)
	if js[0] != '{' || js[1] == '}' {
		return dst, nil, nil // no fields: nothing to show
	}
	if err := e.members(0); err != nil {
		return dst, nil, err
	}
	keys := e.keys
	slices.SortFunc(keys, func(a, b yamlKey) int { return SectionOrder(a.name, b.name) })
	tops, err := e.writeSections(len(keys), func(i int) string { return keys[i].name },
		func(i int) error { return e.node(int(keys[i].value), yamlContext{mapping: true}) }, folded)
	return e.out, tops, err
}

// writeSections writes the root mapping of n fields, name(i) and value(i)
// each, in that order, folded after metadata, and says where each starts.
func (e *yamlEmitter) writeSections(n int, name func(int) string, value func(int) error, folded string) ([]Top, error) {
	outer := e.enterMapping()
	tops := make([]Top, 0, n)
	for i := range n {
		e.writeIndent()
		tops = append(tops, Top{sectionName(name(i)), len(e.out)})
		e.writeKey(name(i))
		if err := value(i); err != nil {
			return nil, err
		}
		if name(i) == "metadata" && folded != "" {
			e.writeIndent()
			e.out = append(e.out, "  # "...)
			e.out = append(e.out, folded...)
			e.out = append(e.out, '\n')
		}
	}
	e.indent = outer
	e.writeIndent() // go-yaml's document end
	return tops, nil
}

// SectionOrder orders top-level fields as decode's Object shows them:
// apiVersion, kind, metadata, spec, status, then the others in name order.
func SectionOrder(a, b string) int {
	if ra, rb := sectionRank(a), sectionRank(b); ra != rb {
		return ra - rb
	}
	return strings.Compare(a, b)
}

func sectionRank(name string) int {
	switch name {
	case "apiVersion":
		return 0
	case "kind":
		return 1
	case "metadata":
		return 2
	case "spec":
		return 3
	case "status":
		return 4
	}
	return 5
}

// sectionName is name, which points into the emitter's copy of the JSON,
// as a string of its own: a Section must not keep the whole JSON alive.
func sectionName(name string) string {
	for _, n := range []string{"apiVersion", "kind", "metadata", "spec", "status", "data"} {
		if name == n {
			return n
		}
	}
	return strings.Clone(name)
}

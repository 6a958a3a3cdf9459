package decode

import (
	"strings"
	"testing"
)

// nestedConfigMap is a ConfigMap as JSON with a field nested depth arrays
// deep.
func nestedConfigMap(depth int) []byte {
	return []byte(`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"deep","namespace":"x"},"x":` +
		strings.Repeat("[", depth) + strings.Repeat("]", depth) + `}`)
}

// TestDecodeBoundsNesting: a 54 KB ConfigMap nested 9000 deep made 324 MB
// of -o json (each line indented by its depth); deeper than maxNesting it
// is shown as stored, with a Problem that says why, while an object just
// within it is an object.
func TestDecodeBoundsNesting(t *testing.T) {
	for _, depth := range []int{9000, maxNesting} {
		value := nestedConfigMap(depth)
		o := Decode("/registry/configmaps/x/deep", value)
		text := o.Text()
		if len(text) > 2*len(value)+1000 {
			t.Errorf("depth %d: %d bytes of text for a %d-byte value", depth, len(text), len(value))
		}
		// The object itself is a level: maxNesting arrays in it are one
		// too many.
		if o.Object != nil || !strings.Contains(o.Label(), "nested deeper than 100 levels") {
			t.Errorf("depth %d: %s", depth, o.Label())
		}
	}
	o := Decode("/registry/configmaps/x/deep", nestedConfigMap(maxNesting-1))
	if o.Object == nil || o.Problem != "" {
		t.Fatalf("an object %d deep: %s", maxNesting, o.Label())
	}
	if js, err := o.JSON(false); err != nil || !strings.Contains(string(js), "[]") {
		t.Errorf("an object %d deep as JSON: %v", maxNesting, err)
	}
}

package decode

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor/direct"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// cborPrefix is the head of CBOR tag 55799, "self-described CBOR", which
// apimachinery's CBOR serializer writes first so the encoding is recognisable.
var cborPrefix = []byte{0xd9, 0xd9, 0xf7}

func looksLikeJSON(data []byte) bool {
	t := bytes.TrimLeft(data, " \t\r\n")
	return len(t) > 0 && t[0] == '{'
}

// decodeJSON reads JSON into an unstructured object: custom resources have no
// Go type here, and unstructured keeps fields this build's types would drop.
// apimachinery's json keeps integers int64, as kubectl shows them.
func decodeJSON(o *Object, data []byte) {
	var m map[string]any
	if err := utiljson.Unmarshal(data, &m); err != nil {
		decodeText(o, data)
		o.Problem = "looks like JSON but does not parse: " + err.Error()
		return
	}
	o.Format = FormatJSON
	setUnstructured(o, m)
}

// decodeCBOR reads CBOR with the decoding rules of apimachinery's CBOR
// serializer (the direct package shares its modes).
func decodeCBOR(o *Object, data []byte) {
	var m map[string]any
	if err := direct.Unmarshal(data, &m); err != nil {
		o.Format = FormatCBOR
		o.Problem = "self-described CBOR that does not decode: " + err.Error()
		o.Sections = []Section{dumpSection(data)}
		if diag, derr := direct.Diagnose(data); derr == nil {
			o.Sections = append(o.Sections, Section{Name: "diagnostic", Text: diag + "\n"})
		}
		return
	}
	o.Format = FormatCBOR
	setUnstructured(o, m)
}

func setUnstructured(o *Object, m map[string]any) {
	u := &unstructured.Unstructured{Object: m}
	if m == nil {
		u.Object = map[string]any{}
	}
	apiVersion, _ := m["apiVersion"].(string)
	kind, _ := m["kind"].(string)
	gvk := schema.FromAPIVersionAndKind(apiVersion, kind)
	if o.GVK.Empty() {
		o.GVK = gvk
	}
	if kind == "" {
		o.Problem = "no kind in the value"
	}
	o.Object = u
}

// decodeText shows what no decoder recognised: text when it is UTF-8, a hex
// dump otherwise.
func decodeText(o *Object, data []byte) {
	switch {
	case len(data) == 0:
		o.Format = FormatText
		o.Problem = "empty value"
	case utf8.Valid(data):
		o.Format = FormatText
		o.Sections = []Section{{Name: "value", Text: string(data)}}
	default:
		o.Format = FormatBinary
		o.Sections = []Section{dumpSection(data)}
	}
}

func dumpSection(data []byte) Section {
	return Section{Name: "value", Text: fmt.Sprintf("# %d bytes\n%s", len(data), hex.Dump(data))}
}

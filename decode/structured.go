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
	if nestsDeeper(m, maxNesting) {
		decodeText(o, data)
		o.Format, o.Problem = FormatJSON, tooDeep
		return
	}
	setUnstructured(o, m)
}

// maxNesting bounds how deep the objects and arrays of a value may nest
// for it to be shown as an object. kube-apiserver's decoders stop at 10000
// (apimachinery's util/json maxDepth, encoding/json's scanner, go-yaml's
// max_indents), which bounds their stack but not what a view prints: each
// line is indented by its depth, so 54 KB nested 9000 deep made 324 MB of
// -o json. Kubernetes' kinds nest about 10 deep, a CRD's schema a few
// dozen.
const maxNesting = 100

var tooDeep = fmt.Sprintf("nested deeper than %d levels: shown as stored", maxNesting)

// nestsDeeper says whether v's maps and slices nest more than limit deep.
func nestsDeeper(v any, limit int) bool {
	switch v := v.(type) {
	case map[string]any:
		if limit == 0 {
			return true
		}
		for _, x := range v {
			if nestsDeeper(x, limit-1) {
				return true
			}
		}
	case []any:
		if limit == 0 {
			return true
		}
		for _, x := range v {
			if nestsDeeper(x, limit-1) {
				return true
			}
		}
	}
	return false
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
	if nestsDeeper(m, maxNesting) {
		o.Problem = tooDeep
		o.Sections = []Section{dumpSection(data)}
		return
	}
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

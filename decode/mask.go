package decode

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// LastAppliedAnnotation is where `kubectl apply` (client-side) keeps the
// whole manifest it was given, stringData and data included.
const LastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// masks says whether d hides the values of an object of kind gvk.
func (d Decoder) masks(gvk schema.GroupVersionKind) bool {
	return !d.ShowSecrets && gvk.Group == "" && gvk.Kind == "Secret"
}

// Masked says whether o's values are masked in every rendering of it: a
// Secret decoded without ShowSecrets, or a value under the secrets key
// prefix that did not decode as one.
func (o Object) Masked() bool {
	return o.options.masks(o.GVK) || !o.options.ShowSecrets && o.Key.Group == "" && o.Key.Resource == "secrets"
}

// RawHidden says whether o's bytes as stored must not be shown: a masked
// Secret stored unencrypted holds its values in clear. Ciphertext
// ("k8s:enc:...") reveals nothing and may be shown.
func (o Object) RawHidden() bool { return o.Masked() && o.Encryption == nil }

// RawHiddenNote says in one line why the raw bytes are not shown.
const RawHiddenNote = "the bytes of a Secret hold its values: they are masked until it is shown"

// masker masks the values of a Secret in its JSON-shaped view: each value
// of data and stringData (a value of stringData is write-only, but a view
// made from a manifest holds it) becomes "<N bytes>", N its decoded length;
// an annotation holding a manifest of it (kubectl apply's
// last-applied-configuration, or any annotation that is a JSON object)
// is parsed and masked the same way, or replaced by a note when it does
// not parse. A mask never includes a digest of a value: a short password
// is found again from its hash.
type masker struct {
	// changed names the values (by path) that differ from the other side
	// of a diff: their mask says so, as a length alone cannot.
	changed map[string]bool
	// values, when not nil, collects each value masked, by path.
	values map[string]maskedValue
}

// maskedValue is a value and its mask.
type maskedValue struct{ value, mask string }

// secret masks view in place, copy-on-write: view's maps below the top
// level may be shared and are replaced, never changed. path is view's own
// ("" for the object, an annotation's path inside one, ending in ".").
func (m masker) secret(view map[string]any, path string) {
	for _, field := range []string{"data", "stringData"} {
		v, ok := view[field]
		if !ok || v == nil {
			continue
		}
		p := path + field
		vals, ok := v.(map[string]any)
		if !ok {
			view[field] = m.leaf(p, v, false)
			continue
		}
		out := make(map[string]any, len(vals))
		for k, v := range vals {
			out[k] = m.leaf(joinPath(p, k), v, field == "data")
		}
		view[field] = out
	}
	md, ok := view["metadata"].(map[string]any)
	if !ok {
		return
	}
	anns, ok := md["annotations"].(map[string]any)
	if !ok {
		return
	}
	var out map[string]any
	for k, v := range anns {
		s, ok := v.(string)
		if !ok || !holdsManifest(k, s) {
			continue
		}
		if out == nil {
			out = maps.Clone(anns)
		}
		out[k] = m.annotation(joinPath(path+"metadata.annotations", k), s)
	}
	if out != nil {
		md = maps.Clone(md)
		md["annotations"] = out
		view["metadata"] = md
	}
}

// holdsManifest says whether an annotation may hold the Secret's values:
// kubectl's last-applied-configuration, and anything that is a JSON object
// (another tool's copy of the manifest), parsed or not.
func holdsManifest(key, value string) bool {
	return key == LastAppliedAnnotation || strings.HasPrefix(strings.TrimSpace(value), "{")
}

// annotation is the annotation at path, value, with the manifest in it
// masked and written again as compact JSON, still valid (a restore's
// output stays something kubectl can apply); a value that does not parse
// as a JSON object is a note instead.
func (m masker) annotation(path, value string) string {
	var manifest map[string]any
	if err := json.Unmarshal([]byte(value), &manifest); err != nil || manifest == nil {
		return m.note(path, value, fmt.Sprintf("<%d bytes, not a JSON object: masked as it may hold the Secret's values>", len(value)))
	}
	m.secret(manifest, path+".")
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // "<28 bytes>", not "\u003c28 bytes\u003e"
	if err := enc.Encode(manifest); err != nil {
		return m.note(path, value, fmt.Sprintf("<%d bytes: masked>", len(value)))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// leaf is the mask of the value v at path; a value of data is base64, and
// its length is that of the bytes it encodes.
func (m masker) leaf(path string, v any, base64Data bool) string {
	s, ok := v.(string)
	if !ok {
		js, _ := json.Marshal(v)
		return m.note(path, string(js), "<masked: not a string>")
	}
	n := len(s)
	if base64Data {
		if b, err := base64.StdEncoding.DecodeString(s); err == nil {
			n = len(b)
		}
	}
	return m.note(path, s, "<"+strconv.Itoa(n)+" bytes>")
}

// note records value at path, and returns mask, marked when the value
// changed.
func (m masker) note(path, value, mask string) string {
	if m.values != nil {
		m.values[path] = maskedValue{value, mask}
	}
	if m.changed[path] {
		return strings.TrimSuffix(mask, ">") + ", changed>"
	}
	return mask
}

// changedValues names the masked values of two views of a Secret, unmasked,
// that differ while their masks do not; nil when none.
func changedValues(old, new map[string]any) map[string]bool {
	ov, nv := map[string]maskedValue{}, map[string]maskedValue{}
	masker{values: ov}.secret(maps.Clone(old), "")
	masker{values: nv}.secret(maps.Clone(new), "")
	var changed map[string]bool
	for p, v := range nv {
		if o, ok := ov[p]; ok && o.value != v.value && o.mask == v.mask {
			if changed == nil {
				changed = map[string]bool{}
			}
			changed[p] = true
		}
	}
	return changed
}

// maskUndecoded replaces what o shows of a masked value that holds no
// Secret to mask (a value under secrets/ that did not decode, or decoded
// only in part: its text, hex dump or raw protobuf fields) with a note.
// An encrypted value's section holds no plaintext and stays.
func maskUndecoded(o *Object) {
	if !o.Masked() || o.options.masks(o.GVK) && o.rendered && o.Object != nil {
		return
	}
	// Sections past o.fields are dumps, not the object's fields.
	kept := slices.Clone(o.Sections[:o.fields])
	dropped := false
	for _, s := range o.Sections[o.fields:] {
		switch s.Name {
		case "value", "fields", "diagnostic":
			dropped = true
		default:
			kept = append(kept, s)
		}
	}
	if dropped {
		o.Sections = append(kept, Section{Name: "value", Text: "# " + RawHiddenNote + "\n"})
	}
}

// maskPattern matches what masker writes in place of a value.
var maskPattern = regexp.MustCompile(`<(\d+ bytes|masked)[^<>\n]*>`)

// MaxMaskLen bounds the length of a match of maskPattern that masker
// writes, for a reader that looks for one across writes.
const MaxMaskLen = 128

// ContainsMask says whether b holds a masked value as masker writes it:
// for a printer that says a template printed one.
func ContainsMask(b []byte) bool { return maskPattern.Match(b) }

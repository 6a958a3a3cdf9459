package decode

import (
	"encoding/base64"
	"fmt"
	"maps"
	"slices"
	"strings"

	goyaml "go.yaml.in/yaml/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// render turns o.Object into the map kubectl would print and splits it.
// A JSONOnly decode of a typed object that JSON writes itself (typedJSON)
// needs neither.
func (o *Object) render() {
	if o.options.JSONOnly && o.typedJSON() {
		return
	}
	view, err := o.newView()
	if err != nil {
		o.Problem = "cannot render the object: " + err.Error()
		return
	}
	o.view = view
	o.head, o.Sections = o.options.sections(o.GVK, o.view)
}

// newView is o.Object as a JSON-shaped map, before folding and masking; it
// may share maps with o.Object.
func (o Object) newView() (map[string]any, error) {
	if u, ok := o.Object.(*unstructured.Unstructured); ok {
		return maps.Clone(u.Object), nil
	}
	return runtime.DefaultUnstructuredConverter.ToUnstructured(o.Object) // a new map
}

// sections folds managedFields, masks Secret data (both copy-on-write, view
// may share maps with o.Object) and renders apiVersion and kind as the
// head, then metadata, spec, status, then the other top-level fields in name
// order, each as `kubectl get -o yaml` would.
func (d Decoder) sections(gvk schema.GroupVersionKind, view map[string]any) (head string, out []Section) {
	folded := d.hide(gvk, view)
	if d.JSONOnly {
		return "", nil
	}
	names := []string{}
	for _, n := range []string{"metadata", "spec", "status"} {
		if _, ok := view[n]; ok {
			names = append(names, n)
		}
	}
	others := slices.Sorted(maps.Keys(view))
	for _, n := range others {
		if n != "metadata" && n != "spec" && n != "status" && n != "apiVersion" && n != "kind" {
			names = append(names, n)
		}
	}
	texts := splitYAML(view)
	text := func(n string) string {
		if texts != nil {
			return texts[n]
		}
		return toYAML(map[string]any{n: view[n]})
	}
	for _, n := range []string{"apiVersion", "kind"} {
		if _, ok := view[n]; ok {
			head += text(n)
		}
	}
	out = make([]Section, 0, len(names))
	for _, n := range names {
		t := text(n)
		if n == "metadata" && folded != "" {
			t += "  # " + folded + "\n"
		}
		out = append(out, Section{Name: n, Text: t})
	}
	return head, out
}

// splitYAML renders view in one call of the YAML encoder and cuts the
// output before each top-level key, the rendering of each field alone: a
// call has a fixed cost of several microseconds, paid once instead of once
// a section. The encoder writes a top-level key at the start of a line and
// everything else of a value indented, or as "- " items; the cut is
// certain only when the lines at column 0 are "key: " or "key:" for each
// key of view once, else splitYAML says nil (a key the encoder quotes, or
// that holds ": ").
func splitYAML(view map[string]any) map[string]string {
	b, err := goyaml.Marshal(view)
	if err != nil {
		return nil
	}
	whole := string(b)
	texts := make(map[string]string, len(view))
	key, start := "", -1
	for i := 0; i < len(whole); {
		end := len(whole)
		if nl := strings.IndexByte(whole[i:], '\n'); nl >= 0 {
			end = i + nl + 1
		}
		line := whole[i:end]
		if line[0] != ' ' && !strings.HasPrefix(line, "- ") && line != "-\n" {
			k, rest, _ := strings.Cut(line, ":")
			_, inView := view[k]
			_, seen := texts[k]
			if !inView || seen || k == key || !strings.HasPrefix(rest, " ") && rest != "\n" {
				return nil
			}
			if start >= 0 {
				texts[key] = whole[start:i]
			}
			key, start = k, i
		} else if start < 0 {
			return nil
		}
		i = end
	}
	if start < 0 {
		return nil
	}
	texts[key] = whole[start:]
	if len(texts) != len(view) {
		return nil
	}
	return texts
}

// hide folds managedFields and masks Secret data in view, unless shown, and
// returns the fold's summary line.
func (d Decoder) hide(gvk schema.GroupVersionKind, view map[string]any) (folded string) {
	if !d.ShowManagedFields {
		folded = foldManagedFields(view)
	}
	if !d.ShowSecrets && gvk.Group == "" && gvk.Kind == "Secret" {
		maskSecretData(view)
	}
	return folded
}

func toYAML(v any) string {
	// v is already JSON-shaped (strings, bools, int64, float64, nil, []any,
	// map[string]any), so it goes straight to the YAML encoder that
	// sigs.k8s.io/yaml.Marshal ends in, skipping its JSON encode and the
	// re-parse of that JSON: the same output (TestYAMLMatchesSigsYAML checks
	// every kind) at a fraction of the cost, where rendering is most of a
	// decode's time.
	b, err := goyaml.Marshal(v)
	if err != nil {
		return fmt.Sprintf("# cannot render as YAML: %v\n", err)
	}
	return string(b)
}

// foldManagedFields drops metadata.managedFields, as kubectl does unless
// --show-managed-fields, and says who managed what in one line instead.
func foldManagedFields(view map[string]any) string {
	md, ok := view["metadata"].(map[string]any)
	if !ok {
		return ""
	}
	entries, ok := md["managedFields"].([]any)
	if !ok {
		return ""
	}
	md = maps.Clone(md)
	delete(md, "managedFields")
	view["metadata"] = md
	var managers []string
	for _, e := range entries {
		if f, ok := e.(map[string]any); ok {
			managers = append(managers, fmt.Sprintf("%v %v", f["manager"], f["operation"]))
		}
	}
	return fmt.Sprintf("managedFields: %d entries folded (%s)", len(entries), strings.Join(managers, ", "))
}

// maskSecretData replaces each value of a Secret's data with its length.
// stringData is write-only (merged into data on write) and never stored.
func maskSecretData(view map[string]any) {
	data, ok := view["data"].(map[string]any)
	if !ok {
		return
	}
	masked := make(map[string]any, len(data))
	for k, v := range data {
		s, _ := v.(string)
		n := len(s)
		if b, err := base64.StdEncoding.DecodeString(s); err == nil {
			n = len(b)
		}
		masked[k] = fmt.Sprintf("<%d bytes>", n)
	}
	view["data"] = masked
}

// YAML is the whole object as `kubectl get -o yaml` shows it, sections in
// Object order after apiVersion and kind; "" when the value is no object.
func (o Object) YAML() string {
	if o.view == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString(o.head)
	for _, s := range o.Sections {
		if _, ok := o.view[s.Name]; ok {
			b.WriteString(s.Text)
		}
	}
	return b.String()
}

// MetaYAML is apiVersion, kind and metadata alone.
func (o Object) MetaYAML() string {
	if o.view == nil {
		return ""
	}
	for _, s := range o.Sections {
		if s.Name == "metadata" {
			return o.head + s.Text
		}
	}
	return o.head
}

// Text is everything there is to show: the YAML of the object, then any
// section that is not part of it (a raw field dump, a hex dump), each under a
// "# name" comment line.
func (o Object) Text() string {
	var b strings.Builder
	b.WriteString(o.YAML())
	for _, s := range o.Sections {
		if _, inView := o.view[s.Name]; inView {
			continue
		}
		if len(o.Sections) > 1 || o.view != nil {
			fmt.Fprintf(&b, "# %s\n", s.Name)
		}
		b.WriteString(s.Text)
	}
	return b.String()
}

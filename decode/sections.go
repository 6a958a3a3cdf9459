package decode

import (
	"encoding/base64"
	"encoding/json"
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
func (o *Object) render() {
	var m map[string]any
	if u, ok := o.Object.(*unstructured.Unstructured); ok {
		m = u.Object
	} else {
		var err error
		if m, err = runtime.DefaultUnstructuredConverter.ToUnstructured(o.Object); err != nil {
			o.Problem = "cannot render the object: " + err.Error()
			return
		}
	}
	o.view = maps.Clone(m)
	o.Sections = o.options.sections(o.GVK, o.view)
}

// sections folds managedFields, masks Secret data (both copy-on-write, view
// may share maps with o.Object) and renders metadata, spec, status, then the
// other top-level fields in name order, each as `kubectl get -o yaml` would.
func (d Decoder) sections(gvk schema.GroupVersionKind, view map[string]any) []Section {
	var folded string
	if !d.ShowManagedFields {
		folded = foldManagedFields(view)
	}
	if !d.ShowSecrets && gvk.Group == "" && gvk.Kind == "Secret" {
		maskSecretData(view)
	}
	if d.JSONOnly {
		return nil
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
	out := make([]Section, 0, len(names))
	for _, n := range names {
		text := toYAML(map[string]any{n: view[n]})
		if n == "metadata" && folded != "" {
			text += "  # " + folded + "\n"
		}
		out = append(out, Section{Name: n, Text: text})
	}
	return out
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
	b.WriteString(o.header())
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
			return o.header() + s.Text
		}
	}
	return o.header()
}

func (o Object) header() string {
	h := map[string]any{}
	for _, k := range []string{"apiVersion", "kind"} {
		if v, ok := o.view[k]; ok {
			h[k] = v
		}
	}
	if len(h) == 0 {
		return ""
	}
	return toYAML(h)
}

// JSON is the object as rendered (secrets masked, managedFields folded
// unless shown), indented as `kubectl get -o json` indents; metaOnly keeps
// apiVersion, kind and metadata.
func (o Object) JSON(metaOnly bool) ([]byte, error) {
	if o.view == nil {
		return nil, fmt.Errorf("%s value holds no object", o.Format)
	}
	v := o.view
	if metaOnly {
		v = map[string]any{}
		for _, k := range []string{"apiVersion", "kind", "metadata"} {
			if x, ok := o.view[k]; ok {
				v[k] = x
			}
		}
	}
	b, err := json.MarshalIndent(v, "", "    ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
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

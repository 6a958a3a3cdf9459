package decode

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/etcdscope/etcdscope/decode/internal/yamlout"
	goyaml "go.yaml.in/yaml/v2"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// render splits o.Object into sections of YAML as kubectl would print it.
// A typed object that encoding/json writes as its view (typedJSON) is
// rendered from its Go value (yamlout.TypedSections), or from its JSON where
// that walk stops, without the view: building the view
// (runtime.DefaultUnstructuredConverter) costs more than the rest of the
// rendering. Every other object is rendered from its view. A JSONOnly
// decode of a typed object needs neither.
func (o *Object) render() {
	if o.typedJSON() {
		if o.options.JSONOnly {
			o.rendered = true
			return
		}
		folded := foldedSummaryOf(o.Object, o.options)
		obj := o.foldedObject()
		if o.renderYAML(func(dst []byte) ([]byte, []yamlout.Top, error) { return yamlout.TypedSections(dst, obj, folded) }) == nil {
			return
		}
		s := jsonScratchPool.Get().(*jsonScratch)
		js, ok := s.encode(obj)
		ok = ok && o.renderJSON(js, folded) == nil
		jsonScratchPool.Put(s)
		if ok {
			return
		}
	}
	view, err := o.newView()
	if err != nil {
		o.Problem = "cannot render the object: " + err.Error()
		return
	}
	o.renderView(view)
}

// newView is o.Object as a JSON-shaped map, before folding and masking; it
// may share maps with o.Object.
func (o Object) newView() (map[string]any, error) {
	if u, ok := o.Object.(*unstructured.Unstructured); ok {
		return maps.Clone(u.Object), nil
	}
	return runtime.DefaultUnstructuredConverter.ToUnstructured(o.Object) // a new map
}

// fieldView is the object as shown, as a JSON-shaped map: the view, built
// now for a typed object rendered without one; nil when there is none.
func (o Object) fieldView() map[string]any {
	if o.view != nil || o.Object == nil {
		return o.view
	}
	view, err := o.newView()
	if err != nil {
		return nil
	}
	o.hide(view)
	return view
}

// renderView folds managedFields and masks Secret data in view (both
// copy-on-write: view may share maps with o.Object), keeps it, and renders
// it.
func (o *Object) renderView(view map[string]any) {
	folded := o.hide(view)
	o.view, o.rendered = view, true
	if o.options.JSONOnly {
		return
	}
	js, err := json.Marshal(view)
	if err == nil {
		err = o.renderJSON(js, folded)
	}
	if err != nil {
		// A value JSON has no number for (NaN, ±Inf: a float of some
		// protobuf message), which go-yaml's encoder still writes.
		o.renderFieldsApart(view, folded)
	}
}

// renderJSON renders the object whose JSON js is.
func (o *Object) renderJSON(js []byte, folded string) error {
	return o.renderYAML(func(dst []byte) ([]byte, []yamlout.Top, error) { return yamlout.Sections(dst, js, folded) })
}

// renderYAML renders the object as write writes it (yamlout.Sections):
// apiVersion and kind as the head, then metadata, spec, status, then the
// other top-level fields in name order, each as `kubectl get -o yaml`
// would show it alone, written in one buffer in that order so that YAML is
// the whole of it.
func (o *Object) renderYAML(write func(dst []byte) ([]byte, []yamlout.Top, error)) error {
	buf := yamlBuffers.Get().(*[]byte)
	defer yamlBuffers.Put(buf)
	whole, tops, err := write((*buf)[:0])
	*buf = whole
	if err != nil {
		return err
	}
	o.yaml = string(whole)
	o.Sections = make([]Section, 0, len(tops))
	headEnd := len(o.yaml)
	for i, t := range tops {
		end := len(o.yaml)
		if i+1 < len(tops) {
			end = tops[i+1].Start
		}
		if t.Name == "apiVersion" || t.Name == "kind" {
			continue
		}
		headEnd = min(headEnd, t.Start)
		o.Sections = append(o.Sections, Section{Name: t.Name, Text: o.yaml[t.Start:end]})
	}
	o.head = o.yaml[:headEnd]
	o.fields, o.rendered = len(o.Sections), true
	return nil
}

// yamlBuffers recycles the buffer the YAML of an object is written in
// before it becomes the string its sections are cut from.
var yamlBuffers = sync.Pool{New: func() any { return new([]byte) }}

// renderFieldsApart renders each top-level field of view alone, through
// go-yaml's encoder: the way for a view encoding/json refuses.
func (o *Object) renderFieldsApart(view map[string]any, folded string) {
	texts := map[string]string{}
	names := slices.SortedFunc(maps.Keys(view), yamlout.SectionOrder)
	var whole strings.Builder
	for _, n := range names {
		b, err := goyaml.Marshal(map[string]any{n: view[n]})
		if err != nil {
			b = fmt.Appendf(nil, "# cannot render %s as YAML: %v\n", n, err)
		}
		if n == "metadata" && folded != "" {
			b = fmt.Appendf(b, "  # %s\n", folded)
		}
		texts[n] = string(b)
		whole.Write(b)
	}
	o.yaml = whole.String()
	o.head = texts["apiVersion"] + texts["kind"]
	o.Sections = nil
	for _, n := range names {
		if n != "apiVersion" && n != "kind" {
			o.Sections = append(o.Sections, Section{Name: n, Text: texts[n]})
		}
	}
	o.fields = len(o.Sections)
}

// foldedSummaryOf is foldManagedFields' line for a typed object whose
// managedFields foldedObject left out: the same words its view would give,
// where an entry's empty manager or operation is absent, printed <nil>.
func foldedSummaryOf(obj runtime.Object, d Decoder) string {
	if d.ShowManagedFields {
		return ""
	}
	m, err := meta.Accessor(obj)
	if err != nil || len(m.GetManagedFields()) == 0 {
		return ""
	}
	entries := m.GetManagedFields()
	managers := make([]string, len(entries))
	orNil := func(s string) any {
		if s == "" {
			return nil
		}
		return s
	}
	for i, e := range entries {
		managers[i] = fmt.Sprintf("%v %v", orNil(e.Manager), orNil(string(e.Operation)))
	}
	return foldSummary(len(entries), managers)
}

// toYAML is v, a JSON-shaped value, as sigs.k8s.io/yaml.Marshal prints it.
func toYAML(v any) string {
	js, err := json.Marshal(v)
	if err == nil {
		var y []byte
		if y, err = yamlout.Document(nil, js); err == nil {
			return string(y)
		}
	}
	return fmt.Sprintf("# cannot render as YAML: %v\n", err)
}

// AppendYAMLItem appends the object, as JSON(false) shows it, as an item of
// the List that `kubectl get -o yaml` prints: "- " at column 0 and the
// object below it, indented, as sigs.k8s.io/yaml.JSONToYAML writes each
// item of a List's "items:".
func (o Object) AppendYAMLItem(dst []byte) ([]byte, error) {
	if o.typedJSON() {
		obj := o.foldedObject()
		if out, err := yamlout.TypedItem(dst, obj); err == nil {
			return out, nil
		}
		s := jsonScratchPool.Get().(*jsonScratch)
		defer jsonScratchPool.Put(s)
		if js, ok := s.encode(obj); ok {
			if out, err := yamlout.Item(dst, js); err == nil {
				return out, nil
			}
		}
	}
	view := o.fieldView()
	if view == nil {
		return dst, fmt.Errorf("%s value holds no object", o.Format)
	}
	js, err := json.Marshal(view)
	if err != nil {
		return dst, err
	}
	return yamlout.Item(dst, js)
}

// JSONToYAML appends to dst what sigs.k8s.io/yaml.JSONToYAML writes for
// the JSON value js.
func JSONToYAML(dst, js []byte) ([]byte, error) { return yamlout.JSONToYAML(dst, js) }

// JSONToYAMLItem appends the JSON value js as an item of a sequence that is
// the value of a key of the root mapping ("items:" of a List), as
// JSONToYAML writes each item there: "- " at column 0, the item's lines
// below it indented by two, and a line break at the end.
func JSONToYAMLItem(dst, js []byte) ([]byte, error) { return yamlout.JSONToYAMLItem(dst, js) }

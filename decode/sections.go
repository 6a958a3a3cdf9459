package decode

import (
	"fmt"
	"maps"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// hide folds managedFields and masks Secret values in view, unless shown,
// and returns the fold's summary line.
func (d Decoder) hide(gvk schema.GroupVersionKind, view map[string]any) (folded string) {
	return d.hideMarked(gvk, view, nil)
}

// hideMarked is hide, the masks of the values changed names marked as
// changed (a diff's new side). It is the one masking step: every rendering
// of an object (YAML, JSON, a List's items, templates, --where, diffs)
// is made from a view that went through it.
func (d Decoder) hideMarked(gvk schema.GroupVersionKind, view map[string]any, changed map[string]bool) (folded string) {
	if !d.ShowManagedFields {
		folded = foldManagedFields(view)
	}
	if d.masks(gvk) {
		masker{changed: changed}.secret(view, "")
	}
	return folded
}

// hide is the decoder's hide on o's view, with the changes o was marked
// with (see Diff).
func (o Object) hide(view map[string]any) (folded string) {
	return o.options.hideMarked(o.GVK, view, o.changed)
}

// Hide does to view, an object of kind gvk as a JSON-shaped map, what the
// decoder does before it shows one (folds managedFields, masks Secret
// values, as its options say), for callers that make their own view.
func (d Decoder) Hide(gvk schema.GroupVersionKind, view map[string]any) { d.hide(gvk, view) }

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
	return foldSummary(len(entries), managers)
}

func foldSummary(entries int, managers []string) string {
	noun := "entries"
	if entries == 1 {
		noun = "entry"
	}
	return fmt.Sprintf("managedFields: %d %s folded (%s)", entries, noun, strings.Join(managers, ", "))
}

// YAML is the whole object as `kubectl get -o yaml` shows it, sections in
// Object order after apiVersion and kind; "" when the value is no object.
func (o Object) YAML() string {
	return o.yaml
}

// MetaYAML is apiVersion, kind and metadata alone.
func (o Object) MetaYAML() string {
	if !o.rendered {
		return ""
	}
	for _, s := range o.Sections[:o.fields] {
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
	for _, s := range o.Sections[o.fields:] {
		if len(o.Sections) > 1 || o.rendered {
			fmt.Fprintf(&b, "# %s\n", s.Name)
		}
		b.WriteString(s.Text)
	}
	return b.String()
}

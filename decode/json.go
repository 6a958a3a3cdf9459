package decode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"unicode"

	"github.com/etcdscope/etcdscope/decode/internal/encjson"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// JSON is the object as rendered (secrets masked, managedFields folded
// unless shown), indented as `kubectl get -o json` indents; metaOnly keeps
// apiVersion, kind and metadata.
func (o Object) JSON(metaOnly bool) ([]byte, error) {
	b, err := o.appendJSON(nil, "", metaOnly)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// AppendJSON appends JSON(false) to dst without its final newline, every
// line after the first starting with prefix: an item indented in place in
// the List of `kubectl get -o json`.
func (o Object) AppendJSON(dst []byte, prefix string) ([]byte, error) {
	return o.appendJSON(dst, prefix, false)
}

// appendJSON writes what json.MarshalIndent(view, prefix, "    ") writes:
// kubectl prints objects from maps, so every object's keys come sorted.
// For a kind of client-go's scheme, encoding/json writes the typed object
// itself and its keys are sorted after, several times faster than building
// the view and marshalling its maps (most of `get -o json` on many objects);
// the view is the way for everything else.
func (o Object) appendJSON(dst []byte, prefix string, metaOnly bool) ([]byte, error) {
	typed := o.typedJSON()
	if typed {
		if out, ok := appendTypedJSON(dst, o.foldedObject(), prefix, metaOnly); ok {
			return out, nil
		}
	}
	view := o.view
	if view == nil && typed {
		// A JSONOnly decode left the view out; build it for the rare
		// object the fast way cannot write (a map key not UTF-8, a value
		// encoding/json refuses).
		if v, err := o.newView(); err == nil {
			view = v
			o.hide(view)
		}
	}
	if view == nil {
		return nil, fmt.Errorf("%s value holds no object", o.Format)
	}
	v := view
	if metaOnly {
		v = map[string]any{}
		for _, k := range []string{"apiVersion", "kind", "metadata"} {
			if x, ok := view[k]; ok {
				v[k] = x
			}
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	out := bytes.NewBuffer(dst)
	if err := json.Indent(out, b, prefix, "    "); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// typedJSON says whether encoding/json can write o.Object in place of its
// view: a typed object whose type writes as its view (writesAsView), whose
// view would not differ by a masked Secret, or by managedFields shown
// (their fieldsV1 is raw JSON, which the view reformats).
func (o Object) typedJSON() bool {
	if o.Object == nil {
		return false
	}
	if _, ok := o.Object.(*unstructured.Unstructured); ok {
		return false
	}
	if o.options.masks(o.GVK) {
		return false
	}
	if o.options.ShowManagedFields {
		if m, err := meta.Accessor(o.Object); err == nil && len(m.GetManagedFields()) > 0 {
			return false
		}
	}
	return writesAsView(reflect.TypeOf(o.Object))
}

// foldedObject is o.Object without metadata.managedFields unless they are
// shown: a shallow copy, o.Object is shared.
func (o Object) foldedObject() runtime.Object {
	if o.options.ShowManagedFields {
		return o.Object
	}
	m, err := meta.Accessor(o.Object)
	if err != nil || len(m.GetManagedFields()) == 0 {
		return o.Object
	}
	v := reflect.New(reflect.TypeOf(o.Object).Elem())
	v.Elem().Set(reflect.ValueOf(o.Object).Elem())
	obj := v.Interface().(runtime.Object)
	if m, err := meta.Accessor(obj); err == nil {
		m.SetManagedFields(nil)
	}
	return obj
}

// jsonScratch is what appendTypedJSON reuses from one object to the next.
type jsonScratch struct {
	marshalled bytes.Buffer
	enc        *json.Encoder
	encjson.Indenter
}

var jsonScratchPool = sync.Pool{New: func() any {
	s := &jsonScratch{}
	s.enc = json.NewEncoder(&s.marshalled)
	return s
}}

// appendTypedJSON marshals obj and appends it sorted and indented; ok is
// false, with dst as it was, when either step fails: the view's way then
// fails, or not, as it always has.
func appendTypedJSON(dst []byte, obj runtime.Object, prefix string, metaOnly bool) (_ []byte, ok bool) {
	s := jsonScratchPool.Get().(*jsonScratch)
	defer jsonScratchPool.Put(s)
	js, ok := s.encode(obj)
	if !ok {
		return dst, false
	}
	s.MetaOnly = metaOnly
	out, err := s.Indent(dst, js, prefix)
	if err != nil {
		return dst, false
	}
	return out, true
}

// encode is obj as encoding/json writes it, compact, in s until s is used
// again; ok is false when encoding/json refuses it.
func (s *jsonScratch) encode(obj runtime.Object) (js []byte, ok bool) {
	s.marshalled.Reset()
	if err := s.enc.Encode(obj); err != nil {
		return nil, false
	}
	return bytes.TrimSuffix(s.marshalled.Bytes(), []byte("\n")), true
}

// writesAsView says whether encoding/json writes every value of type t
// (a pointer to an object) with the same names and values that
// runtime.DefaultUnstructuredConverter puts in its view, once the names are
// sorted. It checks the whole type, once: plain fields and the apimachinery
// types of encjson.MarshalsAsView only; no interface, float32, array, other custom marshaller,
// unexported or clashing field name, or tag option but omitempty and
// omitzero. metadata.managedFields is left out: it is folded, or the view
// is used (typedJSON).
func writesAsView(t reflect.Type) bool {
	if ok, found := writesAsViewCache.Load(t); found {
		return ok.(bool)
	}
	ok := t.Kind() == reflect.Pointer && viewCheck{}.ok(t.Elem())
	writesAsViewCache.Store(t, ok)
	return ok
}

var writesAsViewCache sync.Map // reflect.Type → bool

var objectMetaType = reflect.TypeFor[metav1.ObjectMeta]()

// viewCheck holds the types being checked or checked: a type that refers to
// itself is judged by its other fields.
type viewCheck map[reflect.Type]bool

func (c viewCheck) ok(t reflect.Type) bool {
	if encjson.MarshalsAsView(t) {
		return true
	}
	if ok, seen := c[t]; seen {
		return ok
	}
	c[t] = true
	ok := c.judge(t)
	c[t] = ok
	return ok
}

func (c viewCheck) judge(t reflect.Type) bool {
	if t.Kind() == reflect.Pointer {
		return c.ok(t.Elem()) // *T has T's methods: T tells
	}
	if encjson.CustomJSON(t) {
		return false
	}
	switch t.Kind() {
	case reflect.Bool, reflect.String, reflect.Float64,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint8, reflect.Uint16, reflect.Uint32:
		return true
	case reflect.Slice:
		// []byte is base64 both ways.
		return c.ok(t.Elem())
	case reflect.Map:
		return t.Key().Kind() == reflect.String && !encjson.CustomJSON(t.Key()) && c.ok(t.Elem())
	case reflect.Struct:
		return c.fields(t, map[string]bool{})
	}
	// Interfaces, float32 (widened in the view), uint64 (refused in the
	// view past MaxInt64), arrays (refused), and the rest.
	return false
}

// fields checks a struct's fields, and those of the structs it embeds
// without a name, whose fields land in the same object.
func (c viewCheck) fields(t reflect.Type, names map[string]bool) bool {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" || t == objectMetaType && f.Name == "ManagedFields" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		for opt := range strings.SplitSeq(opts, ",") {
			switch {
			case opt == "", opt == "omitempty", opt == "inline" && f.Anonymous:
			case opt == "omitzero":
				// value.OmitZeroFunc, which the converter calls, is
				// encoding/json's test, copied.
			default:
				return false // string, embed, ...: treated differently, or unknown
			}
		}
		if f.Anonymous && name == "" {
			if f.Type.Kind() != reflect.Struct || !f.IsExported() || encjson.CustomJSON(f.Type) || !c.fields(f.Type, names) {
				return false
			}
			continue
		}
		if !f.IsExported() {
			return false // encoding/json skips it, the converter does not
		}
		if name == "" {
			name = f.Name
		}
		if !plainName(name) || names[name] {
			return false
		}
		names[name] = true
		if !c.ok(f.Type) {
			return false
		}
	}
	return true
}

// plainName is a JSON name both sides take as it is (encoding/json ignores
// some punctuation, the converter none).
func plainName(s string) bool {
	for _, r := range s {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune("-_.$", r) {
			return false
		}
	}
	return s != ""
}

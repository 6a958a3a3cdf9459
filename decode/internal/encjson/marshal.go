package encjson

import (
	"encoding"
	"encoding/json"
	"reflect"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// MarshalsAsView says whether t is one of the types with a MarshalJSON
// whose output the converter's ToUnstructured (or its round trip through
// their MarshalJSON) turns into the same JSON value: a string, an integer,
// or null.
func MarshalsAsView(t reflect.Type) bool { return marshalsAsView[t] }

var marshalsAsView = map[reflect.Type]bool{
	reflect.TypeFor[metav1.Time]():        true,
	reflect.TypeFor[metav1.MicroTime]():   true,
	reflect.TypeFor[metav1.Duration]():    true,
	reflect.TypeFor[resource.Quantity]():  true,
	reflect.TypeFor[intstr.IntOrString](): true,
}

// CustomJSON says whether t or *t has a method encoding/json or the
// converter calls instead of looking at the fields.
func CustomJSON(t reflect.Type) bool {
	for _, t := range []reflect.Type{t, reflect.PointerTo(t)} {
		if t.Implements(jsonMarshalerType) || t.Implements(textMarshalerType) {
			return true
		}
		if _, ok := t.MethodByName("ToUnstructured"); ok {
			return true
		}
	}
	return false
}

var (
	jsonMarshalerType = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

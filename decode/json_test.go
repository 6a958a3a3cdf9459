package decode

import (
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// viewJSON is what JSON printed before the typed path: the view, marshalled.
func viewJSON(t *testing.T, o Object, metaOnly bool) string {
	t.Helper()
	view, err := o.newView()
	if err != nil {
		t.Fatal(err)
	}
	o.options.hide(o.GVK, view)
	if metaOnly {
		for k := range view {
			if k != "apiVersion" && k != "kind" && k != "metadata" {
				delete(view, k)
			}
		}
	}
	b, err := json.MarshalIndent(view, "", "    ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}

// TestTypedJSONPrintsTheView checks that JSON prints, byte for byte, what
// marshalling the view prints, for fuzzed objects of every kind with each
// decoding option, whether or not the kind takes the typed path.
func TestTypedJSONPrintsTheView(t *testing.T) {
	decoders := []Decoder{{}, {JSONOnly: true}, {ShowSecrets: true, ShowManagedFields: true}, {ShowManagedFields: true, JSONOnly: true}}
	typed := map[string]bool{}
	compared := 0
	for _, v := range storedFuzzed(t, 3) {
		for _, dec := range decoders {
			o := dec.DecodeAt("/registry/json/ns/name", v.value, 7)
			if o.Object == nil || o.Problem != "" {
				continue
			}
			if o.typedJSON() {
				typed[v.gvk.Kind] = true
			}
			for _, metaOnly := range []bool{false, true} {
				got, err := o.JSON(metaOnly)
				if err != nil {
					t.Fatalf("%s %+v: %v", v.gvk, dec, err)
				}
				if want := viewJSON(t, o, metaOnly); string(got) != want {
					t.Fatalf("%s %+v metaOnly=%v prints differently:\n%s\nthe view:\n%s", v.gvk, dec, metaOnly, got, want)
				}
			}
			compared++
		}
	}
	if compared < 1000 {
		t.Errorf("compared only %d objects", compared)
	}
	for _, kind := range []string{"Pod", "ConfigMap", "Service", "Node", "Event", "Deployment", "ReplicaSet", "Lease", "EndpointSlice"} {
		if !typed[kind] {
			t.Errorf("%s does not take the typed path", kind)
		}
	}
	t.Logf("%d objects print as their view; %d kinds take the typed path", compared, len(typed))
}

func TestWritesAsViewRefusesWhatTheViewChanges(t *testing.T) {
	type inner struct{ A string }
	tests := []struct {
		name string
		v    any
		want bool
	}{
		{"plain fields", &struct {
			A string            `json:"a"`
			B map[string][]byte `json:"b,omitempty"`
			C *int32            `json:"c"`
		}{}, true},
		{"embedded struct", &struct {
			metav1.TypeMeta `json:",inline"`
			B               string `json:"b"`
		}{}, true},
		{"float32 is widened", &struct{ F float32 }{}, false},
		{"uint64 may overflow", &struct{ U uint64 }{}, false},
		{"interface", &struct{ I any }{}, false},
		{"array", &struct{ A [2]int }{}, false},
		{"string option", &struct {
			N int `json:"n,string"`
		}{}, false},
		{"unexported field", &struct{ a string }{}, false},
		{"names clash through embedding", &struct {
			inner
			A string
		}{}, false},
		{"raw JSON", &struct{ R json.RawMessage }{}, false},
		{"runtime.RawExtension", &struct{ R runtime.RawExtension }{}, false},
		{"not a pointer", struct{}{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := writesAsView(reflect.TypeOf(tt.v)); got != tt.want {
				t.Errorf("writesAsView = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestIndentSortedMatchesMarshalIndent covers what the fuzzer does not
// reach: names that need escapes, deep nesting, empty containers.
func TestIndentSortedMatchesMarshalIndent(t *testing.T) {
	for _, src := range []string{
		`{}`, `[]`, `"x"`, `12`, `null`,
		`{"b":1,"a":{"d":[],"c":{}},"a\u003cb":true,"a\"":"\u0026","é":[1,{"z":null,"y":-1.5e-7}]}`,
		`[[[[{"b":{"b":{"b":{"a":1,"b":2}}}}]]]]`,
		`{"z":"\\\"","y":"a\\","x\\":"\n"}`,
	} {
		checkIndentSorted(t, []byte(src))
	}
}

func FuzzIndentSorted(f *testing.F) {
	f.Add([]byte(`{"b":1,"a":{"d":[],"c":{}},"a<b":true,"é":[1,{"z":null,"y":-1.5e-7}]}`))
	f.Add(readKube17(f, "json-pod.json"))
	f.Fuzz(func(t *testing.T, src []byte) {
		if canonical, ok := canonicalJSON(src); ok {
			checkIndentSorted(t, canonical)
		}
	})
}

// checkIndentSorted checks indentSorted against json.MarshalIndent of src
// decoded into maps, with and without a prefix.
func checkIndentSorted(t *testing.T, src []byte) {
	t.Helper()
	var v any
	d := json.NewDecoder(bytes.NewReader(src))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		t.Fatal(err)
	}
	var x sortedIndenter
	for _, prefix := range []string{"", "        "} {
		want, err := json.MarshalIndent(v, prefix, "    ")
		if err != nil {
			t.Fatal(err)
		}
		got, err := x.indentSorted([]byte("head"), src, prefix)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != "head"+string(want) {
			t.Fatalf("%s\nindents as\n%s\nwant\n%s", src, got[4:], want)
		}
	}
}

// canonicalJSON writes src as encoding/json would write it from values in
// the order they come (strings re-escaped, numbers as they are), or says it
// cannot: not one JSON value, or an object with a name twice (maps keep one).
func canonicalJSON(src []byte) ([]byte, bool) {
	d := json.NewDecoder(bytes.NewReader(src))
	d.UseNumber()
	out, ok := canonicalValue(d, nil)
	if _, err := d.Token(); err != io.EOF {
		return nil, false
	}
	return out, ok
}

func canonicalValue(d *json.Decoder, out []byte) ([]byte, bool) {
	tok, err := d.Token()
	if err != nil {
		return nil, false
	}
	switch tok {
	case json.Delim('{'):
		out = append(out, '{')
		seen := map[string]bool{}
		for d.More() {
			if len(seen) > 0 {
				out = append(out, ',')
			}
			tok, err := d.Token()
			name, ok := tok.(string)
			if err != nil || !ok || seen[name] {
				return nil, false
			}
			seen[name] = true
			b, _ := json.Marshal(name)
			if out, ok = canonicalValue(d, append(append(out, b...), ':')); !ok {
				return nil, false
			}
		}
		d.Token()
		return append(out, '}'), true
	case json.Delim('['):
		out = append(out, '[')
		for n := 0; d.More(); n++ {
			if n > 0 {
				out = append(out, ',')
			}
			var ok bool
			if out, ok = canonicalValue(d, out); !ok {
				return nil, false
			}
		}
		d.Token()
		return append(out, ']'), true
	}
	if n, ok := tok.(json.Number); ok {
		return append(out, n...), true
	}
	b, err := json.Marshal(tok)
	return append(out, b...), err == nil
}

func TestJSONFoldsManagedFieldsWithoutTouchingTheObject(t *testing.T) {
	pod := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", ManagedFields: []metav1.ManagedFieldsEntry{{
			Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "v1", FieldsType: "FieldsV1",
			FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"c\"}":{".":{}}}}}`)},
		}}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
	}
	value := stored(t, pod)
	for _, dec := range []Decoder{{}, {JSONOnly: true}, {ShowManagedFields: true}, {ShowManagedFields: true, JSONOnly: true}} {
		o := dec.Decode("/registry/pods/default/p", value)
		got, err := o.JSON(false)
		if err != nil {
			t.Fatal(err)
		}
		if want := viewJSON(t, o, false); string(got) != want {
			t.Errorf("%+v: JSON\n%s\nthe view\n%s", dec, got, want)
		}
		if shown := strings.Contains(string(got), `"managedFields"`); shown != dec.ShowManagedFields {
			t.Errorf("%+v: managedFields in the JSON: %v", dec, shown)
		}
		if len(o.Object.(*corev1.Pod).ManagedFields) != 1 {
			t.Errorf("%+v: folding took managedFields out of the decoded object", dec)
		}
	}
}

package decode

import (
	"encoding/json"
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

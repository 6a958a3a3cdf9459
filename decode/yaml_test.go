package decode

import (
	"bytes"
	"maps"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/apitesting/fuzzer"
	metafuzzer "k8s.io/apimachinery/pkg/apis/meta/fuzzer"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

// TestYAMLMatchesSigsYAML checks that rendering a decoded object's view
// straight with the YAML encoder prints, byte for byte, what
// sigs.k8s.io/yaml.Marshal (JSON, then JSON to YAML, as kubectl -o yaml)
// prints, for a fuzzed object of every kind in client-go's scheme: odd
// strings, numbers, empty maps and lists included.
func TestYAMLMatchesSigsYAML(t *testing.T) {
	compared := 0
	for _, v := range storedFuzzed(t, 1) {
		o := Decoder{ShowSecrets: true, ShowManagedFields: true}.Decode("/registry/yaml/ns/name", v.value)
		if o.view == nil {
			continue
		}
		want, err := yaml.Marshal(o.view)
		if err != nil {
			t.Fatalf("%s: sigs.k8s.io/yaml: %v", v.gvk, err)
		}
		if got := toYAML(o.view); got != string(want) {
			t.Errorf("%s renders differently:\n%s\nsigs.k8s.io/yaml:\n%s", v.gvk, got, want)
		}
		compared++
	}
	if compared < 500 {
		t.Errorf("compared only %d kinds", compared)
	}
	t.Logf("%d kinds render as sigs.k8s.io/yaml does", compared)
}

// storedValue is an object as kube-apiserver stores it.
type storedValue struct {
	gvk   schema.GroupVersionKind
	value []byte
}

// storedFuzzed fills every kind of client-go's scheme, rounds times, with
// apimachinery's fuzzer (odd strings, map keys of every script, numbers,
// empty maps and lists) and stores it as kube-apiserver does. Kinds that
// cannot be stored are left out: TestEveryKindRoundTripsThroughProtobufStorage
// accounts for them.
func storedFuzzed(t *testing.T, rounds int) []storedValue {
	t.Helper()
	fill := fuzzer.FuzzerFor(metafuzzer.Funcs, rand.NewSource(rand.Int63()), scheme.Codecs)
	proto := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)
	var out []storedValue
	for gvk := range scheme.Scheme.AllKnownTypes() {
		if gvk.Version == runtime.APIVersionInternal {
			continue
		}
		for range rounds {
			obj, err := scheme.Scheme.New(gvk)
			if err != nil {
				t.Fatal(err)
			}
			fill.Fill(obj)
			var buf bytes.Buffer
			if err := scheme.Codecs.EncoderForVersion(proto, gvk.GroupVersion()).Encode(obj, &buf); err != nil {
				break
			}
			out = append(out, storedValue{gvk, buf.Bytes()})
		}
	}
	return out
}

// TestSectionsAreEachFieldRenderedAlone checks that cutting the YAML of the
// whole view at its top-level keys (splitYAML) gives, byte for byte, each
// field rendered alone, for a fuzzed object of every kind, and that keys
// the cut cannot be sure of leave it to rendering each field alone.
func TestSectionsAreEachFieldRenderedAlone(t *testing.T) {
	var views []map[string]any
	for _, v := range storedFuzzed(t, 1) {
		if o := (Decoder{ShowSecrets: true, ShowManagedFields: true}).Decode("/registry/yaml/ns/name", v.value); o.view != nil {
			views = append(views, o.view)
		}
	}
	long := strings.Repeat("word ", 40)
	odd := []map[string]any{
		{"message": long, "b": "line1\nline2\n", "c": []any{"x", []any{}, nil, map[string]any{"d": long}}},
		{"a:b": 1, "a": 2},
		{"a:b": 1},
		{"true": 1, "- x": 2, "-x": 3, "": 4, "y": 5, "1": 6, "#c": 7},
		{"apiVersion": "v1", "kind": "a: b\nc", "- x": 1},
		{},
	}
	for i, view := range append(views, odd...) {
		h := map[string]any{}
		for _, k := range []string{"apiVersion", "kind"} {
			if v, ok := view[k]; ok {
				h[k] = v
			}
		}
		if head, _ := (Decoder{ShowSecrets: true, ShowManagedFields: true}).sections(schema.GroupVersionKind{}, view); len(h) > 0 && head != toYAML(h) {
			t.Fatalf("head\n%s\nwant apiVersion and kind rendered together\n%s", head, toYAML(h))
		}
		texts := splitYAML(view)
		if texts == nil {
			if i < len(views) && len(view) > 0 {
				t.Errorf("a view of a typed object does not split: %v", slices.Sorted(maps.Keys(view)))
			}
			continue
		}
		for k, v := range view {
			if want := toYAML(map[string]any{k: v}); texts[k] != want {
				t.Fatalf("%q cut from the whole renders as\n%s\nalone as\n%s", k, texts[k], want)
			}
		}
	}
	if len(views) < 500 {
		t.Errorf("compared only %d kinds", len(views))
	}
}

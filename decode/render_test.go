package decode

import (
	"bytes"
	"encoding/json"
	"maps"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/etcdscope/etcdscope/decode/internal/yamlout"
	"k8s.io/apimachinery/pkg/api/apitesting/fuzzer"
	metafuzzer "k8s.io/apimachinery/pkg/apis/meta/fuzzer"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

// TestYAMLMatchesSigsYAML checks, for a fuzzed object of every kind in
// client-go's scheme (odd strings, numbers, empty maps and lists,
// managedFields, Secret data), with the default options and with
// everything shown, that each section of a decoded object is, byte for
// byte, what sigs.k8s.io/yaml.Marshal (JSON, then JSON to YAML, as kubectl
// -o yaml) prints for that field of its view alone, built by the unstructured
// converter as kubectl would; and that its item in a List is what
// JSONToYAML writes for the List. Most kinds are written from their Go
// value (yamlout.TypedSections), the others from their JSON. The one
// exception: a byte of a string that is not UTF-8 is kept where
// sigs.k8s.io/yaml, through encoding/json, writes U+FFFD, so the YAML is
// compared with each such byte read as U+FFFD (throughJSON).
func TestYAMLMatchesSigsYAML(t *testing.T) {
	compared, walked := 0, 0
	for _, v := range storedFuzzed(t, 3) {
		for _, d := range []Decoder{{}, {ShowSecrets: true, ShowManagedFields: true}} {
			o := d.Decode("/registry/yaml/ns/name", v.value)
			if o.Object == nil {
				continue // no kind of the scheme: rawObject's view
			}
			view, err := o.newView()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := yamlout.TypedItem(nil, o.foldedObject()); o.typedJSON() && err == nil && d.ShowSecrets {
				walked++ // written from the Go value, not from its JSON
			}
			folded := d.hide(o.GVK, view)
			checkSectionsAgainstSigs(t, o, view, folded)
			js, err := json.Marshal(view)
			if err != nil {
				t.Fatal(err)
			}
			item, err := o.AppendYAMLItem(nil)
			if want := sigsListItem(t, js); err != nil || throughJSON(string(item)) != want {
				t.Fatalf("%s: List item (%v)\n%s\nsigs.k8s.io/yaml:\n%s", v.gvk, err, item, want)
			}
		}
		compared++
	}
	if compared < 1500 || walked < 1500 {
		t.Errorf("compared only %d objects, %d of them written from their Go value", compared, walked)
	}
	t.Logf("%d fuzzed objects of every kind render as sigs.k8s.io/yaml renders them, %d written from their Go value", compared, walked)
}

func checkSectionsAgainstSigs(t *testing.T, o Object, view map[string]any, folded string) {
	t.Helper()
	// A section is named as JSON writes the field's name: a name that is
	// not UTF-8 (a CBOR byte-string key) reads with U+FFFD in it.
	view, ok := namedAsJSON(view)
	if !ok {
		t.Fatalf("two names of %v write as one in JSON", slices.Sorted(maps.Keys(view)))
	}
	head := map[string]any{}
	for _, k := range []string{"apiVersion", "kind"} {
		if x, ok := view[k]; ok {
			head[k] = x
		}
	}
	if want := sigsYAML(t, head); len(head) > 0 && throughJSON(o.head) != want {
		t.Fatalf("%s: head\n%s\nsigs.k8s.io/yaml:\n%s", o.GVK, o.head, want)
	}
	var names []string
	for _, s := range o.Sections[:o.fields] {
		want := sigsYAML(t, map[string]any{s.Name: view[s.Name]})
		if s.Name == "metadata" && folded != "" {
			want += "  # " + folded + "\n"
		}
		if throughJSON(s.Text) != want {
			t.Fatalf("%s: %s renders as\n%s\nsigs.k8s.io/yaml:\n%s", o.GVK, s.Name, s.Text, want)
		}
		names = append(names, s.Name)
	}
	names = append(names, slices.Collect(maps.Keys(head))...)
	if !slices.Equal(slices.Sorted(slices.Values(names)), slices.Sorted(maps.Keys(view))) {
		t.Fatalf("%s: sections and head %v, view %v", o.GVK, names, slices.Sorted(maps.Keys(view)))
	}
}

// namedAsJSON is view with each top-level name as JSON writes it, and
// false when two names write as one.
func namedAsJSON(view map[string]any) (map[string]any, bool) {
	named := make(map[string]any, len(view))
	for k, v := range view {
		named[throughJSON(k)] = v
	}
	return named, len(named) == len(view)
}

// throughJSON is s as encoding/json writes it, read back: each byte that
// is not UTF-8 becomes U+FFFD, as in what sigs.k8s.io/yaml prints.
func throughJSON(s string) string {
	b, _ := json.Marshal(s) // a string always marshals, and reads back
	var back string
	json.Unmarshal(b, &back)
	return back
}

func sigsYAML(t *testing.T, v any) string {
	t.Helper()
	b, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// sigsListItem is the object js as JSONToYAML writes it in a List's items.
func sigsListItem(t *testing.T, js []byte) string {
	t.Helper()
	list, err := yaml.JSONToYAML([]byte(`{"items":[` + string(js) + `]}`))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimPrefix(string(list), "items:\n")
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

// TestSectionsAreEachFieldRenderedAlone checks that cutting the YAML of a
// whole view where each top-level key starts gives, byte for byte, each
// field rendered alone, whatever the keys: quoted, complex ("? "), or
// holding ": ".
func TestSectionsAreEachFieldRenderedAlone(t *testing.T) {
	long := strings.Repeat("word ", 40)
	for _, view := range []map[string]any{
		{"message": long, "b": "line1\nline2\n", "c": []any{"x", []any{}, nil, map[string]any{"d": long}}},
		{"a:b": 1, "a": 2},
		{"true": 1, "- x": 2, "-x": 3, "": 4, "y": 5, "1": 6, "#c": 7, strings.Repeat("k", 130): 8, "a\nb": "c\n\n"},
		{"apiVersion": "v1", "kind": "a: b\nc", "- x": 1, "metadata": map[string]any{"name": long}},
		{"last": "kept\n\n", "next": 1},
		{},
	} {
		var o Object
		o.renderView(view)
		fields := map[string]string{}
		for _, s := range o.Sections {
			fields[s.Name] = s.Text
		}
		fields["apiVersion"], fields["kind"] = "", ""
		head := ""
		for k, v := range view {
			want := toYAML(map[string]any{k: v})
			if k == "apiVersion" || k == "kind" {
				head += want
				continue
			}
			if fields[k] != want {
				t.Errorf("%q cut from the whole renders as\n%s\nalone as\n%s", k, fields[k], want)
			}
		}
		if len(o.head) != len(head) {
			t.Errorf("head %q, want apiVersion and kind rendered alone: %q", o.head, head)
		}
	}
}

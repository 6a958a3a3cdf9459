package decode

import (
	"bytes"
	"math/rand"
	"testing"

	"k8s.io/apimachinery/pkg/api/apitesting/fuzzer"
	metafuzzer "k8s.io/apimachinery/pkg/apis/meta/fuzzer"
	"k8s.io/apimachinery/pkg/runtime"
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
	fill := fuzzer.FuzzerFor(metafuzzer.Funcs, rand.NewSource(rand.Int63()), scheme.Codecs)
	proto := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)
	compared := 0
	for gvk := range scheme.Scheme.AllKnownTypes() {
		if gvk.Version == runtime.APIVersionInternal {
			continue
		}
		obj, err := scheme.Scheme.New(gvk)
		if err != nil {
			t.Fatal(err)
		}
		fill.Fill(obj)
		var buf bytes.Buffer
		if err := scheme.Codecs.EncoderForVersion(proto, gvk.GroupVersion()).Encode(obj, &buf); err != nil {
			continue // not storable: TestEveryKindRoundTripsThroughProtobufStorage accounts for these
		}
		o := Decoder{ShowSecrets: true, ShowManagedFields: true}.Decode("/registry/yaml/ns/name", buf.Bytes())
		if o.view == nil {
			continue
		}
		want, err := yaml.Marshal(o.view)
		if err != nil {
			t.Fatalf("%s: sigs.k8s.io/yaml: %v", gvk, err)
		}
		if got := toYAML(o.view); got != string(want) {
			t.Errorf("%s renders differently:\n%s\nsigs.k8s.io/yaml:\n%s", gvk, got, want)
		}
		compared++
	}
	if compared < 500 {
		t.Errorf("compared only %d kinds", compared)
	}
	t.Logf("%d kinds render as sigs.k8s.io/yaml does", compared)
}

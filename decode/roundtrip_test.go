package decode

import (
	"bytes"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/apitesting/fuzzer"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metafuzzer "k8s.io/apimachinery/pkg/apis/meta/fuzzer"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"
)

// notStorable lists, by kind, what client-go's scheme registers but
// kube-apiserver cannot have stored as a protobuf envelope naming the kind.
// The test fails when this list stops matching the scheme.
var notStorable = map[string]string{
	"WatchEvent": "the protobuf serializer writes it with no apiVersion/kind: it only travels inside watch streams",
}

// TestEveryKindRoundTripsThroughProtobufStorage fills every kind registered
// in client-go's scheme, at every version, with apimachinery's fuzzer,
// encodes it the way kube-apiserver's storage codec does (a versioning
// encoder over the protobuf serializer) and decodes the bytes back.
func TestEveryKindRoundTripsThroughProtobufStorage(t *testing.T) {
	const rounds = 3
	fill := fuzzer.FuzzerFor(metafuzzer.Funcs, rand.NewSource(rand.Int63()), scheme.Codecs)
	proto := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)
	var covered []string
	skipped := map[string]string{} // kind → why, as found
	kinds := scheme.Scheme.AllKnownTypes()
	gvks := make([]schema.GroupVersionKind, 0, len(kinds))
	for gvk := range kinds {
		gvks = append(gvks, gvk)
	}
	slices.SortFunc(gvks, func(a, b schema.GroupVersionKind) int { return strings.Compare(a.String(), b.String()) })
	for _, gvk := range gvks {
		if gvk.Version == runtime.APIVersionInternal {
			continue // never stored
		}
		name := gvkString(gvk)
		enc := scheme.Codecs.EncoderForVersion(proto, gvk.GroupVersion())
		for range rounds {
			obj, err := scheme.Scheme.New(gvk)
			if err != nil {
				t.Fatal(err)
			}
			fill.Fill(obj)
			var buf bytes.Buffer
			if err := enc.Encode(obj, &buf); err != nil {
				if protobuf.IsNotMarshalable(err) {
					skipped[gvk.Kind] = "no protobuf marshaller"
					break
				}
				t.Errorf("%s: encode: %v", name, err)
				break
			}
			var envelope runtime.Unknown
			if err := envelope.Unmarshal(buf.Bytes()[len(protobufPrefix):]); err != nil || envelope.Kind == "" {
				skipped[gvk.Kind] = notStorable[gvk.Kind]
				break
			}
			got := Decode("/registry/roundtrip/ns/name", buf.Bytes())
			if got.Format != FormatProtobuf || got.Problem != "" {
				t.Errorf("%s: Decode = %s", name, got.Label())
				break
			}
			obj.GetObjectKind().SetGroupVersionKind(gvk)
			if !apiequality.Semantic.DeepEqual(obj, got.Object) {
				t.Errorf("%s: decoded object differs (-encoded +decoded):\n%s", name, cmp.Diff(obj, got.Object))
				break
			}
			if _, err := meta.Accessor(obj); err == nil && !hasSection(got, "metadata") {
				t.Errorf("%s: no metadata section in %v", name, got.Sections)
			}
		}
		if _, ok := skipped[gvk.Kind]; !ok {
			covered = append(covered, name)
		}
	}
	if diff := cmp.Diff(notStorable, skipped); diff != "" {
		t.Errorf("kinds that cannot be stored changed (-listed +found):\n%s", diff)
	}
	t.Logf("%d group-version-kinds round-tripped through protobuf storage, %d fuzzed objects each; not storable: %v",
		len(covered), rounds, skipped)
}

func hasSection(o Object, name string) bool {
	return slices.ContainsFunc(o.Sections, func(s Section) bool { return s.Name == name })
}

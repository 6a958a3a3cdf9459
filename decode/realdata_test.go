package decode

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
)

func TestRealValuesDecodeToTheObjectsInTheirJSON(t *testing.T) {
	tests := []struct {
		name, key, value, json string
	}{
		{"pod", "/registry/pods/default/pi-dqtsw", "storage-pod.bin", "json-pod.json"},
		{"job", "/registry/jobs/default/pi", "storage-job.bin", "json-job.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Decode(tt.key, readKube17(t, tt.value))
			if got.Format != FormatProtobuf || got.Problem != "" {
				t.Fatalf("Decode = %s, want protobuf with no problem", got.Label())
			}
			wantJSON := readKube17(t, tt.json)
			want, _, err := scheme.Codecs.UniversalDeserializer().Decode(wantJSON, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got.GVK != want.GetObjectKind().GroupVersionKind() {
				t.Errorf("GVK = %v, want %v", got.GVK, want.GetObjectKind().GroupVersionKind())
			}
			if !apiequality.Semantic.DeepEqual(got.Object, want) {
				t.Errorf("typed object differs from the JSON (-json +decoded):\n%s", cmp.Diff(want, got.Object))
			}
			// Field by field: every field of the JSON, and no other, in the
			// decoded object's own JSON.
			var wantFields, gotFields map[string]any
			if err := json.Unmarshal(wantJSON, &wantFields); err != nil {
				t.Fatal(err)
			}
			gotJSON, err := runtime.Encode(scheme.Codecs.LegacyCodec(got.GVK.GroupVersion()), got.Object)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(gotJSON, &gotFields); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(wantFields, gotFields); diff != "" {
				t.Errorf("fields differ (-json +decoded):\n%s", diff)
			}
		})
	}
}

package decode

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor"
	"k8s.io/client-go/kubernetes/scheme"
)

// unknownKind wraps a ConfigMap's protobuf bytes in an envelope naming a
// kind client-go's scheme does not have, as an aggregated API server's
// objects look to this build.
func unknownKind(t *testing.T) []byte {
	t.Helper()
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "w1", Namespace: "default", UID: "u-1"},
		Data:       map[string]string{"color": "blue"},
	}
	raw, err := cm.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	env, err := (&runtime.Unknown{TypeMeta: runtime.TypeMeta{APIVersion: "widgets.example.com/v1", Kind: "Widget"}, Raw: raw}).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return append(bytes.Clone(protobufPrefix), env...)
}

func cborValue(t *testing.T, obj map[string]any) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := cbor.NewSerializer(scheme.Scheme, scheme.Scheme).Encode(&unstructured.Unstructured{Object: obj}, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestEveryFormatIsLabelledAndShown(t *testing.T) {
	cronTab := map[string]any{
		"apiVersion": "stable.example.com/v1", "kind": "CronTab",
		"metadata": map[string]any{"name": "my-cron", "namespace": "default"},
		"spec":     map[string]any{"cronSpec": "* * * * */5", "replicas": int64(2)},
	}
	pod := stored(t, &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}})
	tests := []struct {
		name, key   string
		value       []byte
		format      Format
		gvk         string
		problem     string   // substring, "" for none
		sectionsHas []string // "section: substring"
	}{
		{"custom resource as JSON", "/registry/stable.example.com/crontabs/default/my-cron",
			[]byte(`{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"my-cron","namespace":"default","generation":9007199254740993},"spec":{"cronSpec":"* * * * */5","replicas":2}}` + "\n"),
			FormatJSON, "stable.example.com/v1 CronTab", "",
			[]string{"metadata: generation: 9007199254740993", "spec: replicas: 2"}},
		{"CRD stored as v1beta1 JSON", "/registry/apiextensions.k8s.io/customresourcedefinitions/crontabs.stable.example.com",
			[]byte(`{"kind":"CustomResourceDefinition","apiVersion":"apiextensions.k8s.io/v1beta1","metadata":{"name":"crontabs.stable.example.com"},"spec":{"group":"stable.example.com"}}`),
			FormatJSON, "apiextensions.k8s.io/v1beta1 CustomResourceDefinition", "", []string{"spec: group: stable.example.com"}},
		{"custom resource as CBOR", "/registry/stable.example.com/crontabs/default/my-cron", cborValue(t, cronTab),
			FormatCBOR, "stable.example.com/v1 CronTab", "", []string{"spec: cronSpec: '* * * * */5'"}},
		{"unknown protobuf kind", "/registry/widgets.example.com/widgets/default/w1", unknownKind(t),
			FormatUnknownProtobuf, "widgets.example.com/v1 Widget", "not a kind this build knows",
			[]string{"metadata: name: w1", "metadata: uid: u-1", "fields: 1 message:", `fields: 2 message:  # 13 bytes 1 string: "color" 2 string: "blue"`}},
		{"truncated protobuf keeps its metadata", "/registry/pods/default/p", pod[:len(pod)-5],
			FormatProtobuf, "v1 Pod", "truncated envelope at byte " + fmt.Sprint(len(pod)-5),
			[]string{"metadata: name: p", "fields: # stopped: "}},
		{"magic alone", "/registry/pods/default/p", []byte("k8s\x00"),
			FormatUnknownProtobuf, "", "empty envelope", nil},
		{"JSON that does not parse", "/registry/x/y", []byte(`{"kind": `), FormatText, "", "looks like JSON but does not parse", []string{`value: {"kind": `}},
		{"text", "/registry/x/y", []byte("hello etcd\n"), FormatText, "", "", []string{"value: hello etcd"}},
		{"binary", "/registry/x/y", []byte{0x00, 0xff, 0x10}, FormatBinary, "", "", []string{"value: 00 ff 10"}},
		{"empty", "/registry/x/y", nil, FormatText, "", "empty value", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Decode(tt.key, tt.value)
			if got.Format != tt.format {
				t.Errorf("Format = %s, want %s (%s)", got.Format, tt.format, got.Label())
			}
			if g := gvkStringOrEmpty(got); g != tt.gvk {
				t.Errorf("GVK = %q, want %q", g, tt.gvk)
			}
			if got.Size != len(tt.value) {
				t.Errorf("Size = %d, want %d", got.Size, len(tt.value))
			}
			if tt.problem == "" && got.Problem != "" || !strings.Contains(got.Problem, tt.problem) {
				t.Errorf("Problem = %q, want %q", got.Problem, tt.problem)
			}
			for _, want := range tt.sectionsHas {
				name, sub, _ := strings.Cut(want, ": ")
				text := section(got, name)
				if !strings.Contains(flatten(text), sub) {
					t.Errorf("section %q lacks %q:\n%s", name, sub, text)
				}
			}
		})
	}
}

func gvkStringOrEmpty(o Object) string {
	if o.GVK.Empty() {
		return ""
	}
	return gvkString(o.GVK)
}

// flatten joins a nested YAML path onto one line ("metadata:\n  name: p"
// becomes "metadata: name: p") so a test can name a field with its parent.
func flatten(yaml string) string {
	var parts []string
	for _, l := range strings.Split(yaml, "\n") {
		parts = append(parts, strings.TrimLeft(l, " -"))
	}
	return strings.Join(parts, " ") + " | " + yaml
}

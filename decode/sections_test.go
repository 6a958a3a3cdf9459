package decode

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"
)

// stored encodes obj as kube-apiserver writes it to etcd.
func stored(t testing.TB, obj runtime.Object) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := scheme.Codecs.EncoderForVersion(protobuf.NewSerializer(scheme.Scheme, scheme.Scheme), obj.GetObjectKind().GroupVersionKind().GroupVersion()).Encode(obj, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func sectionNames(o Object) []string {
	var names []string
	for _, s := range o.Sections {
		names = append(names, s.Name)
	}
	return names
}

func section(o Object, name string) string {
	for _, s := range o.Sections {
		if s.Name == name {
			return s.Text
		}
	}
	return ""
}

func TestSectionsComeInMetadataSpecStatusOrder(t *testing.T) {
	tests := []struct {
		name string
		obj  runtime.Object
		want []string
	}{
		{"deployment", deployment(3, 3), []string{"metadata", "spec", "status"}},
		{"configmap: data and the rest after metadata", &corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "default"},
			Data:       map[string]string{"k": "v"}, BinaryData: map[string][]byte{"b": {1}},
		}, []string{"metadata", "binaryData", "data"}},
		{"endpoints: subsets", &corev1.Endpoints{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Endpoints"},
			ObjectMeta: metav1.ObjectMeta{Name: "e", Namespace: "default"},
			Subsets:    []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: "10.0.0.1"}}}},
		}, []string{"metadata", "subsets"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Decode("/registry/x/default/x", stored(t, tt.obj))
			if !slices.Equal(sectionNames(got), tt.want) {
				t.Errorf("sections = %v, want %v", sectionNames(got), tt.want)
			}
			for _, s := range got.Sections {
				if !strings.HasPrefix(s.Text, s.Name+":") {
					t.Errorf("section %s renders as %q, want it to start with %q", s.Name, s.Text, s.Name+":")
				}
			}
		})
	}
}

func TestSecretDataIsMaskedUnlessShown(t *testing.T) {
	value := stored(t, testSecret())
	masked := Decode(secretKey, value)
	if got := section(masked, "data"); got != "data:\n  password: <7 bytes>\n" {
		t.Errorf("masked data section = %q", got)
	}
	if strings.Contains(masked.Text(), "aHVudGVyMg") {
		t.Errorf("masked output shows the secret:\n%s", masked.Text())
	}
	if _, err := masked.Proto(); err == nil {
		t.Error("Proto of a masked Secret succeeded, want a refusal")
	}
	shown := Decoder{ShowSecrets: true}.Decode(secretKey, value)
	if got := section(shown, "data"); got != "data:\n  password: aHVudGVyMg==\n" {
		t.Errorf("shown data section = %q", got)
	}
	// The typed object keeps the real bytes either way.
	if s := masked.Object.(*corev1.Secret); string(s.Data["password"]) != "hunter2" {
		t.Errorf("masking changed the object: %q", s.Data["password"])
	}
}

func TestManagedFieldsAreFoldedUnlessShown(t *testing.T) {
	d := deployment(3, 3)
	d.ManagedFields = []metav1.ManagedFieldsEntry{
		{Manager: "kubectl-client-side-apply", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "apps/v1"},
		{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "apps/v1", Subresource: "status"},
	}
	value := stored(t, d)
	folded := section(Decode("/registry/deployments/default/web", value), "metadata")
	if strings.Contains(folded, "managedFields:\n") || !strings.Contains(folded,
		"  # managedFields: 2 entries folded (kubectl-client-side-apply Update, kube-controller-manager Update)\n") {
		t.Errorf("folded metadata:\n%s", folded)
	}
	shown := section(Decoder{ShowManagedFields: true}.Decode("/registry/deployments/default/web", value), "metadata")
	if !strings.Contains(shown, "  managedFields:\n  - apiVersion: apps/v1\n") {
		t.Errorf("shown metadata:\n%s", shown)
	}
}

func TestResourceVersionIsTheModRevision(t *testing.T) {
	value := stored(t, deployment(3, 3))
	if rv := Decode("/registry/deployments/default/web", value).Object.(*appsv1.Deployment).ResourceVersion; rv != "" {
		t.Errorf("resourceVersion without a revision = %q, want empty as stored", rv)
	}
	got := Decoder{}.DecodeAt("/registry/deployments/default/web", value, 4242)
	if rv := got.Object.(*appsv1.Deployment).ResourceVersion; rv != "4242" {
		t.Errorf("resourceVersion = %q, want 4242", rv)
	}
	if !strings.Contains(section(got, "metadata"), "  resourceVersion: \"4242\"\n") {
		t.Errorf("metadata section lacks the resourceVersion:\n%s", section(got, "metadata"))
	}
}

func TestRenderPrintsWhatKubectlWould(t *testing.T) {
	o := Decode("/registry/deployments/default/web", stored(t, deployment(3, 3)))
	tests := []struct {
		name, output string
		metaOnly     bool
		want         []string
		absent       []string
	}{
		{"yaml", "yaml", false, []string{"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n", "spec:\n  replicas: 3\n", "status:\n"}, nil},
		{"yaml meta only", "yaml", true, []string{"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  generation: 1\n  name: web\n"}, []string{"spec:"}},
		{"json", "json", false, []string{"{\n    \"apiVersion\": \"apps/v1\",\n", "\"replicas\": 3"}, nil},
		{"json meta only", "json", true, []string{"\"name\": \"web\""}, []string{"\"spec\""}},
		{"proto is the storage encoding", "proto", false, []string{"k8s\x00\n\x15\n\aapps/v1\x12\nDeployment"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := Render(o, tt.output, tt.metaOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			for _, a := range tt.absent {
				if strings.Contains(string(out), a) {
					t.Errorf("output has %q:\n%s", a, out)
				}
			}
		})
	}
	if out, _ := Render(o, "proto", false); !bytes.Equal(out, stored(t, deployment(3, 3))) {
		t.Error("-o proto differs from the stored value")
	}
	if _, err := Render(Decode("", []byte{0xff, 0x00}), "yaml", false); err == nil || !strings.Contains(err.Error(), "2 bytes of binary") {
		t.Errorf("Render of binary garbage: err = %v, want a refusal naming it", err)
	}
	if _, err := Render(o, "xml", false); err == nil {
		t.Error("Render -o xml succeeded")
	}
}

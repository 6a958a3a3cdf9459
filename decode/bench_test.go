package decode

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/etcdscope/etcdscope/decode/internal/yamlout"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// The Pod of the real 1.7 values: a typical small Pod (1.5 KiB stored).

func BenchmarkDecodePodYAML(b *testing.B) {
	value := readKube17(b, "storage-pod.bin")
	b.SetBytes(int64(len(value)))
	for b.Loop() {
		if o := Decode("/registry/pods/default/pi-dqtsw", value); o.YAML() == "" {
			b.Fatal(o.Label())
		}
	}
}

// BenchmarkUnmarshalPodProto is the floor: the envelope and the Pod message
// unmarshalled with the generated code, nothing rendered.
func BenchmarkUnmarshalPodProto(b *testing.B) {
	value := readKube17(b, "storage-pod.bin")
	value = value[:len(value)-1] // etcdctl's newline
	b.SetBytes(int64(len(value)))
	for b.Loop() {
		var unk runtime.Unknown
		if err := unk.Unmarshal(value[len(protobufPrefix):]); err != nil {
			b.Fatal(err)
		}
		var pod corev1.Pod
		if err := pod.Unmarshal(unk.Raw); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeConfigMap1MiBYAML(b *testing.B) {
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "big", Namespace: "default"},
		Data:       map[string]string{},
	}
	line := strings.Repeat("x", 1023) + "\n"
	for i := range 16 {
		cm.Data["file-"+string(rune('a'+i))] = strings.Repeat(line, 64) // 64 KiB each
	}
	value := stored(b, cm)
	b.SetBytes(int64(len(value)))
	for b.Loop() {
		if o := Decode("/registry/configmaps/default/big", value); o.YAML() == "" {
			b.Fatal(o.Label())
		}
	}
}

// BenchmarkDecodePodJSON is one item of `get pods -o json`: decoded for JSON
// alone and indented into place in the List.
func BenchmarkDecodePodJSON(b *testing.B) {
	value := readKube17(b, "storage-pod.bin")
	b.SetBytes(int64(len(value)))
	dec := Decoder{JSONOnly: true}
	var item []byte
	for b.Loop() {
		var err error
		if item, err = dec.DecodeAt("/registry/pods/default/pi-dqtsw", value, 42).AppendJSON(item[:0], "        "); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkYAMLEmitterPod is the emitter alone on the Pod's JSON, and
// BenchmarkSigsYAMLPod the round trip it replaces.
func BenchmarkYAMLEmitterPod(b *testing.B) {
	js := podJSON(b)
	var buf []byte
	for b.Loop() {
		var err error
		if buf, err = yamlout.Document(buf[:0], js); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSigsYAMLPod(b *testing.B) {
	js := podJSON(b)
	for b.Loop() {
		if _, err := yaml.JSONToYAML(js); err != nil {
			b.Fatal(err)
		}
	}
}

func podJSON(b *testing.B) []byte {
	o := Decode("/registry/pods/default/pi-dqtsw", readKube17(b, "storage-pod.bin"))
	js, err := json.Marshal(o.fieldView())
	if err != nil {
		b.Fatal(err)
	}
	return js
}

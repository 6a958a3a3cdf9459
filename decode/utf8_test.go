package decode

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestInvalidUTF8KeepsItsBytesInTheYAML stores a ConfigMap as
// kube-apiserver does (protobuf keeps a string's bytes as written) whose
// data and annotation values hold bytes that are not UTF-8: the YAML holds
// those bytes, not U+FFFD, so that Inert shows them as \xff\xfe; a real
// U+FFFD beside them stays one; each section is sigs.k8s.io/yaml's but for
// those bytes; and JSON, as kubectl's, stays valid with U+FFFD.
func TestInvalidUTF8KeepsItsBytesInTheYAML(t *testing.T) {
	cm := &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "motd", Namespace: "default",
			Annotations: map[string]string{"note": "before\xff\xfeafter"}},
		Data: map[string]string{
			"motd":  "hello \xff\xfe world",
			"lines": "one\n\xff two\n",
			"mixed": "\uFFFD\xff:",
		},
	}
	o := Decoder{}.Decode("/registry/configmaps/default/motd", stored(t, cm))
	if o.Problem != "" {
		t.Fatal(o.Problem)
	}
	text := o.Text()
	for _, want := range []string{
		"note: before\xff\xfeafter\n",
		"motd: hello \xff\xfe world\n",
		"lines: |\n    one\n    \xff two\n",
		"mixed: '\uFFFD\xff:'\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the YAML does not hold %q:\n%s", want, text)
		}
	}
	if shown := InertText(text); !strings.Contains(shown, `before\xff\xfeafter`) || !strings.Contains(shown, `hello \xff\xfe world`) {
		t.Errorf("Inert shows\n%s", shown)
	}
	view, err := o.newView()
	if err != nil {
		t.Fatal(err)
	}
	checkSectionsAgainstSigs(t, o, view, o.options.hide(o.GVK, view))
	item, err := o.AppendYAMLItem(nil)
	if err != nil || !strings.Contains(string(item), "motd: hello \xff\xfe world\n") {
		t.Errorf("the List item (%v):\n%s", err, item)
	}
	js, err := o.JSON(false)
	if err != nil || !json.Valid(js) || !utf8.Valid(js) || !strings.Contains(string(js), `"hello \ufffd\ufffd world"`) {
		t.Errorf("JSON (%v), want valid JSON with U+FFFD:\n%s", err, js)
	}
}

package get

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/etcdscope/etcdscope/ui/uitest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// hostileEnvelope is a protobuf envelope whose apiVersion sets the
// terminal's title and whose kind clears the screen.
func hostileEnvelope(t *testing.T) []byte {
	t.Helper()
	u := runtime.Unknown{TypeMeta: runtime.TypeMeta{APIVersion: "v1\x1b]0;KIND\x07", Kind: "ConfigMap\x1b[2J"}, Raw: []byte{0x0a, 0x00}}
	b, err := u.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return append([]byte("k8s\x00"), b...)
}

// badValuesFixture holds two good ConfigMaps in x, a value cut short and a
// hostile envelope beside them, and only bad values in y.
func badValuesFixture(t *testing.T) *uitest.Source {
	src := uitest.New()
	for _, name := range []string{"a", "c"} {
		src.PutObject(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "x", Name: name}, Data: map[string]string{"k": "v"}})
	}
	src.Put("/registry/configmaps/x/b", []byte(`{"kind":`))
	src.Put("/registry/configmaps/x/d", hostileEnvelope(t))
	src.Put("/registry/configmaps/y/b", []byte(`{"kind":`))
	src.Put("/registry/configmaps/y/d", hostileEnvelope(t))
	src.PutObject(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "z", Name: "b"}})
	src.Put("/registry/configmaps/z/a", hostileEnvelope(t))
	return src
}

func TestGetListsEveryObjectItCanDecode(t *testing.T) {
	src := badValuesFixture(t)
	const want = "etcdscope: 2 values could not be decoded (first: /registry/configmaps/x/b: looks like JSON but does not parse: unexpected end of JSON input)\n"
	for _, tc := range []struct {
		flags []string
		check func(out string) bool
	}{
		{[]string{"-n", "x"}, func(out string) bool { return strings.Count(out, "\n") == 3 && strings.HasPrefix(out, "NAME ") }},
		{[]string{"-A", "-o", "wide"}, func(out string) bool { return strings.Count(out, "\n") == 4 && strings.HasPrefix(out, "NAMESPACE ") }},
		{[]string{"-n", "x", "-o", "name"}, func(out string) bool { return out == "configmap/a\nconfigmap/c\n" }},
		{[]string{"-n", "x", "-o", "jsonpath={.items[*].metadata.name}"}, func(out string) bool { return out == "a c" }},
		{[]string{"-n", "x", "-o", "custom-columns=N:.metadata.name"}, func(out string) bool { return out == "N\na\nc\n" }},
		{[]string{"-n", "x", "-o", "name", "--sort-by", ".metadata.name"}, func(out string) bool { return out == "configmap/a\nconfigmap/c\n" }},
		{[]string{"-n", "x", "-o", "json"}, func(out string) bool { return listNames(t, out, json.Unmarshal) == "a c" }},
		{[]string{"-n", "x", "-o", "yaml"}, func(out string) bool { return listNames(t, out, yamlUnmarshal) == "a c" }},
		{[]string{"-n", "x", "-o", "yaml", "-l", "!nope"}, func(out string) bool { return listNames(t, out, yamlUnmarshal) == "a c" }},
		{[]string{"-n", "x", "-o", "json", "--sort-by", ".metadata.name"}, func(out string) bool { return listNames(t, out, json.Unmarshal) == "a c" }},
	} {
		for _, tty := range []bool{false, true} {
			out, errOut, err := getOn(t, src, tty, []string{"configmaps"}, tc.flags...)
			if tc.flags[0] == "-A" {
				// y's and z's as well, after x's.
				errOut = strings.Replace(errOut, "5 values", "2 values", 1)
			}
			if err != nil || errOut != want || !tc.check(out) {
				t.Errorf("get configmaps %s (terminal %v): %v\nstdout:\n%s\nstderr:\n%q\nwant stderr %q", strings.Join(tc.flags, " "), tty, err, out, errOut, want)
			}
		}
	}
}

// TestGetQuotesAHostileEnvelopeInert lists a good ConfigMap after a
// protobuf envelope whose apiVersion and kind hold escape sequences: the
// line that names it quotes them, inert.
func TestGetQuotesAHostileEnvelopeInert(t *testing.T) {
	src := badValuesFixture(t)
	for _, o := range []string{"", "name", "json", "yaml"} {
		for _, tty := range []bool{false, true} {
			out, errOut, err := getOn(t, src, tty, []string{"configmaps"}, "-n", "z", "-o", o)
			if err != nil || !strings.Contains(out, "b") || strings.ContainsAny(errOut, "\x1b\x07") ||
				!strings.Contains(errOut, `1 value could not be decoded (first: /registry/configmaps/z/a: v1\x1b]0;KIND\x07 ConfigMap\x1b[2J is not a kind`) {
				t.Errorf("-o %q (terminal %v): %v\nstdout:\n%s\nstderr %q", o, tty, err, out, errOut)
			}
		}
	}
}

func TestGetFailsWhenNoValueDecodes(t *testing.T) {
	src := badValuesFixture(t)
	for _, flags := range [][]string{{}, {"-o", "name"}, {"-o", "json"}, {"-o", "yaml"}} {
		for _, tty := range []bool{false, true} {
			out, errOut, err := getOn(t, src, tty, []string{"configmaps"}, append([]string{"-n", "y"}, flags...)...)
			if err == nil || !strings.HasPrefix(err.Error(), "2 values could not be decoded (first: /registry/configmaps/y/b: looks like JSON but does not parse: unexpected end of JSON input), every one it read") || errOut != "" {
				t.Errorf("get configmaps -n y %s: %v\nstderr %q", strings.Join(flags, " "), err, errOut)
			}
			if strings.Contains(out, "configmap") {
				t.Errorf("-o %s: %q", flags, out)
			}
		}
	}
	// The hostile one's kind and apiVersion are quoted in the error, inert.
	_, _, err := getOn(t, src, false, []string{"configmaps", "d"}, "-n", "y", "-o", "name")
	if err == nil || strings.ContainsAny(err.Error(), "\x1b\x07") || !strings.Contains(err.Error(), `v1\x1b]0;KIND\x07`) {
		t.Errorf("the hostile envelope's error: %q", err)
	}
}

func yamlUnmarshal(b []byte, v any) error { return yaml.Unmarshal(b, v) }

// listNames is the names of a List's items, space-separated, "" when out
// is not a List.
func listNames(t *testing.T, out string, unmarshal func([]byte, any) error) string {
	t.Helper()
	var list struct {
		Kind  string
		Items []struct{ Metadata struct{ Name string } }
	}
	if err := unmarshal([]byte(out), &list); err != nil || list.Kind != "List" {
		t.Logf("not a List (%v): %s", err, out)
		return ""
	}
	var names []string
	for _, it := range list.Items {
		names = append(names, it.Metadata.Name)
	}
	return strings.Join(names, " ")
}

package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/etcdview/etcdviewtest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// kube17 is the values a real Kubernetes 1.7 kube-apiserver wrote, at the
// root of the repository.
const kube17 = "../testdata/kube-1.7/"

func jsonEqual(t *testing.T, got, want []byte) bool {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, got)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(g, w)
}

func TestGetOnAKubernetes17DataFile(t *testing.T) {
	db := kube17 + "boltdb-db"
	want, err := os.ReadFile(kube17 + "json-pod.json")
	if err != nil {
		t.Fatal(err)
	}
	// The API server sets resourceVersion to the key's mod revision on
	// every read; the JSON beside the file was saved without it.
	var pod map[string]any
	json.Unmarshal(want, &pod)
	pod["metadata"].(map[string]any)["resourceVersion"] = "82702"
	want, _ = json.Marshal(pod)

	for _, args := range [][]string{
		{"get", "--db", db, "/registry/pods/default/pi-dqtsw", "-o", "json"},
		{"get", "--db", db, "po", "pi-dqtsw", "-o", "json"},
		{"get", "--db", db, "pods", "pi-dqtsw", "-n", "default", "-o", "json"},
	} {
		t.Run(strings.Join(args[3:], " "), func(t *testing.T) {
			if got := run(t, args...); !jsonEqual(t, []byte(got), want) {
				t.Errorf("got\n%s\nwant json-pod.json", got)
			}
		})
	}
	t.Run("a list in every namespace", func(t *testing.T) {
		out := run(t, "get", "--db", db, "jobs", "-A")
		if !strings.Contains(out, "NAMESPACE") || !strings.Contains(out, "default") || !strings.Contains(out, "pi ") {
			t.Errorf("table lacks the job default/pi:\n%s", out)
		}
	})
	t.Run("a list as YAML", func(t *testing.T) {
		out := run(t, "get", "--db", db, "po", "-o", "yaml")
		if !strings.Contains(out, "kind: List") || !strings.Contains(out, "name: pi-dqtsw") {
			t.Errorf("YAML list lacks the pod:\n%s", out)
		}
	})
	t.Run("raw is the stored value", func(t *testing.T) {
		stored, _ := os.ReadFile(kube17 + "storage-pod.bin")
		if out := run(t, "get", "--db", db, "/registry/pods/default/pi-dqtsw", "-o", "raw"); out != strings.TrimSuffix(string(stored), "\n") {
			t.Errorf("raw value differs from storage-pod.bin")
		}
	})
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown resource", []string{"get", "--db", db, "flurbs", "x"}, `the server doesn't have a resource type "flurbs"`},
		{"unknown resource, no name", []string{"get", "--db", db, "widgets"}, `Error: the server doesn't have a resource type "widgets"`},
		{"missing key", []string{"get", "--db", db, "/registry/pods/default/nope"}, "/registry/pods/default/nope not found"},
		{"compacted revision", []string{"get", "--db", db, "po", "pi-dqtsw", "--rev", "5"}, "revision 5 has been compacted: the oldest revision etcd still holds is 241828"},
		{"unknown output", []string{"get", "--db", db, "po", "pi-dqtsw", "-o", "yml"}, `unknown output format "yml": want yaml, json, raw, wide, name, custom-columns=...`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if msg := runFails(t, tc.args...); !strings.Contains(msg, tc.want) {
				t.Errorf("error %q does not say %q", msg, tc.want)
			}
		})
	}
}

// TestGetOnATerminalIsInert prints values whose text holds OSC, CSI, C1 and
// bidi controls, in every form get has: a terminal gets them escaped
// (-o raw excepted: it asks for the bytes as stored), a pipe as they are.
func TestGetOnATerminalIsInert(t *testing.T) {
	cm := terminalAttackValue(t)
	text := []byte("not JSON \x1b]52;c;b3duZWQ=\x07\x1b[2J")
	key := "/registry/configmaps/default/motd"
	tty := func(output string) (printer, *bytes.Buffer, *bytes.Buffer) {
		var out, errOut bytes.Buffer
		return printer{out: &out, errOut: &errOut, p: palette{tty: true}, ep: palette{tty: true}, output: output}, &out, &errOut
	}
	controls := "\x1b\x07\u009b\u202e"
	for _, tc := range []struct {
		value  []byte
		output string
	}{{cm, ""}, {cm, decode.OutputJSON}, {text, ""}} {
		s, out, errOut := tty(tc.output)
		if err := printValue(s, key, &etcdview.KV{Key: key, Value: tc.value, ModRevision: 3}, decode.Decoder{}); err != nil {
			t.Fatal(err)
		}
		if got := out.String() + errOut.String(); strings.ContainsAny(got, controls) || out.Len() == 0 {
			t.Errorf("get -o %q: the terminal gets %q", tc.output, got)
		}
	}
	s, out, _ := tty(outputRaw)
	if err := printValue(s, key, &etcdview.KV{Key: key, Value: text}, decode.Decoder{}); err != nil || !bytes.Equal(out.Bytes(), text) {
		t.Errorf("-o raw on a terminal: %v, %q, want the bytes as stored", err, out.String())
	}
	for _, format := range []listFormat{jsonList, yamlList} {
		s, out, _ := tty("")
		w := s.p.writer(s.out)
		kvs := []etcdview.KV{{Key: key, Value: cm, ModRevision: 3}}
		if err := writeList(context.Background(), w, decode.Decoder{JSONOnly: true}, pagesOf(kvs, 1, nil), format, nil); err != nil {
			t.Fatal(err)
		}
		w.Flush()
		if strings.ContainsAny(out.String(), controls) || !strings.Contains(out.String(), `\u202e`) {
			t.Errorf("the List on a terminal: %q", out.String())
		}
	}
	s, out, _ = tty("")
	keys := []etcdview.KV{{Key: "/registry/pods/n\x1b[2Js/p\u202eod", ModRevision: 4, CreateRevision: 4, Version: 1}}
	if err := printObjectTable(s, decode.Resource{Resource: "pods", Namespaced: true}, keys); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(out.String(), controls) || !strings.Contains(out.String(), `n\x1b[2Js`) {
		t.Errorf("the table on a terminal: %q", out.String())
	}
}

// terminalAttackValue is a ConfigMap as stored, whose data and annotations
// hold what a terminal obeys: OSC, CSI, BEL, C1 CSI and a bidi override.
func terminalAttackValue(t *testing.T) []byte {
	t.Helper()
	cm, err := etcdviewtest.Encode(&corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "motd", Namespace: "default", Annotations: map[string]string{"a": "\u009b31m\u202e"}},
		Data:       map[string]string{"motd": "\x1b]0;owned\x07\x1b[2J"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return cm
}

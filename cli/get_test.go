package cli

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
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

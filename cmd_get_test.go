package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"

	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/etcdview"
)

const kube17 = "testdata/kube-1.7/"

// run runs etcdscope and returns its stdout, failing on a non-zero exit.
func run(t *testing.T, args ...string) string {
	t.Helper()
	cmd := etcdscope(args)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("etcdscope %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

// runFails runs etcdscope expecting exit status 1 with one line of error,
// and returns that line.
func runFails(t *testing.T, args ...string) string {
	t.Helper()
	cmd := etcdscope(args)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("etcdscope %s: %v, want exit status 1; stderr:\n%s", strings.Join(args, " "), err, stderr.String())
	}
	msg := strings.TrimSpace(stderr.String())
	if !strings.HasPrefix(msg, "Error: ") || strings.Contains(msg, "\n") || strings.Contains(msg, "goroutine ") {
		t.Errorf("stderr is not one line of error:\n%s", msg)
	}
	return msg
}

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
		{"unknown resource", []string{"get", "--db", db, "flurbs", "x"}, `unknown resource type "flurbs"`},
		{"missing key", []string{"get", "--db", db, "/registry/pods/default/nope"}, "/registry/pods/default/nope not found"},
		{"compacted revision", []string{"get", "--db", db, "po", "pi-dqtsw", "--rev", "5"}, "revision 5 has been compacted: the oldest revision etcd still holds is 241828"},
		{"unknown output", []string{"get", "--db", db, "po", "pi-dqtsw", "-o", "wide"}, `unknown output format "wide"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if msg := runFails(t, tc.args...); !strings.Contains(msg, tc.want) {
				t.Errorf("error %q does not say %q", msg, tc.want)
			}
		})
	}
}

// pagesOf serves kvs as a pager, size keys a page, then fails with err
// when err is not nil.
func pagesOf(kvs []etcdview.KV, size int, err error) pager {
	return func(ctx context.Context, yield func([]etcdview.KV) error) error {
		for len(kvs) > 0 {
			n := min(len(kvs), size)
			if err := yield(kvs[:n]); err != nil {
				return err
			}
			kvs = kvs[n:]
		}
		return err
	}
}

func TestJSONListStreamsWhatWriteDocPrints(t *testing.T) {
	pod, err := os.ReadFile(kube17 + "storage-pod.bin")
	if err != nil {
		t.Fatal(err)
	}
	values := [][]byte{
		pod,
		[]byte(`{"kind": "Thing", "apiVersion": "x.io/v1", "metadata": {"name": "a", "labels": {"x": "1"}}, "spec": {"list": [{"name": "c"}], "e": {}}}`),
		[]byte(`{"kind":"Other","apiVersion":"x.io/v1","b":[1,2.5,{"c":"<d>"}],"a":null}`),
	}
	dec := decode.Decoder{JSONOnly: true}
	for _, tc := range []struct{ n, page int }{{0, 1000}, {1, 1000}, {3, 2}, {listChunkSize + 1, 7}, {3*listChunkSize + 5, listValuesPage}} {
		var kvs []etcdview.KV
		items := []json.RawMessage{} // as decodeAll made them
		for i := range tc.n {
			kv := etcdview.KV{Key: fmt.Sprintf("/registry/pods/ns/p%04d", i), Value: values[i%len(values)], ModRevision: int64(i + 1)}
			item, err := decode.Decoder{}.DecodeAt(kv.Key, kv.Value, kv.ModRevision).JSON(false)
			if err != nil {
				t.Fatal(err)
			}
			kvs, items = append(kvs, kv), append(items, item)
		}
		var want, got bytes.Buffer
		if err := writeDoc(&want, outputJSON, listDoc(items)); err != nil {
			t.Fatal(err)
		}
		if err := writeJSONList(context.Background(), &got, dec, pagesOf(kvs, tc.page, nil)); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("%d objects in pages of %d: streamed list differs:\n%s\nwant\n%s", tc.n, tc.page, got.String(), want.String())
		}
	}
}

func TestJSONListStopsAtTheFirstErrorInKeyOrder(t *testing.T) {
	obj := []byte(`{"kind":"Thing","apiVersion":"x.io/v1","metadata":{"name":"a"}}`)
	var kvs []etcdview.KV
	for i := range 3*listChunkSize + 5 {
		v := obj
		if i == listChunkSize+3 || i == 3*listChunkSize {
			v = []byte("not an object")
		}
		kvs = append(kvs, etcdview.KV{Key: fmt.Sprintf("/registry/things/t%04d", i), Value: v})
	}
	readErr := errors.New("etcd went away")
	for _, tc := range []struct {
		name  string
		kvs   []etcdview.KV
		err   error
		want  string
		items int
	}{
		{"a value that is no object", kvs, nil, "/registry/things/t0253: text value holds no object", listChunkSize + 3},
		{"a read that fails after two pages", kvs[:listChunkSize], readErr, readErr.Error(), listChunkSize},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			err := writeJSONList(context.Background(), &out, decode.Decoder{JSONOnly: true}, pagesOf(tc.kvs, listChunkSize/2, tc.err))
			if err == nil || err.Error() != tc.want {
				t.Fatalf("error = %v, want %s", err, tc.want)
			}
			if n := strings.Count(out.String(), `"kind": "Thing"`); n != tc.items {
				t.Errorf("%d objects written before the error, want the %d before it", n, tc.items)
			}
			if json.Valid(out.Bytes()) {
				t.Errorf("the List is whole, as if nothing had failed")
			}
		})
	}
}

package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/etcdscope/etcdscope/etcdview/etcdviewtest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestHistoryShowsEachRevisionAndWhatChanged(t *testing.T) {
	_, endpoints, cli := startEtcd(t, 1)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "default"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.26"}}},
	}
	etcdviewtest.Put(t, cli, pod)
	pod.Spec.Containers[0].Image = "nginx:1.27"
	etcdviewtest.Put(t, cli, pod)
	if _, err := cli.Delete(context.Background(), "/registry/pods/default/web-0"); err != nil {
		t.Fatal(err)
	}
	etcdviewtest.Put(t, cli, pod)
	key := "/registry/pods/default/web-0"

	table := run(t, "--endpoints", endpoints, "history", key)
	lines := strings.Split(strings.TrimSpace(table), "\n")
	wantChanges := []string{"ADDED", "DELETED", "MODIFIED", "ADDED"}
	if len(lines) != 1+len(wantChanges) {
		t.Fatalf("history table:\n%s\nwant a header and %d revisions", table, len(wantChanges))
	}
	for i, want := range wantChanges {
		if f := strings.Fields(lines[i+1]); len(f) < 2 || f[1] != want {
			t.Errorf("line %q, want change %s", lines[i+1], want)
		}
	}
	if !strings.Contains(lines[3], "nginx:1.26") || !strings.Contains(lines[3], "nginx:1.27") {
		t.Errorf("the update's line %q does not say the image changed", lines[3])
	}

	diff := run(t, "--endpoints", endpoints, "history", key, "--diff")
	if !strings.Contains(diff, "-  - image: nginx:1.26") && !strings.Contains(diff, "-    image: nginx:1.26") {
		t.Errorf("--diff lacks the removed image line:\n%s", diff)
	}

	var doc struct {
		Entries []struct {
			Revision int64           `json:"revision"`
			Change   string          `json:"change"`
			Object   json.RawMessage `json:"object"`
		} `json:"entries"`
	}
	out := run(t, "--endpoints", endpoints, "history", key, "-o", "json")
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Entries) != 4 {
		t.Fatalf("history -o json: %v, %d entries\n%s", err, len(doc.Entries), out)
	}
	if !strings.Contains(string(doc.Entries[0].Object), `"kind": "Pod"`) {
		t.Errorf("newest entry's object %s is not the pod", doc.Entries[0].Object)
	}
}

package cli

import (
	"fmt"
	"maps"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/etcdview/etcdviewtest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestGetAsOfARevisionCountsAgeToItsTime: AGE under --rev is the age the
// objects had then, as the TUI's :rev shows it, not their age now.
func TestGetAsOfARevisionCountsAgeToItsTime(t *testing.T) {
	_, endpoints, cli := startEtcd(t, 1)
	t0 := time.Now().Add(-10 * time.Hour).Truncate(time.Second)
	pod := func(name string, created time.Time) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", CreationTimestamp: metav1.NewTime(created)}}
	}
	etcdviewtest.Put(t, cli, pod("old", t0))
	rev := etcdviewtest.Put(t, cli, pod("new", t0.Add(2*time.Hour)))
	etcdviewtest.Put(t, cli, pod("newest", time.Now()))

	code, out, errOut := runCommand(t, "--endpoints", endpoints, "get", "pods", "--rev", strconv.FormatInt(rev, 10))
	if code != 0 {
		t.Fatalf("get pods --rev %d: exit status %d\n%s", rev, code, errOut)
	}
	ages := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
		f := strings.Fields(line)
		ages[f[0]] = f[len(f)-2] // AGE, REVISION
	}
	if want := map[string]string{"new": "0s", "old": "120m"}; !maps.Equal(ages, want) {
		t.Errorf("get pods --rev %d: ages %v, want %v\n%s", rev, ages, want, out)
	}
	note := fmt.Sprintf("AGE as of revision %d, at ≈ %s (estimated from the times the objects listed record)", rev, t0.Add(2*time.Hour).UTC().Format(time.RFC3339))
	if strings.TrimSpace(errOut) != note {
		t.Errorf("stderr %q, want %q", errOut, note)
	}
	head := run(t, "--endpoints", endpoints, "get", "pods")
	if !strings.Contains(head, "10h") || !strings.Contains(head, "8h") {
		t.Errorf("get pods at the head counts AGE to now:\n%s", head)
	}
}

package ui

import (
	"testing"

	"github.com/charmbracelet/x/exp/golden"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/etcdscope/etcdscope/ui/uitest"
)

// TestGoldenTailWhere is the tail under a :where: events kept and hidden,
// a DELETE judged by the value before it, a ConfigMap the expression
// cannot be evaluated on, a note shown through, and the counts.
func TestGoldenTailWhere(t *testing.T) {
	tm, src := newTest(t, 120, 30)
	waitScreen(t, tm, "pods/", "etcd-0 ★")
	typeText(tm, "2")
	waitScreen(t, tm, "waiting for events")
	src.PutObject(uitest.Pod("default", "web-3", "nginx:1.29", true))
	src.PutObject(uitest.Pod("default", "web-4", "busybox", true))
	src.Delete("/registry/pods/default/web-0")
	src.Notify("leader changed (Raft term 2 → 3)")
	src.PutObject(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "settings"}})
	waitScreen(t, tm, "web-4", "leader changed", "settings")
	command(tm, `where object.spec.containers[0].image.startsWith("nginx")`)
	waitScreen(t, tm, `2 shown, 1 hidden, 1 could not evaluate`)
	golden.RequireEqual(t, []byte(finalView(t, tm)))
}

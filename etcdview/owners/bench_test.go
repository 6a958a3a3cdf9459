package owners

import (
	"fmt"
	"runtime"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// BenchmarkBuild100kPods decodes 100k stored Pods, each owned by one of
// 1,000 ReplicaSets, into a graph, and reports what the graph keeps per
// object: the values are gone once added.
func BenchmarkBuild100kPods(b *testing.B) {
	const n = 100_000
	values := make([][]byte, n)
	keys := make([]string, n)
	for i := range n {
		name := fmt.Sprintf("web-%04d-%05d", i%1000, i)
		keys[i] = "/registry/pods/team-" + fmt.Sprint(i%500) + "/" + name
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: fmt.Sprint("team-", i%500), UID: types.UID(fmt.Sprintf("0b5e8a7c-0000-4000-8000-%012d", i)),
				CreationTimestamp: metav1.Now(), Labels: map[string]string{"app": "web", "pod-template-hash": "7d9c"},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: fmt.Sprintf("web-%04d", i%1000),
					UID: types.UID(fmt.Sprintf("5e1d0c5a-0000-4000-8000-%012d", i%1000)), Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}},
			Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27",
				Env: []corev1.EnvVar{{Name: "A", Value: "1"}, {Name: "B", Value: "2"}}}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.244.0.7"},
		}
		values[i] = storedPod(b, pod)
	}
	b.ResetTimer()
	var retained uint64
	for range b.N {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		var bld Builder
		for i := range n {
			bld.Add(keys[i], values[i], int64(i+1))
		}
		g := bld.Graph()
		runtime.GC()
		runtime.ReadMemStats(&after)
		retained = after.HeapAlloc - before.HeapAlloc
		if g.Len() != n+1000 {
			b.Fatalf("%d nodes, want %d", g.Len(), n+1000)
		}
		runtime.KeepAlive(g)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/object")
	b.ReportMetric(float64(retained)/n, "retained-B/object")
}

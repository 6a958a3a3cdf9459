package apiserver

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	appsv1apply "k8s.io/client-go/applyconfigurations/apps/v1"
	"k8s.io/utils/ptr"
)

func TestPatchTypes(t *testing.T) {
	ctx := context.Background()
	cs := adminClient(t)
	ns := createNamespace(t, cs, "patch")
	deployments := cs.AppsV1().Deployments(ns)
	_, err := deployments.Create(ctx, testDeployment("web"), metav1.CreateOptions{})
	check(t, err)

	patches := []struct {
		kind  types.PatchType
		patch string
	}{
		{types.JSONPatchType, `[{"op": "replace", "path": "/spec/replicas", "value": 2}]`},
		{types.MergePatchType, `{"metadata": {"labels": {"merged": "yes"}}}`},
		// A strategic merge patch merges the containers list by name.
		{types.StrategicMergePatchType, `{"spec": {"template": {"spec": {"containers": [{"name": "web", "image": "nginx:1.28"}]}}}}`},
	}
	for _, p := range patches {
		_, err := deployments.Patch(ctx, "web", p.kind, []byte(p.patch), metav1.PatchOptions{})
		check(t, err)
	}
	d, err := deployments.Get(ctx, "web", metav1.GetOptions{})
	check(t, err)
	if *d.Spec.Replicas != 2 || d.Labels["merged"] != "yes" || len(d.Spec.Template.Spec.Containers) != 1 || d.Spec.Template.Spec.Containers[0].Image != "nginx:1.28" {
		t.Errorf("after patches: replicas %d, labels %v, containers %+v", *d.Spec.Replicas, d.Labels, d.Spec.Template.Spec.Containers)
	}
	if d.Generation != 3 { // replicas and image changed the spec; the label did not
		t.Errorf("generation %d after two spec changes, want 3", d.Generation)
	}

	apply := appsv1apply.Deployment("web", ns).WithSpec(appsv1apply.DeploymentSpec().WithReplicas(4))
	applied, err := deployments.Apply(ctx, apply, metav1.ApplyOptions{FieldManager: "tester", Force: true})
	check(t, err)
	if *applied.Spec.Replicas != 4 {
		t.Errorf("server-side apply: replicas %d", *applied.Spec.Replicas)
	}
	var managers []string
	for _, m := range applied.ManagedFields {
		managers = append(managers, fmt.Sprintf("%s/%s", m.Manager, m.Operation))
	}
	if len(managers) < 2 {
		t.Errorf("managedFields %v lacks the applier", managers)
	}

	_, err = deployments.Patch(ctx, "web", types.JSONPatchType, []byte(`[{"op": "test", "path": "/spec/replicas", "value": 99}]`), metav1.PatchOptions{})
	expectStatus(t, "JSON patch whose test op fails", err, 422, metav1.StatusReasonInvalid)
}

func TestListSelectorsAndPaging(t *testing.T) {
	ctx := context.Background()
	cs := adminClient(t)
	ns := createNamespace(t, cs, "list")
	pods := cs.CoreV1().Pods(ns)
	for i := range 5 {
		pod := testPod(fmt.Sprintf("p%d", i))
		pod.Labels = map[string]string{"parity": []string{"even", "odd"}[i%2]}
		if i < 2 {
			pod.Spec.NodeName = "node-a"
		}
		_, err := pods.Create(ctx, pod, metav1.CreateOptions{})
		check(t, err)
	}
	count := func(opts metav1.ListOptions) int {
		t.Helper()
		l, err := pods.List(ctx, opts)
		check(t, err)
		return len(l.Items)
	}
	if n := count(metav1.ListOptions{LabelSelector: "parity=even"}); n != 3 {
		t.Errorf("parity=even: %d pods, want 3", n)
	}
	if n := count(metav1.ListOptions{FieldSelector: "spec.nodeName=node-a"}); n != 2 {
		t.Errorf("spec.nodeName=node-a: %d pods, want 2", n)
	}
	if n := count(metav1.ListOptions{FieldSelector: "metadata.name=p3"}); n != 1 {
		t.Errorf("metadata.name=p3: %d pods, want 1", n)
	}
	if _, err := pods.List(ctx, metav1.ListOptions{FieldSelector: "spec.noSuchField=x"}); !apierrors.IsBadRequest(err) {
		t.Errorf("unknown field selector: %v, want BadRequest", err)
	}

	var names []string
	opts := metav1.ListOptions{Limit: 2}
	for pages := 0; ; pages++ {
		l, err := pods.List(ctx, opts)
		check(t, err)
		for _, p := range l.Items {
			names = append(names, p.Name)
		}
		if l.Continue == "" {
			if pages != 2 {
				t.Errorf("5 pods in pages of 2 took %d continues, want 2", pages)
			}
			break
		}
		opts.Continue = l.Continue
	}
	if fmt.Sprint(names) != "[p0 p1 p2 p3 p4]" {
		t.Errorf("paged list %v", names)
	}
}

func TestSubresources(t *testing.T) {
	ctx := context.Background()
	cs := adminClient(t)
	ns := createNamespace(t, cs, "subresources")

	pod, err := cs.CoreV1().Pods(ns).Create(ctx, testPod("p"), metav1.CreateOptions{})
	check(t, err)
	check(t, cs.CoreV1().Pods(ns).Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Target: corev1.ObjectReference{Kind: "Node", Name: "node-1"}}, metav1.CreateOptions{}))
	pod.Status.Phase = corev1.PodRunning
	pod.Spec.NodeName = "ignored" // the status subresource ignores spec changes
	_, err = cs.CoreV1().Pods(ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
	if err != nil && !apierrors.IsConflict(err) {
		t.Fatal(err)
	}
	pod, err = cs.CoreV1().Pods(ns).Get(ctx, "p", metav1.GetOptions{})
	check(t, err)
	pod.Status.Phase = corev1.PodRunning
	_, err = cs.CoreV1().Pods(ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
	check(t, err)
	pod, err = cs.CoreV1().Pods(ns).Get(ctx, "p", metav1.GetOptions{})
	check(t, err)
	if pod.Spec.NodeName != "node-1" || pod.Status.Phase != corev1.PodRunning {
		t.Errorf("after binding and status update: node %q phase %q", pod.Spec.NodeName, pod.Status.Phase)
	}

	node, err := cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: ns + "-node"}}, metav1.CreateOptions{})
	check(t, err)
	defer cs.CoreV1().Nodes().Delete(ctx, node.Name, metav1.DeleteOptions{})
	node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
	_, err = cs.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{})
	check(t, err)

	ss := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "db"}, Spec: appsv1.StatefulSetSpec{
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "db"}}, Spec: testPod("").Spec},
	}}
	_, err = cs.AppsV1().StatefulSets(ns).Create(ctx, ss, metav1.CreateOptions{})
	check(t, err)
	_, err = cs.AppsV1().StatefulSets(ns).UpdateScale(ctx, "db", &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: ns}, Spec: autoscalingv1.ScaleSpec{Replicas: 3}}, metav1.UpdateOptions{})
	check(t, err)
	scale, err := cs.AppsV1().StatefulSets(ns).GetScale(ctx, "db", metav1.GetOptions{})
	check(t, err)
	if scale.Spec.Replicas != 3 {
		t.Errorf("statefulset scale %d, want 3", scale.Spec.Replicas)
	}
}

func TestWatchSeesChangesAndBookmarks(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs := adminClient(t)
	ns := createNamespace(t, cs, "watch")
	cms := cs.CoreV1().ConfigMaps(ns)
	list, err := cms.List(ctx, metav1.ListOptions{})
	check(t, err)
	w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion, AllowWatchBookmarks: true})
	check(t, err)
	defer w.Stop()
	_, err = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}, metav1.CreateOptions{})
	check(t, err)
	_, err = cms.Update(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Data: map[string]string{"a": "b"}}, metav1.UpdateOptions{})
	check(t, err)
	check(t, cms.Delete(ctx, "c", metav1.DeleteOptions{}))
	var got []watch.EventType
	for len(got) < 3 {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch closed after %v", got)
			}
			if ev.Type != watch.Bookmark {
				got = append(got, ev.Type)
			}
		case <-ctx.Done():
			t.Fatalf("watch saw %v before timing out", got)
		}
	}
	if fmt.Sprint(got) != "[ADDED MODIFIED DELETED]" {
		t.Errorf("watch events %v", got)
	}

	// sendInitialEvents (WatchList): the current objects, then a bookmark
	// marking the end of the initial events.
	_, err = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "d"}}, metav1.CreateOptions{})
	check(t, err)
	wl, err := cms.Watch(ctx, metav1.ListOptions{SendInitialEvents: ptr.To(true), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true})
	check(t, err)
	defer wl.Stop()
	ev := <-wl.ResultChan()
	if ev.Type != watch.Added || ev.Object.(*corev1.ConfigMap).Name != "d" {
		t.Fatalf("first WatchList event %s %v", ev.Type, ev.Object)
	}
	ev = <-wl.ResultChan()
	if ev.Type != watch.Bookmark || ev.Object.(*corev1.ConfigMap).Annotations[metav1.InitialEventsAnnotationKey] != "true" {
		t.Errorf("second WatchList event %s %v, want the initial-events-end bookmark", ev.Type, ev.Object)
	}
}

func TestDeleteCollectionAndNamespaceDeletion(t *testing.T) {
	ctx := context.Background()
	cs := adminClient(t)
	ns := createNamespace(t, cs, "delete")
	for i := range 3 {
		_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("c", i), Labels: map[string]string{"batch": "x"}}}, metav1.CreateOptions{})
		check(t, err)
	}
	_, err := cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}}, metav1.CreateOptions{})
	check(t, err)
	check(t, cs.CoreV1().ConfigMaps(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "batch=x"}))
	if l, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{}); err != nil || len(l.Items) != 0 {
		t.Fatalf("after deletecollection: %v %v", l, err)
	}

	check(t, cs.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}))
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "late"}}, metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("create in a terminating namespace: %v, want Forbidden", err)
	}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatalf("namespace %s not gone in 30s: %v", ns, err)
	}
	resp, err := etcdClient(t).Get(ctx, "/registry/secrets/"+ns+"/s")
	check(t, err)
	if len(resp.Kvs) != 0 {
		t.Error("the secret of a deleted namespace is still in etcd")
	}
}

func testPod(name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox:1.36"}}}}
}

func testDeployment(name string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: appsv1.DeploymentSpec{
		Replicas: ptr.To[int32](1),
		Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: name, Image: "nginx:1.27"}}}},
	}}
}

// TestServiceIPsSurviveARestart: a server started on a cluster that holds
// services does not hand their cluster IPs out again.
func TestServiceIPsSurviveARestart(t *testing.T) {
	ctx := context.Background()
	opts := Options{Etcd: etcdConfig(), Prefix: "/restart-test"}
	s, err := Start(ctx, opts)
	check(t, err)
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "first"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	first, err := clientFor(t, s, s.AdminToken()).CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{})
	check(t, err)
	check(t, s.Close())

	s, err = Start(ctx, opts)
	check(t, err)
	defer s.Close()
	svc.Name, svc.Spec.ClusterIP = "second", first.Spec.ClusterIP
	_, err = clientFor(t, s, s.AdminToken()).CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{})
	expectStatus(t, "a service asking for the cluster IP of another", err, 422, metav1.StatusReasonInvalid)
}

package ui

import (
	"fmt"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/etcdscope/etcdscope/ui/uitest"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// incidentAt is when the incident of incidentFixture begins.
var incidentAt = time.Date(2026, 1, 2, 9, 30, 0, 0, time.UTC)

// fieldsBy is a managedFields entry of manager, recorded at incidentAt+sec.
func fieldsBy(manager string, op metav1.ManagedFieldsOperationType, sub string, sec int) metav1.ManagedFieldsEntry {
	at := metav1.NewTime(incidentAt.Add(time.Duration(sec) * time.Second))
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, Subresource: sub, Time: &at, FieldsType: "FieldsV1",
		FieldsV1: &metav1.FieldsV1{Raw: fmt.Appendf(nil, `{"f:%s":{}}`, manager)}}
}

// incidentFixture is the fixture store, then 40 s of an incident, each
// write by a writer it names: node-1's Lease renewed every 10 s (the
// clock the times are estimated from), the Deployment web restarted by
// kubectl rollout restart, its new ReplicaSet and Pod from the
// controllers, the Pod's status from the kubelet, web-0 deleted, and the
// CoreDNS ConfigMap edited.
func incidentFixture() incident {
	src := uitest.Fixture()
	in := incident{src: src, from: src.Revision() + 1}
	renew := func(sec int) {
		holder, at := "node-1", metav1.NewMicroTime(incidentAt.Add(time.Duration(sec)*time.Second))
		src.PutObject(&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-node-lease", Name: "node-1", CreationTimestamp: metav1.NewTime(incidentAt)},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, RenewTime: &at}})
	}
	renew(0)
	// The fixture's Deployment, restarted.
	replicas, labels := int32(2), map[string]string{"app": "web"}
	in.restart = src.PutObject(&appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", CreationTimestamp: fixtureCreated, Generation: 2,
			ManagedFields: []metav1.ManagedFieldsEntry{fieldsBy("kubectl-client-side-apply", "Update", "", -3600), fieldsBy("kubectl-rollout", "Update", "", 4)}},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{"kubectl.kubernetes.io/restartedAt": incidentAt.Add(4 * time.Second).Format(time.RFC3339)}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}}}},
	})
	owner := []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}}
	src.PutObject(&appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-5f7b9c", CreationTimestamp: metav1.NewTime(incidentAt.Add(5 * time.Second)),
		OwnerReferences: owner, ManagedFields: []metav1.ManagedFieldsEntry{fieldsBy("kube-controller-manager", "Update", "", 5)}}, Spec: appsv1.ReplicaSetSpec{Replicas: &replicas}})
	renew(10)
	pod := uitest.Pod("default", "web-5f7b9c-q4x2z", "nginx:1.28", false)
	pod.CreationTimestamp = metav1.NewTime(incidentAt.Add(11 * time.Second))
	pod.ManagedFields = []metav1.ManagedFieldsEntry{fieldsBy("kube-controller-manager", "Update", "", 11)}
	src.PutObject(pod)
	ready := uitest.Pod("default", "web-5f7b9c-q4x2z", "nginx:1.28", true)
	ready.CreationTimestamp = pod.CreationTimestamp
	ready.ManagedFields = append(pod.ManagedFields, fieldsBy("kubelet", "Update", "status", 17))
	src.PutObject(ready)
	renew(20)
	src.Delete("/registry/pods/default/web-0")
	src.PutObject(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "coredns", CreationTimestamp: fixtureCreated,
		ManagedFields: []metav1.ManagedFieldsEntry{fieldsBy("kubectl-edit", "Update", "", 26)}},
		Data: map[string]string{"Corefile": ".:53 {\n    forward . 10.0.0.53\n}\n"}})
	renew(30)
	renew(40)
	return in
}

// incident is incidentFixture's store, its first revision, and that of
// the restart.
type incident struct {
	src           *uitest.Source
	from, restart int64
}

// fixtureCreated is when uitest.Fixture's objects were created.
var fixtureCreated = metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))

func TestGoldenTimelineScreen(t *testing.T) {
	for _, size := range [][2]int{{100, 30}, {160, 45}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			in := incidentFixture()
			tm := startOn(t, size[0], size[1], Options{Source: in.src, Description: "fixture store"})
			waitScreen(t, tm, "pods/", "etcd-0 ★")
			command(tm, fmt.Sprintf("changes %d", in.from))
			waitScreen(t, tm, "[7 timeline]", fmt.Sprintf("revisions %d-%d of every key", in.from, in.src.Revision()), "kubectl-rollout", "kubelet")
			typeText(tm, "jjj")
			golden.RequireEqual(t, []byte(finalView(t, tm)))
		})
	}
}

// enter on a row of the timeline opens the object's history at its last
// change in the window.
func TestTimelineRowOpensTheHistoryAtItsRevision(t *testing.T) {
	in := incidentFixture()
	tm := startOn(t, 160, 45, Options{Source: in.src, Description: "fixture store"})
	waitScreen(t, tm, "pods/", "etcd-0 ★")
	command(tm, fmt.Sprintf("changes %d", in.from))
	waitScreen(t, tm, fmt.Sprintf("rev %d", in.restart), "by kubectl-rollout Update 09:30:04")
	// The rows above web: two groups of three rows, and its group's.
	typeText(tm, "jjjjjj")
	press(tm, tea.KeyEnter)
	waitScreen(t, tm, "[3 history]", "history /registry/deployments/default/web", fmt.Sprintf("> %d ", in.restart), "kubectl.kubernetes.io/restartedAt")
}

package uitest

import (
	"fmt"
	"strings"
	"time"

	"github.com/etcdscope/etcdscope/etcdview/etcdviewtest"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// created is the fixed creation time of every fixture object.
var created = metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))

// PutObject writes obj where kube-apiserver would, encoded as it would.
func (s *Source) PutObject(obj runtime.Object) int64 {
	key, err := etcdviewtest.Key(obj)
	if err != nil {
		panic(err)
	}
	val, err := etcdviewtest.Encode(obj)
	if err != nil {
		panic(err)
	}
	return s.Put(key, val)
}

// Pod is a running pod with one container, as a kubelet reports it.
func Pod(ns, name, image string, ready bool) *corev1.Pod {
	cond := corev1.ConditionFalse
	if ready {
		cond = corev1.ConditionTrue
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(fmt.Sprintf("0b1c2d3e-0000-4000-8000-%012d", len(name))), CreationTimestamp: created, Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{
			NodeName:   "node-1",
			Containers: []corev1.Container{{Name: "web", Image: image, Ports: []corev1.ContainerPort{{ContainerPort: 8080}}}},
		},
		Status: corev1.PodStatus{
			Phase:      corev1.PodRunning,
			PodIP:      "10.244.0.7",
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: cond}},
		},
	}
}

// Fixture is the store the golden screens show: a few namespaces, pods, a
// deployment, a secret, a node and one non-object key, with web-0 written
// three times so that it has a history.
func Fixture() *Source {
	s := New()
	replicas := int32(2)
	objs := []runtime.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default", CreationTimestamp: created}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kube-system", CreationTimestamp: created}},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1", CreationTimestamp: created}, Status: corev1.NodeStatus{NodeInfo: corev1.NodeSystemInfo{KubeletVersion: "v1.37.2"}}},
		&appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", CreationTimestamp: created},
			Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}}}},
		},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "db-password", CreationTimestamp: created}, Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"password": []byte("hunter2")}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "coredns", CreationTimestamp: created}, Data: map[string]string{"Corefile": ".:53 {\n    forward . /etc/resolv.conf\n}\n"}},
		Pod("kube-system", "coredns-0", "coredns:1.11", true),
		Pod("default", "web-1", "nginx:1.27", true),
		Pod("default", "web-0", "nginx:1.27", false),
	}
	for _, o := range objs {
		s.PutObject(o)
	}
	s.PutObject(Pod("default", "web-0", "nginx:1.27", true))
	s.PutObject(Pod("default", "web-0", "nginx:1.28", true))
	s.Put("/registry/masterleases/10.0.0.1", []byte("\x00\x01binary lease"))
	return s
}

// BigKey is where PutBig writes.
const BigKey = "/registry/configmaps/default/big"

// PutBig writes a ConfigMap at BigKey as a user who abuses the API might:
// size bytes of data, in lines of lineLen bytes or, when lineLen is 0, on
// one line; and an annotation of 1 MiB on one line that ends with an
// escape sequence.
func (s *Source) PutBig(size, lineLen int) int64 {
	unit := "0123456789abcdef"
	if lineLen > 0 {
		unit = strings.Repeat("x", lineLen-1) + "\n"
	}
	return s.PutObject(&corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "big", CreationTimestamp: created,
			Annotations: map[string]string{"note": strings.Repeat("x", 1<<20) + "\x1b]0;pwned\x07"}},
		Data: map[string]string{"blob": strings.Repeat(unit, size/len(unit))},
	})
}

package restore

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/etcdview/etcdviewtest"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// storeOf is a store holding objs as kube-apiserver writes them.
func storeOf(t *testing.T, objs ...runtime.Object) store {
	t.Helper()
	s := store{}
	for i, obj := range objs {
		key, err := etcdviewtest.Key(obj)
		if err != nil {
			t.Fatal(err)
		}
		value, err := etcdviewtest.Encode(obj)
		if err != nil {
			t.Fatal(err)
		}
		s[key] = etcdview.KV{Key: key, Value: value, ModRevision: int64(10 + i), CreateRevision: int64(10 + i), Version: 1}
	}
	return s
}

func objMeta(name, uid string, labels map[string]string, owner ...metav1.OwnerReference) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: "shop", UID: types.UID(uid), Labels: labels, OwnerReferences: owner,
		ResourceVersion: "7", CreationTimestamp: metav1.Unix(1e9, 0)}
}

func controller(kind, name, uid string) metav1.OwnerReference {
	yes := true
	return metav1.OwnerReference{APIVersion: "apps/v1", Kind: kind, Name: name, UID: types.UID(uid), Controller: &yes}
}

// shop is a namespace as a user and the controllers leave it.
func shop(t *testing.T) store {
	web := map[string]string{"app": "web"}
	pod := corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}
	return storeOf(t,
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop", UID: "ns"}},
		&appsv1.Deployment{ObjectMeta: objMeta("web", "d1", web), Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: web}, Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: web}, Spec: pod}}},
		&appsv1.ReplicaSet{ObjectMeta: objMeta("web-1", "r1", web, controller("Deployment", "web", "d1"))},
		&corev1.Pod{ObjectMeta: objMeta("web-1-a", "p1", web, controller("ReplicaSet", "web-1", "r1")), Spec: pod},
		&corev1.Pod{ObjectMeta: objMeta("lone", "p2", nil), Spec: pod},
		&corev1.Pod{ObjectMeta: objMeta("adopted", "p3", web, controller("ReplicaSet", "elsewhere", "gone")), Spec: pod},
		&appsv1.StatefulSet{ObjectMeta: objMeta("db", "s1", nil), Spec: appsv1.StatefulSetSpec{
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"}}}}},
		&corev1.PersistentVolumeClaim{ObjectMeta: objMeta("data-db-0", "c1", nil)},
		&corev1.PersistentVolumeClaim{ObjectMeta: objMeta("uploads", "c2", web), Spec: corev1.PersistentVolumeClaimSpec{VolumeName: "pv-gone"}},
		&corev1.ConfigMap{ObjectMeta: objMeta("kube-root-ca.crt", "m1", nil)},
		&corev1.ServiceAccount{ObjectMeta: objMeta("default", "a1", nil)},
		&corev1.ServiceAccount{ObjectMeta: objMeta("builder", "a2", nil)},
		&corev1.Secret{ObjectMeta: objMeta("builder-token", "t1", nil), Type: corev1.SecretTypeServiceAccountToken},
		&corev1.Secret{ObjectMeta: objMeta("db", "t2", nil), Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"password": []byte("hunter2")}},
		&corev1.Service{ObjectMeta: objMeta("web", "v1", web), Spec: corev1.ServiceSpec{Selector: web, ClusterIP: "10.0.0.9", ClusterIPs: []string{"10.0.0.9"}}},
		&corev1.Endpoints{ObjectMeta: objMeta("web", "e1", web)},
		&corev1.Service{ObjectMeta: objMeta("external", "v2", nil)},
		&corev1.Endpoints{ObjectMeta: objMeta("external", "e2", nil)},
		&corev1.Event{ObjectMeta: objMeta("web.1", "ev", nil)},
	)
}

func names(objs []Restored) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.Kind+"/"+o.Name)
	}
	return out
}

// TestNamespaceKeepsWhatTheUserWrote restores a namespace: what a user
// wrote comes in apply order, and what the controllers make again is left
// out, each with its controller named.
func TestNamespaceKeepsWhatTheUserWrote(t *testing.T) {
	m, err := Namespace(context.Background(), shop(t), "shop", storeRev, Options{ShowSecrets: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Namespace/shop", "ServiceAccount/builder", "Secret/db", "PersistentVolumeClaim/uploads",
		"Service/external", "Service/web", "Deployment/web", "Pod/adopted", "Pod/lone", "StatefulSet/db", "Endpoints/external"}
	if got := names(m.Objects); !slices.Equal(got, want) {
		t.Errorf("restored %q, want %q", got, want)
	}
	why := map[string]string{}
	for _, l := range m.LeftOut {
		why[l.Kind+"/"+l.Name] = l.Why
	}
	for obj, reason := range map[string]string{
		"ReplicaSet/web-1":                "a ReplicaSet of Deployment web",
		"Pod/web-1-a":                     "a Pod of ReplicaSet web-1",
		"PersistentVolumeClaim/data-db-0": "of StatefulSet db (volumeClaimTemplate data)",
		"ConfigMap/kube-root-ca.crt":      "root CA",
		"ServiceAccount/default":          "default ServiceAccount",
		"Secret/builder-token":            "service-account token",
		"Endpoints/web":                   "Service with a selector",
		"Event/web.1":                     "an Event",
	} {
		if !strings.Contains(why[obj], reason) {
			t.Errorf("%s left out for %q, want %q", obj, why[obj], reason)
		}
	}
	if len(m.LeftOut) != 8 {
		t.Errorf("left out %d, want 8: %v", len(m.LeftOut), m.LeftOut)
	}
	for _, o := range m.Objects {
		switch o.Kind + "/" + o.Name {
		case "Pod/adopted":
			if len(o.Dropped) != 1 || !strings.Contains(o.Dropped[0], "ownerReference to ReplicaSet elsewhere") {
				t.Errorf("the Pod whose controller is gone dropped %q, want its ownerReference", o.Dropped)
			}
		case "Service/web":
			if len(o.Dropped) != 1 || !strings.Contains(o.Dropped[0], "10.0.0.9") {
				t.Errorf("the Service dropped %q, want its cluster IP", o.Dropped)
			}
		case "PersistentVolumeClaim/uploads":
			if len(o.Dropped) != 1 || !strings.Contains(o.Dropped[0], "pv-gone") {
				t.Errorf("the claim dropped %q, want the volume that is gone", o.Dropped)
			}
		}
	}
	for _, field := range []string{"ownerReferences", "resourceVersion", "uid", "creationTimestamp", "10.0.0.9", "pv-gone"} {
		if strings.Contains(string(m.YAML), field) {
			t.Errorf("the manifest holds %q:\n%s", field, m.YAML)
		}
	}
}

// TestNamespaceLeavesSecretsOutUnlessShown: without ShowSecrets a Secret
// is listed as left out and nothing of it is in the manifest; a selector
// keeps what it matches, and the Namespace, there still, stays out.
func TestNamespaceLeavesSecretsOutUnlessShown(t *testing.T) {
	m, err := Namespace(context.Background(), shop(t), "shop", storeRev, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(names(m.Objects), "Secret/db") || strings.Contains(string(m.YAML), "aHVudGVyMg") {
		t.Errorf("the Secret is in the manifest:\n%s", m.YAML)
	}
	if !slices.ContainsFunc(m.LeftOut, func(l LeftOut) bool { return l.Name == "db" && strings.Contains(l.Why, "--show-secrets") }) {
		t.Errorf("the Secret is not listed as left out: %v", m.LeftOut)
	}
	m, err = Namespace(context.Background(), shop(t), "shop", storeRev, Options{Selector: "app=web"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"PersistentVolumeClaim/uploads", "Service/web", "Deployment/web", "Pod/adopted"}
	if got := names(m.Objects); !slices.Equal(got, want) {
		t.Errorf("with -l app=web restored %q, want %q", got, want)
	}
}

package etcdviewtest

import (
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NodeLease is the Lease of node in kube-node-lease, created at created and
// renewed at renew: the kubelet's heartbeat, whose renew times tell when
// the revisions around it were written.
func NodeLease(node string, created, renew time.Time) *coordinationv1.Lease {
	rt := metav1.NewMicroTime(renew)
	return &coordinationv1.Lease{
		TypeMeta:   metav1.TypeMeta{APIVersion: "coordination.k8s.io/v1", Kind: "Lease"},
		ObjectMeta: metav1.ObjectMeta{Name: node, Namespace: "kube-node-lease", CreationTimestamp: metav1.NewTime(created)},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &node, RenewTime: &rt},
	}
}

// ConfigMap is a ConfigMap named name in default that records no time (no
// creationTimestamp, no managedFields), its data k: name.
func ConfigMap(name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Data:       map[string]string{"k": name},
	}
}

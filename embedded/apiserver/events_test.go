package apiserver

import (
	"context"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestEventsLiveOnAnHourLease: kube-apiserver stores events with a lease of
// --event-ttl (1h), plus the lease manager's reuse allowance (5% of the TTL,
// at most 60s), so that etcd drops them by itself.
func TestEventsLiveOnAnHourLease(t *testing.T) {
	ctx := context.Background()
	cs := adminClient(t)
	ns := createNamespace(t, cs, "events")
	_, err := cs.CoreV1().Events(ns).Create(ctx, &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "e"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "p", Namespace: ns}, Reason: "Tested",
	}, metav1.CreateOptions{})
	check(t, err)
	etcd := etcdClient(t)
	resp, err := etcd.Get(ctx, "/registry/events/"+ns+"/e")
	check(t, err)
	if len(resp.Kvs) != 1 || resp.Kvs[0].Lease == 0 {
		t.Fatalf("event stored without a lease: %+v", resp.Kvs)
	}
	ttl, err := etcd.TimeToLive(ctx, clientv3.LeaseID(resp.Kvs[0].Lease))
	check(t, err)
	if ttl.GrantedTTL < 3600 || ttl.GrantedTTL > 3660 {
		t.Errorf("event lease granted for %ds, want 1h (3600-3660s)", ttl.GrantedTTL)
	}
	cm, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}, metav1.CreateOptions{})
	check(t, err)
	resp, err = etcd.Get(ctx, "/registry/configmaps/"+ns+"/"+cm.Name)
	check(t, err)
	if resp.Kvs[0].Lease != 0 {
		t.Errorf("a configmap is stored with lease %x", resp.Kvs[0].Lease)
	}
}

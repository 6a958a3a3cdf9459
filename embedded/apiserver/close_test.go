package apiserver

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestCloseLeavesNoGoroutines starts a server, uses it (including a watch
// left open and a subscription), closes it and finds none of its
// goroutines left. Process-wide ones that k8s.io libraries start once are
// already running for the shared server and so ignored.
func TestCloseLeavesNoGoroutines(t *testing.T) {
	time.Sleep(2 * time.Second) // let the shared server finish starting its controllers
	ignore := []goleak.Option{
		goleak.IgnoreCurrent(),
		// Keep-alive connections between the etcd members (rafthttp)
		// come and go with Raft traffic; they are the cluster's.
		goleak.IgnoreAnyFunction("go.etcd.io/etcd/client/pkg/v3/transport.timeoutConn.Read"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreAnyFunction("net/http.(*connReader).abortPendingRead"),
	}
	ctx := context.Background()
	s, err := Start(ctx, Options{Etcd: etcdConfig(), Prefix: "/leak-test"})
	check(t, err)
	traces, cancel := s.Writes().Subscribe(256)
	defer cancel() // after Close ended it: must not panic
	cs := clientFor(t, s, s.AdminToken())
	_, err = cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}, metav1.CreateOptions{})
	check(t, err)
	w, err := cs.CoreV1().ConfigMaps("default").Watch(ctx, metav1.ListOptions{})
	check(t, err)
	<-traces
	start := time.Now()
	check(t, s.Close())
	t.Logf("Close took %v", time.Since(start))
	w.Stop()
	for range traces { // drain what was published before Close
	}
	if late, _ := s.Writes().Subscribe(256); late != nil {
		if _, open := <-late; open {
			t.Error("a subscription made after Close is open")
		}
	}
	// HTTP/2 client connections of the clients above close asynchronously.
	var leaked error
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if leaked = goleak.Find(ignore...); leaked == nil {
			return
		}
	}
	t.Error(leaked)
}

package apiserver

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestSlowClientsStallNobody opens a watch whose body is never read and a
// write-trace subscription that is never drained, then checks that 300
// writes by another client each complete promptly.
func TestSlowClientsStallNobody(t *testing.T) {
	ctx := context.Background()
	cs := adminClient(t)
	ns := createNamespace(t, cs, "slow")

	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(testServer.CAData())
	transport := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	defer transport.CloseIdleConnections()
	req, err := http.NewRequest(http.MethodGet, testServer.URL()+"/api/v1/namespaces/"+ns+"/configmaps?watch=true", nil)
	check(t, err)
	req.Header.Set("Authorization", "Bearer "+testServer.AdminToken())
	resp, err := transport.RoundTrip(req)
	check(t, err)
	defer resp.Body.Close() // never read

	_, cancel := testServer.Writes().Subscribe(256) // never drained
	defer cancel()

	big := map[string]string{"k": string(make([]byte, 16<<10))}
	for i := range 300 {
		start := time.Now()
		_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("c", i)}, Data: big}, metav1.CreateOptions{})
		check(t, err)
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("create %d took %v with a stalled watcher and subscriber", i, d)
		}
	}
}

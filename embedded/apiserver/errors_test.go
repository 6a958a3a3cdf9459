package apiserver

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// rawRequest sends one request with a bearer token ("" for none) and
// decodes the Status the server answers with.
func rawRequest(t *testing.T, s *Server, token, method, path, contentType, body string) (int, metav1.Status) {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(s.CAData())
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	defer client.CloseIdleConnections()
	req, err := http.NewRequest(method, s.URL()+path, strings.NewReader(body))
	check(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	check(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	check(t, err)
	var st metav1.Status
	_ = json.Unmarshal(b, &st)
	return resp.StatusCode, st
}

func TestBadInputGetsStatusAndLeavesEtcdAlone(t *testing.T) {
	ns := createNamespace(t, adminClient(t), "bad")
	etcd := etcdClient(t)
	configMaps := "/api/v1/namespaces/" + ns + "/configmaps"
	const jsonType, yamlType = "application/json", "application/yaml"
	tests := []struct {
		name, path, contentType, body string
		code                          int
		reason                        metav1.StatusReason
	}{
		{"malformed JSON", configMaps, jsonType, `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"`, 400, metav1.StatusReasonBadRequest},
		{"malformed YAML", configMaps, yamlType, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [x\n", 400, metav1.StatusReasonBadRequest},
		{"unknown kind", configMaps, jsonType, `{"apiVersion": "v1", "kind": "Widget", "metadata": {"name": "x"}}`, 400, metav1.StatusReasonBadRequest},
		{"wrong apiVersion", configMaps, jsonType, `{"apiVersion": "apps/v1", "kind": "ConfigMap", "metadata": {"name": "x"}}`, 400, metav1.StatusReasonBadRequest},
		{"unknown field", configMaps + "?fieldValidation=Strict", jsonType, `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "dta": {}}`, 400, metav1.StatusReasonBadRequest},
		{"invalid name", configMaps, jsonType, `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "Not_A_Name"}}`, 422, metav1.StatusReasonInvalid},
		{"body over 3 MiB", configMaps, jsonType, `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "big"}, "data": {"k": "` + strings.Repeat("x", MaxRequestBodyBytes) + `"}}`, 413, metav1.StatusReasonRequestEntityTooLarge},
		{"missing namespace", "/api/v1/namespaces/no-such-namespace/configmaps", jsonType, `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}`, 404, metav1.StatusReasonNotFound},
		{"namespace mismatch", configMaps, jsonType, `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "namespace": "other"}}`, 400, metav1.StatusReasonBadRequest},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := etcdRevision(t, etcd)
			code, st := rawRequest(t, testServer, testServer.AdminToken(), http.MethodPost, tc.path, tc.contentType, tc.body)
			if code != tc.code || st.Code != int32(tc.code) || st.Reason != tc.reason || st.Kind != "Status" {
				t.Errorf("got HTTP %d, Status %d %q %q; want %d %q", code, st.Code, st.Reason, st.Message, tc.code, tc.reason)
			}
			if tc.reason == metav1.StatusReasonInvalid && (st.Details == nil || len(st.Details.Causes) == 0) {
				t.Errorf("Invalid without causes: %+v", st)
			}
			if after := etcdRevision(t, etcd); after != before {
				t.Errorf("etcd revision moved from %d to %d", before, after)
			}
		})
	}
}

func TestStatusErrors(t *testing.T) {
	ctx := context.Background()
	cs := adminClient(t)
	ns := createNamespace(t, cs, "status")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "one"}}
	created, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
	check(t, err)

	_, err = cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
	expectStatus(t, "create twice", err, 409, metav1.StatusReasonAlreadyExists)
	_, err = cs.CoreV1().ConfigMaps(ns).Get(ctx, "none", metav1.GetOptions{})
	expectStatus(t, "get missing", err, 404, metav1.StatusReasonNotFound)

	stale := created.DeepCopy()
	created.Data = map[string]string{"a": "1"}
	_, err = cs.CoreV1().ConfigMaps(ns).Update(ctx, created, metav1.UpdateOptions{})
	check(t, err)
	stale.Data = map[string]string{"a": "2"}
	_, err = cs.CoreV1().ConfigMaps(ns).Update(ctx, stale, metav1.UpdateOptions{})
	expectStatus(t, "update with a stale resourceVersion", err, 409, metav1.StatusReasonConflict)

	precondition := metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &stale.ResourceVersion}}
	err = cs.CoreV1().ConfigMaps(ns).Delete(ctx, "one", precondition)
	expectStatus(t, "delete with a stale precondition", err, 409, metav1.StatusReasonConflict)

	_, err = clientFor(t, testServer, testServer.ViewerToken()).CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "two"}}, metav1.CreateOptions{})
	expectStatus(t, "viewer create", err, 403, metav1.StatusReasonForbidden)
	_, err = clientFor(t, testServer, "not-a-token").CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	expectStatus(t, "unknown token", err, 401, metav1.StatusReasonUnauthorized)
	code, st := rawRequest(t, testServer, "", http.MethodGet, "/api/v1/namespaces", "", "")
	if code != 401 || st.Reason != metav1.StatusReasonUnauthorized {
		t.Errorf("no token: %d %q, want 401 Unauthorized", code, st.Reason)
	}
}

// TestExpiredAfterCompaction compacts etcd and asks for events (which,
// as in kube-apiserver, have no watch cache) at a revision before it: 410
// Expired for a list and for a watch.
func TestExpiredAfterCompaction(t *testing.T) {
	ctx := context.Background()
	cs := adminClient(t)
	ns := createNamespace(t, cs, "expired")
	events := cs.CoreV1().Events(ns)
	newEvent := func(name string) *corev1.Event {
		return &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: name}, InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "p", Namespace: ns}, Reason: "R"}
	}
	old, err := events.Create(ctx, newEvent("e1"), metav1.CreateOptions{})
	check(t, err)
	for _, name := range []string{"e2", "e3"} {
		_, err = events.Create(ctx, newEvent(name), metav1.CreateOptions{})
		check(t, err)
	}
	etcd := etcdClient(t)
	_, err = etcd.Compact(ctx, etcdRevision(t, etcd))
	check(t, err)

	_, err = events.List(ctx, metav1.ListOptions{ResourceVersion: old.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchExact})
	expectStatus(t, "list at a compacted revision", err, 410, metav1.StatusReasonExpired)

	w, err := events.Watch(ctx, metav1.ListOptions{ResourceVersion: old.ResourceVersion})
	if err != nil {
		expectStatus(t, "watch from a compacted revision", err, 410, metav1.StatusReasonExpired)
		return
	}
	defer w.Stop()
	select {
	case ev := <-w.ResultChan():
		st, ok := ev.Object.(*metav1.Status)
		if ev.Type != watch.Error || !ok || st.Code != 410 || st.Reason != metav1.StatusReasonExpired {
			t.Errorf("watch from a compacted revision: %s %#v, want an Error event with 410 Expired", ev.Type, ev.Object)
		}
	case <-time.After(10 * time.Second):
		t.Error("watch from a compacted revision: no event in 10s")
	}
}

func expectStatus(t *testing.T, what string, err error, code int32, reason metav1.StatusReason) {
	t.Helper()
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		t.Errorf("%s: %v, want a Status error %d %s", what, err, code, reason)
		return
	}
	if s := st.Status(); s.Code != code || s.Reason != reason {
		t.Errorf("%s: Status %d %q (%s), want %d %s", what, s.Code, s.Reason, s.Message, code, reason)
	}
}

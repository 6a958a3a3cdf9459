package apiserver

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestWriteTraceFollowsTheWritePath(t *testing.T) {
	ctx := context.Background()
	cs := adminClient(t)
	ns := createNamespace(t, cs, "trace")
	traces, cancel := testServer.Writes().Subscribe(256)
	defer cancel()
	etcd := etcdClient(t)

	cm, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "traced"}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{})
	check(t, err)
	create := nextTrace(t, traces, "create", "traced")
	wantStages(t, create, StageAuthn, StageAuthz, StageMutate, StageValidate, StageEncode, StageEtcd)
	resp, err := etcd.Get(ctx, "/registry/configmaps/"+ns+"/traced")
	check(t, err)
	if create.Key != "/registry/configmaps/"+ns+"/traced" || create.Resource != "configmaps" || create.Namespace != ns || create.User != "admin" || create.Code != 201 {
		t.Errorf("create trace: %+v", create)
	}
	if create.Revision != resp.Kvs[0].ModRevision || create.StoredBytes != len(resp.Kvs[0].Value) || create.EncodedBytes != create.StoredBytes {
		t.Errorf("create trace: revision %d, %d/%d bytes; etcd has revision %d, %d bytes", create.Revision, create.EncodedBytes, create.StoredBytes, resp.Kvs[0].ModRevision, len(resp.Kvs[0].Value))
	}

	cm.Data["k"] = "w"
	_, err = cs.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{})
	check(t, err)
	wantStages(t, nextTrace(t, traces, "update", "traced"), StageAuthn, StageAuthz, StageMutate, StageValidate, StageEncode, StageEtcd)

	check(t, cs.CoreV1().ConfigMaps(ns).Delete(ctx, "traced", metav1.DeleteOptions{}))
	del := nextTrace(t, traces, "delete", "traced")
	wantStages(t, del, StageAuthn, StageAuthz, StageMutate, StageEtcd) // NamespaceLifecycle admits deletes too
	if del.Revision == 0 || del.Code != 200 {
		t.Errorf("delete trace: %+v", del)
	}

	_, err = clientFor(t, testServer, testServer.ViewerToken()).CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "refused"}}, metav1.CreateOptions{})
	if err == nil {
		t.Fatal("viewer create succeeded")
	}
	refused := nextTrace(t, traces, "create", "")
	wantStages(t, refused, StageAuthn, StageAuthz)
	if refused.Code != 403 || refused.Key != "" || refused.Revision != 0 {
		t.Errorf("refused trace: %+v", refused)
	}
}

// nextTrace waits for the next trace of verb on an object named name,
// skipping others (the server's own writes, other tests').
func nextTrace(t *testing.T, traces <-chan WriteTrace, verb, name string) WriteTrace {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case tr := <-traces:
			if tr.Verb == verb && tr.Name == name {
				return tr
			}
		case <-timeout:
			t.Fatalf("no %s trace for %q in 10s", verb, name)
		}
	}
}

func wantStages(t *testing.T, tr WriteTrace, names ...string) {
	t.Helper()
	var got []string
	for _, s := range tr.Stages {
		got = append(got, s.Name)
		if s.Duration < 0 {
			t.Errorf("%s stage %s took %v", tr.Verb, s.Name, s.Duration)
		}
	}
	if !slices.Equal(got, names) {
		t.Errorf("%s stages %v, want %v", tr.Verb, got, names)
	}
}

package apiserver

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	serverstorage "k8s.io/apiserver/pkg/server/storage"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"sigs.k8s.io/yaml"
)

// TestStoredBytesAreKubeAPIServers creates one object of each resource
// through the server, reads the raw value from etcd under kube-apiserver's
// key for it, and compares it byte for byte with what k8s.io/apiserver's
// storage codec (protobuf, the resource's storage version, resourceVersion
// cleared) makes of the object as the server returns it.
func TestStoredBytesAreKubeAPIServers(t *testing.T) {
	ctx := context.Background()
	ns := createNamespace(t, adminClient(t), "fidelity")
	dyn, err := dynamic.NewForConfig(testServer.RESTConfig(testServer.AdminToken()))
	check(t, err)
	etcd := etcdClient(t)

	podSpec := `{containers: [{name: c, image: nginx}]}`
	template := `{metadata: {labels: {app: a}}, spec: ` + podSpec + `}`
	tests := []struct {
		resource string // group/version/resource
		key      string // after /registry/, with NS for the namespace
		manifest string
	}{
		{"/v1/pods", "pods/NS/p", `{kind: Pod, apiVersion: v1, metadata: {name: p}, spec: ` + podSpec + `}`},
		{"/v1/nodes", "minions/fidelity-node", `{kind: Node, apiVersion: v1, metadata: {name: fidelity-node}}`},
		{"/v1/services", "services/specs/NS/s", `{kind: Service, apiVersion: v1, metadata: {name: s}, spec: {ports: [{port: 80}]}}`},
		{"/v1/endpoints", "services/endpoints/NS/s", `{kind: Endpoints, apiVersion: v1, metadata: {name: s}, subsets: [{addresses: [{ip: 10.1.2.3}], ports: [{port: 80}]}]}`},
		{"/v1/configmaps", "configmaps/NS/c", `{kind: ConfigMap, apiVersion: v1, metadata: {name: c}, data: {k: v}}`},
		{"/v1/secrets", "secrets/NS/sec", `{kind: Secret, apiVersion: v1, metadata: {name: sec}, stringData: {k: v}}`},
		{"/v1/serviceaccounts", "serviceaccounts/NS/sa", `{kind: ServiceAccount, apiVersion: v1, metadata: {name: sa}}`},
		{"/v1/events", "events/NS/e", `{kind: Event, apiVersion: v1, metadata: {name: e}, involvedObject: {kind: Pod, name: p, namespace: NS}, reason: R, message: m}`},
		{"/v1/persistentvolumes", "persistentvolumes/fidelity-pv", `{kind: PersistentVolume, apiVersion: v1, metadata: {name: fidelity-pv}, spec: {capacity: {storage: 1Gi}, accessModes: [ReadWriteOnce], hostPath: {path: /tmp}}}`},
		{"/v1/persistentvolumeclaims", "persistentvolumeclaims/NS/pvc", `{kind: PersistentVolumeClaim, apiVersion: v1, metadata: {name: pvc}, spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}}`},
		{"apps/v1/deployments", "deployments/NS/d", `{kind: Deployment, apiVersion: apps/v1, metadata: {name: d}, spec: {selector: {matchLabels: {app: a}}, template: ` + template + `}}`},
		{"apps/v1/replicasets", "replicasets/NS/rs", `{kind: ReplicaSet, apiVersion: apps/v1, metadata: {name: rs}, spec: {selector: {matchLabels: {app: a}}, template: ` + template + `}}`},
		{"apps/v1/daemonsets", "daemonsets/NS/ds", `{kind: DaemonSet, apiVersion: apps/v1, metadata: {name: ds}, spec: {selector: {matchLabels: {app: a}}, template: ` + template + `}}`},
		{"apps/v1/statefulsets", "statefulsets/NS/ss", `{kind: StatefulSet, apiVersion: apps/v1, metadata: {name: ss}, spec: {selector: {matchLabels: {app: a}}, template: ` + template + `}}`},
		{"batch/v1/jobs", "jobs/NS/j", `{kind: Job, apiVersion: batch/v1, metadata: {name: j}, spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}}`},
		{"coordination.k8s.io/v1/leases", "leases/NS/l", `{kind: Lease, apiVersion: coordination.k8s.io/v1, metadata: {name: l}, spec: {holderIdentity: me}}`},
		{"discovery.k8s.io/v1/endpointslices", "endpointslices/NS/es", `{kind: EndpointSlice, apiVersion: discovery.k8s.io/v1, metadata: {name: es}, addressType: IPv4, endpoints: [{addresses: [10.1.2.3]}]}`},
		{"storage.k8s.io/v1/storageclasses", "storageclasses/fidelity-sc", `{kind: StorageClass, apiVersion: storage.k8s.io/v1, metadata: {name: fidelity-sc}, provisioner: example.com/x}`},
		{"rbac.authorization.k8s.io/v1/roles", "roles/NS/r", `{kind: Role, apiVersion: rbac.authorization.k8s.io/v1, metadata: {name: r}, rules: [{apiGroups: [""], resources: [pods], verbs: [get]}]}`},
		{"rbac.authorization.k8s.io/v1/rolebindings", "rolebindings/NS/rb", `{kind: RoleBinding, apiVersion: rbac.authorization.k8s.io/v1, metadata: {name: rb}, roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: r}, subjects: [{kind: User, name: u}]}`},
		{"rbac.authorization.k8s.io/v1/clusterroles", "clusterroles/fidelity-cr", `{kind: ClusterRole, apiVersion: rbac.authorization.k8s.io/v1, metadata: {name: fidelity-cr}, rules: [{apiGroups: [""], resources: [pods], verbs: [get]}]}`},
		{"rbac.authorization.k8s.io/v1/clusterrolebindings", "clusterrolebindings/fidelity-crb", `{kind: ClusterRoleBinding, apiVersion: rbac.authorization.k8s.io/v1, metadata: {name: fidelity-crb}, roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: fidelity-cr}, subjects: [{kind: User, name: u}]}`},
		{"/v1/namespaces", "namespaces/NS", ``},
	}
	for _, tc := range tests {
		t.Run(tc.resource, func(t *testing.T) {
			parts := strings.Split(tc.resource, "/")
			gvr := schema.GroupVersionResource{Group: parts[0], Version: parts[1], Resource: parts[2]}
			key := "/registry/" + strings.ReplaceAll(tc.key, "NS", ns)
			var obj *unstructured.Unstructured
			if tc.manifest == "" { // the test's namespace itself
				obj, err = dyn.Resource(gvr).Get(ctx, ns, metav1.GetOptions{})
				check(t, err)
			} else {
				u := &unstructured.Unstructured{}
				if err := yaml.Unmarshal([]byte(strings.ReplaceAll(tc.manifest, "NS", ns)), &u.Object); err != nil {
					t.Fatal(err)
				}
				var ri dynamic.ResourceInterface = dyn.Resource(gvr)
				if strings.Contains(tc.key, "/NS/") {
					ri = dyn.Resource(gvr).Namespace(ns)
				} else {
					t.Cleanup(func() { _ = ri.Delete(ctx, u.GetName(), metav1.DeleteOptions{}) })
				}
				_, err := ri.Create(ctx, u, metav1.CreateOptions{})
				check(t, err)
				obj, err = ri.Get(ctx, u.GetName(), metav1.GetOptions{})
				check(t, err)
			}
			resp, err := etcd.Get(ctx, key)
			check(t, err)
			if len(resp.Kvs) != 1 {
				t.Fatalf("no value under %s", key)
			}
			if !bytes.HasPrefix(resp.Kvs[0].Value, []byte("k8s\x00")) {
				t.Errorf("value under %s is not a protobuf envelope: %q", key, resp.Kvs[0].Value[:min(16, len(resp.Kvs[0].Value))])
			}
			raw := resp.Kvs[0].Value
			typed := typedFrom(t, obj)
			if want := storageEncode(t, typed); bytes.Equal(raw, want) {
				return
			}
			// Some kinds gain fields when read: the codec applies v1
			// defaults on decode, and a strategy may have cleared what
			// the create-time defaults set (PVC status.phase) or the
			// defaults may depend on what the strategy added later (Job
			// labels from its template). kube-apiserver stores and serves
			// these the same way. Then the stored value must still be
			// exactly the codec's encoding of itself, and be the served
			// object once defaulted.
			stored, _, err := scheme.Codecs.UniversalDeserializer().Decode(raw, nil, nil)
			check(t, err)
			if !bytes.Equal(raw, storageEncode(t, stored)) {
				t.Fatalf("%s: the stored value is not the storage codec's encoding of what it holds", key)
			}
			legacyscheme.Scheme.Default(stored)
			stored.(metav1.Object).SetResourceVersion(typed.(metav1.Object).GetResourceVersion())
			if !equality.Semantic.DeepEqual(stored, typed) {
				sj, _ := yaml.Marshal(stored)
				wj, _ := yaml.Marshal(typed)
				t.Errorf("%s: the stored object, defaulted, differs from the served one\nstored:\n%s\nserved:\n%s", key, sj, wj)
			}
			t.Logf("%s: served with read-time defaults", key)
		})
	}
}

func typedFrom(t *testing.T, u *unstructured.Unstructured) runtime.Object {
	t.Helper()
	typed, err := scheme.Scheme.New(u.GroupVersionKind())
	check(t, err)
	check(t, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, typed))
	typed.GetObjectKind().SetGroupVersionKind(u.GroupVersionKind())
	return typed
}

// storageEncode encodes obj as k8s.io/apiserver's storage codec does for a
// resource stored at obj's own version: protobuf, resourceVersion cleared
// (etcd3's APIObjectVersioner.PrepareObjectForStorage).
func storageEncode(t *testing.T, obj runtime.Object) []byte {
	t.Helper()
	gvk := obj.GetObjectKind().GroupVersionKind()
	typed := obj.DeepCopyObject()
	typed.(metav1.Object).SetResourceVersion("")
	codec, _, err := serverstorage.NewStorageCodec(serverstorage.StorageCodecConfig{
		StorageMediaType:  StorageMediaType,
		StorageSerializer: scheme.Codecs,
		StorageVersion:    gvk.GroupVersion(),
		MemoryVersion:     gvk.GroupVersion(),
	})
	check(t, err)
	b, err := runtime.Encode(codec, typed)
	check(t, err)
	return b
}

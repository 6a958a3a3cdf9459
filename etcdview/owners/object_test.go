package owners

import (
	"bytes"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/decode"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
)

// storedPod is a Pod encoded as kube-apiserver writes it to etcd.
func storedPod(t testing.TB, pod *corev1.Pod) []byte {
	t.Helper()
	pod.APIVersion, pod.Kind = "v1", "Pod"
	var buf bytes.Buffer
	enc := scheme.Codecs.EncoderForVersion(protobuf.NewSerializer(scheme.Scheme, scheme.Scheme), corev1.SchemeGroupVersion)
	if err := enc.Encode(pod, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestBuilderKeepsTheMetadataOfStoredValues(t *testing.T) {
	deleted := metav1.NewTime(time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC))
	pod := storedPod(t, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Name: "web-1", Namespace: "default", UID: "pod-uid",
		CreationTimestamp: metav1.NewTime(created), DeletionTimestamp: &deleted,
		Finalizers: []string{"example.com/keep"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web",
			UID: types.UID("rs-uid"), Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
	}})
	crd := `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"carts.shop.example.com","uid":"crd-uid"},
		"spec":{"group":"shop.example.com","scope":"Namespaced","names":{"kind":"Cart","plural":"carts"}}}`
	// A custom resource owned by a Cart no object is: its kind is known
	// from the definition alone.
	cart := `{"apiVersion":"shop.example.com/v1","kind":"Cart","metadata":{"name":"c1","namespace":"shop","uid":"cart-uid",
		"ownerReferences":[{"apiVersion":"shop.example.com/v1","kind":"Cart","name":"gone","uid":"gone-uid"}]}}`
	// Fields of the wrong type, as someone less trusted could write them.
	hostile := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"h","namespace":"default","uid":"h-uid",
		"ownerReferences":"not a list","finalizers":[1,2],"deletionTimestamp":7,"creationTimestamp":{"x":1}}}`

	var b Builder
	values := []struct {
		key   string
		value []byte
		kept  bool
	}{
		{"/registry/pods/default/web-1", pod, true},
		{"/registry/apiextensions.k8s.io/customresourcedefinitions/carts.shop.example.com", []byte(crd), true},
		{"/registry/shop.example.com/carts/shop/c1", []byte(cart), true},
		{"/registry/configmaps/default/h", []byte(hostile), true},
		{"/registry/ranges/serviceips", []byte("\xff\xfe\x00binary"), false},
		{"/registry/configmaps/default/text", []byte("plain text"), false},
	}
	for i, v := range values {
		if got := b.Add(v.key, v.value, int64(100+i)); got != v.kept {
			t.Errorf("Add(%s) = %v, want %v", v.key, got, v.kept)
		}
	}
	g := b.Graph()
	if u := g.Unreadable(); u[decode.FormatBinary] != 1 || u[decode.FormatText] != 1 || len(u) != 2 {
		t.Errorf("unreadable = %v, want one binary and one text", u)
	}

	id, ok := g.Lookup("/registry/pods/default/web-1")
	if !ok {
		t.Fatal("the pod is not in the graph")
	}
	got := g.Object(id)
	want := Object{Key: "/registry/pods/default/web-1", Revision: 100, UID: "pod-uid", APIVersion: "v1", Kind: "Pod",
		Namespace: "default", Name: "web-1", Created: created, Deleted: deleted.Time, Finalizers: []string{"example.com/keep"},
		Owners: []Ref{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web", UID: "rs-uid", Controller: true, BlockOwnerDeletion: true}}}
	if !equalObjects(got, want) {
		t.Errorf("pod kept as\n%+v\nwant\n%+v", got, want)
	}

	cartID, _ := g.Lookup("/registry/shop.example.com/carts/shop/c1")
	if l := g.Owners(cartID); len(l) != 1 || l[0].State != Absent || g.Object(l[0].Owner).Namespace != "shop" {
		t.Errorf("the cart's owner = %+v, want an absent Cart in namespace shop", l)
	}
	h, _ := g.Lookup("/registry/configmaps/default/h")
	if o := g.Object(h); o.Name != "h" || len(o.Owners) != 0 || o.Deleting() {
		t.Errorf("hostile metadata kept as %+v, want the name alone", o)
	}
}

func equalObjects(a, b Object) bool {
	if len(a.Finalizers) != len(b.Finalizers) || len(a.Owners) != len(b.Owners) {
		return false
	}
	for i := range a.Finalizers {
		if a.Finalizers[i] != b.Finalizers[i] {
			return false
		}
	}
	for i := range a.Owners {
		if a.Owners[i] != b.Owners[i] {
			return false
		}
	}
	a.Finalizers, a.Owners, b.Finalizers, b.Owners = nil, nil, nil, nil
	return a.Created.Equal(b.Created) && a.Deleted.Equal(b.Deleted) &&
		a.Key == b.Key && a.Revision == b.Revision && a.UID == b.UID && a.APIVersion == b.APIVersion &&
		a.Kind == b.Kind && a.Namespace == b.Namespace && a.Name == b.Name
}

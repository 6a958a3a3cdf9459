package table

import (
	"testing"

	"github.com/etcdscope/etcdscope/bench/fill"
	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/etcdview/etcdviewtest"
	corev1 "k8s.io/api/core/v1"
)

// BenchmarkPodRows is what `get pods -A` spends on each pod beside etcd:
// decode, conversion to the internal version, kube-apiserver's printer,
// over pages of 500 as the CLI makes them, on the bench fill's pods.
func BenchmarkPodRows(b *testing.B) {
	var values [][]byte
	for obj := range fill.NewPlan(100_000).Objects() {
		if pod, ok := obj.(*corev1.Pod); ok {
			v, err := etcdviewtest.Encode(pod)
			if err != nil {
				b.Fatal(err)
			}
			if values = append(values, v); len(values) == 500 {
				break
			}
		}
	}
	res, _ := decode.LookupResource("pods")
	r, err := Builtin(res)
	if err != nil {
		b.Fatal(err)
	}
	dec := decode.Decoder{JSONOnly: true}
	objs := make([]Object, 0, len(values))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		o := dec.DecodeAt("/registry/pods/team-000/web-0", values[i%len(values)], 7)
		obj, err := r.Object(o.Object, 7)
		if err != nil {
			b.Fatal(err)
		}
		if objs = append(objs, obj); len(objs) == cap(objs) {
			if _, _, err := r.Table(objs, true); err != nil {
				b.Fatal(err)
			}
			objs = objs[:0]
		}
		i++
	}
}

// BenchmarkCustomResourceRead is what a custom resource costs beside its
// decoding: kube-apiserver's read of it (coercion by the stored and the
// served version's schemas, defaults, conversion), as Object makes it.
func BenchmarkCustomResourceRead(b *testing.B) {
	r := gadgets(b)
	value := []byte(`{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"partial","namespace":"shop","uid":"6f1c","creationTimestamp":"2026-01-01T00:00:00Z","labels":{"app":"web"}},` +
		`"spec":{"size":5,"legacy":"x","limits":{"memory":"1Gi"},"ports":[{"name":"http"},{"name":"dns","protocol":"UDP"}]}}`)
	dec := decode.Decoder{JSONOnly: true}
	b.ReportAllocs()
	for b.Loop() {
		o := dec.DecodeAt("/registry/example.com/gadgets/shop/partial", value, 7)
		if _, err := r.Object(o.Object, 7); err != nil {
			b.Fatal(err)
		}
	}
}

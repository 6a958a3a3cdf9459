// Package etcdviewtest writes what kube-apiserver would write into an etcd,
// for tests: objects protobuf-encoded under their keys, and bulk keys. It
// needs a clientv3.KV only, so that tests which encode values do not link
// the etcd server; embedded/etcdtest starts and configures one.
package etcdviewtest

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/decode"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"
)

// Encode is obj as kube-apiserver stores it with its default
// --storage-media-type: "k8s\x00" and a runtime.Unknown holding the
// protobuf, apiVersion and kind of the scheme's version for obj's group.
func Encode(obj runtime.Object) ([]byte, error) {
	gvks, _, err := scheme.Scheme.ObjectKinds(obj)
	if err != nil {
		return nil, err
	}
	enc := scheme.Codecs.EncoderForVersion(protobuf.NewSerializer(scheme.Scheme, scheme.Scheme), gvks[0].GroupVersion())
	var buf bytes.Buffer
	if err := enc.Encode(obj, &buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Key is where kube-apiserver keeps obj under the default /registry prefix.
func Key(obj runtime.Object) (string, error) {
	gvks, _, err := scheme.Scheme.ObjectKinds(obj)
	if err != nil {
		return "", err
	}
	res, ok := decode.LookupResource(gvks[0].Kind)
	if !ok {
		return "", fmt.Errorf("no storage resource for kind %s", gvks[0].Kind)
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return "", err
	}
	if res.Singleton {
		return res.KeyPrefix("", ""), nil
	}
	return res.KeyPrefix("", m.GetNamespace()) + m.GetName(), nil
}

// Put writes each object under its key and returns the revision of the last
// write.
func Put(t testing.TB, kv clientv3.KV, objs ...runtime.Object) int64 {
	t.Helper()
	var rev int64
	for _, obj := range objs {
		key, err := Key(obj)
		if err != nil {
			t.Fatal(err)
		}
		val, err := Encode(obj)
		if err != nil {
			t.Fatalf("encode %s: %v", key, err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		resp, err := kv.Put(ctx, key, string(val))
		cancel()
		if err != nil {
			t.Fatalf("put %s: %v", key, err)
		}
		rev = resp.Header.Revision
	}
	return rev
}

// txnOps is how many writes PutKeys puts in one transaction: below etcd's
// default --max-txn-ops of 128.
const txnOps = 100

// PutKeys writes value under every key, many keys per transaction, and
// returns the revision of the last transaction. kine refuses transactions
// of many writes (InvalidArgument): there, each key is put on its own, a
// revision each, one after the other: kine v0.17.5 on SQLite loses some
// of the Puts it acknowledged when they come at once (3 of 10,000 from 8
// writers at a time, on a loaded machine).
func PutKeys(t testing.TB, kv clientv3.KV, keys []string, value string) int64 {
	t.Helper()
	var rev int64
	for len(keys) > 0 {
		n := min(txnOps, len(keys))
		ops := make([]clientv3.Op, n)
		for i, k := range keys[:n] {
			ops[i] = clientv3.OpPut(k, value)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		resp, err := kv.Txn(ctx).Then(ops...).Commit()
		cancel()
		if status.Code(err) == codes.InvalidArgument {
			return putEach(t, kv, keys, value)
		}
		if err != nil {
			t.Fatalf("put %d keys from %s: %v", n, keys[0], err)
		}
		rev = resp.Header.Revision
		keys = keys[n:]
	}
	return rev
}

// putEach puts value under every key, one Put each, and returns the
// revision of the last.
func putEach(t testing.TB, kv clientv3.KV, keys []string, value string) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var rev int64
	for _, k := range keys {
		resp, err := kv.Put(ctx, k, value)
		if err != nil {
			t.Fatalf("put %s: %v", k, err)
		}
		rev = resp.Header.Revision
	}
	return rev
}

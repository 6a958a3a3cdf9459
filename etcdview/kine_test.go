package etcdview

import (
	"errors"
	"slices"
	"testing"

	"github.com/etcdscope/etcdscope/embedded/etcdtest"
)

func TestConnectReadsKineOverAUnixSocket(t *testing.T) {
	k := etcdtest.StartKine(t, etcdtest.KineOptions{Socket: true})
	rev := put(t, k.Client(t), "/registry/configmaps/default/x", "y")
	l, err := Connect(testCtx(t), Config{Endpoints: []string{k.Endpoint}})
	if err != nil {
		t.Fatalf("connect to %s: %v", k.Endpoint, err)
	}
	defer l.Close()
	kv, err := l.Get(testCtx(t), "/registry/configmaps/default/x", 0)
	if err != nil || string(kv.Value) != "y" || kv.ModRevision != rev {
		t.Fatalf("get through %s: %+v, %v; want y at %d", k.Endpoint, kv, err, rev)
	}
	cl, err := l.Status(testCtx(t))
	if err != nil || !cl.Kine || len(cl.Members) != 1 || cl.Members[0].Err != nil {
		t.Errorf("status through %s: %+v, %v; want kine and its member", k.Endpoint, cl, err)
	}
}

func TestConnectToAMissingSocketNamesIt(t *testing.T) {
	ep := "unix://" + t.TempDir() + "/kine.sock"
	_, err := Connect(testCtx(t), Config{Endpoints: []string{ep}})
	if err == nil || err.Error() != "cannot reach etcd: "+ep+": connect: no such file or directory" {
		t.Errorf("connect to %s: %v", ep, err)
	}
}

func TestStatusOfKineSaysKineItsEmulatedVersionAndTheRevision(t *testing.T) {
	k := etcdtest.StartKine(t, etcdtest.KineOptions{})
	cli := k.Client(t)
	rev := put(t, cli, "/registry/x", "1")
	cl, err := NewLive(cli, 0).Status(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if !cl.Kine || cl.Server() != "kine (emulating etcd 3.6.11)" {
		t.Errorf("server %q (kine %v), want kine (emulating etcd 3.6.11)", cl.Server(), cl.Kine)
	}
	if cl.Revision != rev || len(cl.Members) != 1 || cl.Members[0].Revision != rev || cl.Members[0].Name != "kine" {
		t.Errorf("revision %d, members %+v; want revision %d and one member kine at it", cl.Revision, cl.Members, rev)
	}
	if cl.CompactRevision != 0 {
		t.Errorf("compaction %d of a kine that never compacted", cl.CompactRevision)
	}
	for range kineRetains + 5 {
		put(t, cli, "/registry/y", "x")
	}
	if _, err := cli.Compact(testCtx(t), rev+5); err != nil {
		t.Fatal(err)
	}
	if cl, err = NewLive(cli, 0).Status(testCtx(t)); err != nil || cl.CompactRevision != rev+5 {
		t.Errorf("after a compaction to %d: compaction %d, %v", rev+5, cl.CompactRevision, err)
	}
}

func TestHistoryThroughKineHasEveryVersionAndTheDeletion(t *testing.T) {
	k := etcdtest.StartKine(t, etcdtest.KineOptions{})
	cli := k.Client(t)
	const key = "/registry/configmaps/default/h"
	want := recreate(t, cli, key, []string{"a1", "a2", "a3"}, nil)
	put(t, cli, "/registry/other", "after")
	h, err := NewLive(cli, 0).History(testCtx(t), key, HistoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := steps(h); !slices.Equal(got, want) {
		t.Errorf("history %v, want %v", got, want)
	}
	var types []EventType
	for _, e := range h.Entries {
		types = append(types, e.Type())
	}
	if want := []EventType{Deleted, Modified, Modified, Added}; !slices.Equal(types, want) {
		t.Errorf("entries are %v, want %v", types, want)
	}
	// kine reports no versions: History numbers them from the creation.
	var versions []int64
	for _, e := range h.Entries {
		versions = append(versions, e.KV.Version)
	}
	if want := []int64{0, 3, 2, 1}; !slices.Equal(versions, want) {
		t.Errorf("versions %v, want %v", versions, want)
	}
	if _, err := NewLive(cli, 0).Get(testCtx(t), key, 0); !errors.Is(err, ErrNotFound) {
		t.Errorf("get of the deleted key: %v", err)
	}
}

func TestEndpointsDialAsClientv3DialsThem(t *testing.T) {
	for _, tc := range []struct {
		ep   string
		want address
	}{
		{"unix:///var/lib/rancher/k3s/server/kine.sock", address{"unix", "/var/lib/rancher/k3s/server/kine.sock", "kine.sock"}},
		{"unixs:///run/etcd/etcd.sock", address{"unix", "/run/etcd/etcd.sock", "etcd.sock"}},
		{"unix://kine.sock", address{"unix", "kine.sock", "kine.sock"}},
		{"unix:kine.sock", address{"unix", "kine.sock", "kine.sock"}},
		{"https://10.0.0.1:2379", address{"tcp", "10.0.0.1:2379", "10.0.0.1"}},
		{"etcd-0:2379", address{"tcp", "etcd-0:2379", "etcd-0"}},
	} {
		if got, err := dialAddress(tc.ep); err != nil || got != tc.want {
			t.Errorf("dialAddress(%q) = %+v, %v; want %+v", tc.ep, got, err, tc.want)
		}
	}
	if _, err := dialAddress("unix://"); err == nil || err.Error() != `endpoint "unix://" names no socket` {
		t.Errorf("an endpoint naming no socket: %v", err)
	}
}

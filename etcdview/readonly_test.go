package etcdview

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/etcdscope/etcdscope/embedded/etcdtest"
)

func TestClientInterfaceHasNoWritingMethod(t *testing.T) {
	// HashKV hashes a member's store: Maintenance's one read.
	readOnly := []string{"Endpoints", "Get", "GetStream", "HashKV", "MemberList", "RequestProgress", "Status", "Watch"}
	typ := reflect.TypeFor[Client]()
	for i := range typ.NumMethod() {
		if name := typ.Method(i).Name; !slices.Contains(readOnly, name) {
			t.Errorf("Client has %s, which is not one of the read-only calls %v", name, readOnly)
		}
	}
}

// TestEverySourceMethodWorksForAReadOnlyUser reads etcd as a user whose
// role may only read /registry/, and kine, which has no users, without one.
func TestEverySourceMethodWorksForAReadOnlyUser(t *testing.T) {
	etcdtest.EachServer(t, func(t *testing.T, e etcdtest.Etcd) {
		cli := e.Client
		kine := e.Version == "kine"
		put(t, cli, "/registry/pods/default/a", "1")
		put(t, cli, "/registry/pods/default/a", "2")
		compacted := put(t, cli, compactRevKey, "3")
		compact(t, cli, compacted)
		user, password, root := etcdtest.ReadOnlyUser, etcdtest.ReadOnlyPassword, cli
		if kine {
			_, err := Connect(testCtx(t), liveConfig(e, user, password))
			if want := "it serves no users (unknown service etcdserverpb.Auth); kine, for one, has none: connect without --user"; err == nil || !strings.HasSuffix(err.Error(), want) {
				t.Errorf("connect to kine as %s: %v, want it to end %q", user, err, want)
			}
			user, password = "", ""
		} else {
			etcdtest.EnableReadOnlyUser(t, cli)
			var err error
			if root, err = Dial(testCtx(t), liveConfig(e, "root", "rootpw")); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { root.Close() })
		}

		ctx := testCtx(t)
		src, err := Connect(ctx, liveConfig(e, user, password))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { src.Close() })
		wctx, cancel := context.WithCancel(ctx)
		defer cancel()
		wc := src.Watch(wctx, "/registry/", WatchOptions{})

		// kine writes /registry/health itself.
		wantChildren := map[bool]int{false: 1, true: 2}[kine]
		if lvl, err := src.Children(ctx, "/registry/", 0); err != nil || len(lvl.Children) != wantChildren {
			t.Errorf("Children: %+v, %v; want %d", lvl, err, wantChildren)
		}
		if p, err := src.List(ctx, "/registry/pods/", 0, PageToken{}); err != nil || len(p.Keys) != 1 {
			t.Errorf("List: %+v, %v", p, err)
		}
		if kv, err := src.Get(ctx, "/registry/pods/default/a", 0); err != nil || string(kv.Value) != "2" {
			t.Errorf("Get: %+v, %v", kv, err)
		}
		var ce *CompactedError
		if _, err := src.Get(ctx, "/registry/pods/default/a", 1); !errors.As(err, &ce) || ce.Compacted != compacted {
			t.Errorf("Get of a compacted revision: %v, want a CompactedError naming %d", err, compacted)
		}
		if _, err := src.Children(ctx, "/registry/", 1); !errors.As(err, &ce) || ce.Compacted != compacted {
			t.Errorf("Children at a compacted revision: %v, want a CompactedError naming %d", err, compacted)
		}
		if _, err := src.List(ctx, "/registry/pods/", 1, PageToken{}); !errors.As(err, &ce) || ce.Compacted != compacted {
			t.Errorf("List at a compacted revision: %v, want a CompactedError naming %d", err, compacted)
		}
		if n, err := src.Count(ctx, "/registry/pods/", 0); err != nil || n != 1 {
			t.Errorf("Count: %d, %v; want 1", n, err)
		}
		if h, err := src.History(ctx, "/registry/pods/default/a", HistoryOptions{}); err != nil || len(h.Entries) != 1 || h.CompactedAt != compacted {
			t.Errorf("History: %+v, %v", h, err)
		}
		// kine's compaction is its own, not kube-apiserver's record of it.
		wantCompaction := map[bool]int64{false: 3, true: compacted}[kine]
		if cl, err := src.Status(ctx); err != nil || cl.CompactRevision != wantCompaction {
			t.Errorf("Status: %+v, %v; want compaction %d", cl, err, wantCompaction)
		}
		if _, err := root.Put(ctx, "/registry/pods/default/b", "new"); err != nil {
			t.Fatal(err)
		}
		for {
			b, ok := next(t, wc)
			if !ok || b.Err != nil {
				t.Fatalf("Watch ended: %v", b.Err)
			}
			if len(b.Events) > 0 {
				if b.Events[0].KV.Key != "/registry/pods/default/b" {
					t.Errorf("Watch saw %s", b.Events[0].KV.Key)
				}
				break
			}
		}
		if _, err := src.Children(ctx, "", 0); err == nil && !kine {
			t.Error("the viewer read the top of the keyspace: auth is not on")
		}
	})
}

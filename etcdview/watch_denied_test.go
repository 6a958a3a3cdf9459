package etcdview

import (
	"errors"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/embedded/etcdtest"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
)

// TestAWatchEtcdRefusesEndsWithItsError: a read-only user's watch of a
// prefix outside its role ends with etcd's refusal, instead of being
// reopened, silently, forever.
func TestAWatchEtcdRefusesEndsWithItsError(t *testing.T) {
	etcdtest.EachVersion(t, func(t *testing.T, e etcdtest.Etcd) {
		etcdtest.EnableReadOnlyUser(t, e.Client)
		ro, err := Connect(testCtx(t), liveConfig(e, etcdtest.ReadOnlyUser, etcdtest.ReadOnlyPassword))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ro.Close() })
		ch := ro.Watch(testCtx(t), "/other/", WatchOptions{})
		deadline := time.After(20 * time.Second)
		for {
			select {
			case b, ok := <-ch:
				if !ok {
					t.Fatal("watch ended without an error")
				}
				if b.Err == nil {
					continue
				}
				if want := "watch /other/*: etcdserver: permission denied"; b.Err.Error() != want || !errors.Is(b.Err, rpctypes.ErrPermissionDenied) {
					t.Fatalf("error %q, want %q", b.Err, want)
				}
				return
			case <-deadline:
				t.Fatal("no error within 20s of a watch the user may not read")
			}
		}
	})
}

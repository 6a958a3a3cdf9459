package etcdview

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/etcdscope/etcdscope/embedded/etcdtest"
	"github.com/etcdscope/etcdscope/etcdview/etcdviewtest"
	bolt "go.etcd.io/bbolt"
)

func TestFileScanAtARevisionHoldsWhatEtcdHeldThen(t *testing.T) {
	_, cli := etcdtest.StartBundled(t, 1)
	put(t, cli, "/registry/pods/ns/a", "1")
	put(t, cli, "/registry/pods/ns/b", "22")
	mid := put(t, cli, "/registry/pods/ns/a", "333")
	del(t, cli, "/registry/pods/ns/b")
	put(t, cli, "/registry/pods/ns/c", "4444")
	f, err := OpenFile(etcdviewtest.SaveSnapshot(t, cli))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	live, _ := scanAll(t, NewLive(cli, 0), "/registry/", ScanOptions{Rev: mid})
	recs, res := scanAll(t, f, "/registry/", ScanOptions{Rev: mid})
	if res.Revision != mid || !res.History || res.Layout == nil || res.Layout.InUse <= 0 || res.Layout.InUse > res.Layout.Size {
		t.Errorf("result %+v, want revision %d, history, a layout", res, mid)
	}
	var got, want []string
	for _, r := range recs {
		if !r.Retained || r.ModRevision > mid {
			t.Errorf("record %+v: want every record retained, none after %d", r, mid)
		}
		if r.Current {
			got = append(got, fmt.Sprintf("%s=%d@%d", r.Key, r.Size, r.ModRevision))
		}
	}
	for _, r := range live {
		want = append(want, fmt.Sprintf("%s=%d@%d", r.Key, r.Size, r.ModRevision))
	}
	// a's two revisions and b's one, before b's deletion.
	if strings.Join(got, " ") != strings.Join(want, " ") || len(recs) != 3 {
		t.Errorf("current %q of %d records, want the live scan's %q of 3", got, len(recs), want)
	}
	if _, err := f.Scan(testCtx(t), "/registry/", ScanOptions{Rev: 1 << 40}, func([]ScanRecord) error { return nil }); err == nil || !strings.Contains(err.Error(), "future") {
		t.Errorf("scan of a future revision: %v", err)
	}
}

func TestFileScanRefusesABucketKeyThatIsNoRevision(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucket([]byte("key"))
		if err != nil {
			return err
		}
		return b.Put([]byte("short"), []byte("x"))
	})
	if err != nil {
		t.Fatal(err)
	}
	err = db.View(func(tx *bolt.Tx) error {
		return walkBack(testCtx(t), tx, 10, "", "\x00", func([]ScanRecord) error { return nil }, func(ScanProgress) {})
	})
	if err == nil || !strings.Contains(err.Error(), "not a revision") {
		t.Errorf("walk of a bucket with a key that is no revision: %v", err)
	}
	if err := guardDamage(path, func() error { panic("page 7 is not a leaf") }); err == nil || !strings.Contains(err.Error(), "is damaged: page 7 is not a leaf") {
		t.Errorf("a panic in bbolt: %v, want an error saying the file is damaged", err)
	}
}

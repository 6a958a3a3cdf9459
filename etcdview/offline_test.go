package etcdview

import (
	"errors"
	"fmt"
	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/embedded/etcdtest"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

const kube17 = "../testdata/kube-1.7/"

func allKeys(t *testing.T, src Source, rev int64) []string {
	t.Helper()
	var keys []string
	for page := (PageToken{Limit: 2}); ; {
		p, err := src.List(testCtx(t), "", rev, page)
		if err != nil {
			t.Fatal(err)
		}
		for _, kv := range p.Keys {
			keys = append(keys, kv.Key)
		}
		if p.Next == nil {
			return keys
		}
		page, rev = *p.Next, p.Revision
	}
}

func TestFileReadsDataWrittenByKubernetes17(t *testing.T) {
	f, err := OpenFile(kube17 + "boltdb-db")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want, err := os.ReadFile(kube17 + "boltdb-keys.txt")
	if err != nil {
		t.Fatal(err)
	}
	if got := allKeys(t, f, 0); !slices.Equal(got, strings.Fields(string(want))) {
		t.Errorf("keys %q, want those of boltdb-keys.txt %q", got, want)
	}
	kv, err := f.Get(testCtx(t), "/registry/pods/default/pi-dqtsw", 0)
	if err != nil {
		t.Fatal(err)
	}
	stored, err := os.ReadFile(kube17 + "storage-pod.bin")
	if err != nil {
		t.Fatal(err)
	}
	// The file was saved from etcdctl's output, with a newline after.
	if string(kv.Value) != strings.TrimSuffix(string(stored), "\n") {
		t.Errorf("pod value differs from storage-pod.bin (%d bytes, want %d)", len(kv.Value), len(stored))
	}
	h, err := f.History(testCtx(t), "/registry/pods/default/pi-dqtsw", HistoryOptions{})
	if err != nil || len(h.Entries) != 1 || h.Entries[0].Object(decode.Decoder{}).GVK.Kind != "Pod" || h.Truncated() == "" {
		t.Errorf("history %+v, %v: want the one retained revision, decoded, and the compaction", h, err)
	}
	_, err = f.Get(testCtx(t), "/registry/pods/default/pi-dqtsw", 1)
	var ce *CompactedError
	if !errors.As(err, &ce) || ce.Compacted != 241828 {
		t.Errorf("read at revision 1: %v, want the compaction at 241828", err)
	}
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	out.Close()
	if err := os.Chmod(to, mode); err != nil {
		t.Fatal(err)
	}
}

// copyCommitted copies a running member's data file once it holds rev:
// etcd commits its backend every 100 ms (--backend-batch-interval), and a
// follower applies after the leader, so a copy taken at once may end
// before it, or catch a commit halfway and not open.
func copyCommitted(t *testing.T, path string, rev int64) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for i := 0; ; i++ {
		copied := filepath.Join(t.TempDir(), fmt.Sprintf("running-%d.db", i))
		copyFile(t, path, copied, 0o444)
		f, err := OpenFile(copied)
		if err == nil {
			f.Close()
			if f.rev >= rev {
				return copied
			}
			err = fmt.Errorf("it ends at revision %d", f.rev)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no copy of %s holds revision %d after 10 s: %v", path, rev, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestFileShowsWhatTheLiveMemberShowed stops a member and reads its data
// file: every read gives what the running cluster gave.
func TestFileShowsWhatTheLiveMemberShowed(t *testing.T) {
	c, cli := etcdtest.StartBundled(t, 3)
	live := NewLive(cli, 0)
	for _, k := range []string{"/registry/pods/default/a", "/registry/pods/kube-system/b", "/registry/services/specs/default/kubernetes"} {
		put(t, cli, k, "1")
	}
	first := put(t, cli, "/registry/pods/default/a", "2")
	put(t, cli, "/registry/pods/default/a", "3")
	del(t, cli, "/registry/pods/kube-system/b")
	compact(t, cli, first)
	head := put(t, cli, "/registry/pods/default/a", "4")

	ctx := testCtx(t)
	liveLevel, err := live.Children(ctx, "/registry/pods/", first)
	if err != nil {
		t.Fatal(err)
	}
	liveHistory, err := live.History(ctx, "/registry/pods/default/a", HistoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	liveKeys := allKeys(t, live, 0)
	dbOf := func(i int) string { return filepath.Join(c.DataDir(), c.Members()[i].Name, "member", "snap", "db") }

	// A copy of a running member's file reads; the file itself is locked.
	running := copyCommitted(t, dbOf(1), head)
	if _, err := OpenFile(dbOf(1)); err == nil || !strings.Contains(err.Error(), "running etcd") {
		t.Errorf("opening a running member's file: %v, want it named locked by a running etcd", err)
	}
	// Wait until member 0 has applied the last write before stopping it.
	if _, err := client(t, c, 0).Get(ctx, "/registry/pods/default/a"); err != nil {
		t.Fatal(err)
	}
	if err := c.StopMember(0); err != nil {
		t.Fatal(err)
	}
	readOnly := filepath.Join(t.TempDir(), "readonly.db")
	copyFile(t, dbOf(0), readOnly, 0o444)

	for name, path := range map[string]string{"stopped member": dbOf(0), "read-only copy": readOnly, "copy of a running member": running} {
		t.Run(name, func(t *testing.T) {
			f, err := OpenFile(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			lvl, err := f.Children(ctx, "/registry/pods/", first)
			if err != nil || !slices.Equal(lvl.Children, liveLevel.Children) {
				t.Errorf("children at %d: %+v, %v; live: %+v", first, lvl.Children, err, liveLevel.Children)
			}
			if got := allKeys(t, f, 0); !slices.Equal(got, liveKeys) {
				t.Errorf("keys %q, live %q", got, liveKeys)
			}
			h, err := f.History(ctx, "/registry/pods/default/a", HistoryOptions{})
			if err != nil || !slices.Equal(steps(h), steps(liveHistory)) || h.CompactedAt != liveHistory.CompactedAt {
				t.Errorf("history %v (compacted %d), %v; live %v (compacted %d)", steps(h), h.CompactedAt, err, steps(liveHistory), liveHistory.CompactedAt)
			}
			var revs []int64
			for b := range f.Watch(ctx, "/registry/pods/", WatchOptions{Rev: first}) {
				for _, ev := range b.Events {
					revs = append(revs, ev.KV.ModRevision)
				}
			}
			if len(revs) != 4 || revs[0] != first || revs[3] != head {
				t.Errorf("replayed revisions %v from %d, want the 4 changes from it to %d", revs, first, head)
			}
		})
	}
}

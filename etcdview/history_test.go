package etcdview

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/embedded/etcdtest"
	"github.com/etcdscope/etcdscope/etcdview/etcdviewtest"
	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// step is one entry of a history as a test states it.
type step struct {
	rev   int64
	value string // "" for a deletion
}

func steps(h History) []step {
	var out []step
	for _, e := range h.Entries {
		if e.Deleted != (e.KV.Value == nil) {
			panic(fmt.Sprintf("entry at %d: deleted %v with value %q", e.KV.ModRevision, e.Deleted, e.KV.Value))
		}
		out = append(out, step{e.KV.ModRevision, string(e.KV.Value)})
	}
	return out
}

func TestHistory(t *testing.T) {
	eachEtcd(t, func(t *testing.T, cli *clientv3.Client) {
		src := NewLive(cli, 0)
		tests := []struct {
			name string
			// write makes the history and returns it newest first, and
			// the compaction revision the history should report.
			write func(key string) ([]step, int64)
		}{
			{"five updates, a delete and a re-creation", func(key string) ([]step, int64) {
				var want []step
				for i := range 6 {
					v := fmt.Sprintf("v%d", i)
					want = append(want, step{put(t, cli, key, v), v})
				}
				want = append(want, step{del(t, cli, key), ""})
				want = append(want, step{put(t, cli, key, "again"), "again"})
				slices.Reverse(want)
				return want, 0
			}},
			{"a deleted key keeps its last value", func(key string) ([]step, int64) {
				want := []step{{put(t, cli, key, "a"), "a"}, {put(t, cli, key, "b"), "b"}, {del(t, cli, key), ""}}
				put(t, cli, key+"-sibling", "another key's change after the deletion")
				slices.Reverse(want)
				return want, 0
			}},
			{"early revisions compacted", func(key string) ([]step, int64) {
				put(t, cli, key, "gone")
				kept := put(t, cli, key, "kept")
				after := put(t, cli, key+"-other", "x")
				compact(t, cli, after)
				return []step{{put(t, cli, key, "new"), "new"}, {kept, "kept"}}, after
			}},
		}
		for i, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				key := fmt.Sprintf("/registry/history/%d", i)
				want, compacted := tc.write(key)
				h, err := src.History(testCtx(t), key)
				if err != nil {
					t.Fatal(err)
				}
				if got := steps(h); !slices.Equal(got, want) {
					t.Errorf("history %v, want %v", got, want)
				}
				if h.CompactedAt != compacted {
					t.Errorf("compacted at %d, want %d", h.CompactedAt, compacted)
				}
				if compacted != 0 && h.Truncated() != fmt.Sprintf("history before revision %d was compacted", compacted) {
					t.Errorf("truncation note %q", h.Truncated())
				}
			})
		}
	})
}

func TestHistoryDecodesEachRevision(t *testing.T) {
	_, cli := etcdtest.StartBundled(t, 1)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "default", Labels: map[string]string{"v": "1"}}}
	etcdviewtest.Put(t, cli, pod)
	pod.Labels["v"] = "2"
	rev := etcdviewtest.Put(t, cli, pod)
	h, err := NewLive(cli, 0).History(testCtx(t), "/registry/pods/default/web-0")
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Entries) != 2 {
		t.Fatalf("%d entries, want 2", len(h.Entries))
	}
	if typ := h.Entries[0].Type(); typ != Modified {
		t.Errorf("newest entry is %s, want %s", typ, Modified)
	}
	if typ := h.Entries[1].Type(); typ != Added {
		t.Errorf("oldest entry is %s, want %s", typ, Added)
	}
	o := h.Entries[0].Object(decode.Decoder{})
	if o.GVK.Kind != "Pod" || o.Problem != "" {
		t.Fatalf("newest entry decoded as %s", o.Label())
	}
	if got := o.Object.(*corev1.Pod); got.Labels["v"] != "2" || got.ResourceVersion != fmt.Sprint(rev) {
		t.Errorf("newest entry has labels %v, resourceVersion %s; want v=2 at %d", got.Labels, got.ResourceVersion, rev)
	}
}

func TestGet(t *testing.T) {
	eachEtcd(t, func(t *testing.T, cli *clientv3.Client) {
		src := NewLive(cli, 0)
		first := put(t, cli, "/registry/get/a", "1")
		second := put(t, cli, "/registry/get/a", "2")
		put(t, cli, "/registry/get/b", "1")
		tests := []struct {
			name      string
			key       string
			rev       int64
			want      *KV
			wantErr   error
			compacted bool
		}{
			{"newest", "/registry/get/a", 0, &KV{Key: "/registry/get/a", Value: []byte("2"), CreateRevision: first, ModRevision: second, Version: 2}, nil, false},
			{"as of an earlier revision", "/registry/get/a", first, &KV{Key: "/registry/get/a", Value: []byte("1"), CreateRevision: first, ModRevision: first, Version: 1}, nil, false},
			{"absent then", "/registry/get/b", second, nil, ErrNotFound, false},
			{"never written", "/registry/get/c", 0, nil, ErrNotFound, false},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				kv, err := src.Get(testCtx(t), tc.key, tc.rev)
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("error %v, want %v", err, tc.wantErr)
				}
				if tc.want != nil && (kv.Key != tc.want.Key || string(kv.Value) != string(tc.want.Value) ||
					kv.CreateRevision != tc.want.CreateRevision || kv.ModRevision != tc.want.ModRevision || kv.Version != tc.want.Version) {
					t.Errorf("got %+v, want %+v", kv, tc.want)
				}
			})
		}
		t.Run("compacted revision names the compaction", func(t *testing.T) {
			compact(t, cli, second)
			_, err := src.Get(testCtx(t), "/registry/get/a", first)
			var ce *CompactedError
			if !errors.As(err, &ce) || ce.Compacted != second || ce.Rev != first {
				t.Fatalf("error %v, want a CompactedError for %d naming compaction at %d", err, first, second)
			}
		})
	})
}

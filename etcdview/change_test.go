package etcdview

import (
	"strings"
	"testing"

	"github.com/etcdscope/etcdscope/decode"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestEntryTypeAndSummary(t *testing.T) {
	pod := func(labels map[string]string) decode.Object {
		return decode.Object{Object: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: labels}}}
	}
	v1, v2 := pod(map[string]string{"v": "1"}), pod(map[string]string{"v": "2"})
	tests := []struct {
		name   string
		entry  Entry
		before *decode.Object
		after  decode.Object
		want   EventType
		says   string
	}{
		{"the write that created it", Entry{KV: KV{CreateRevision: 5, ModRevision: 5, Version: 1}}, nil, v1, Added, "created"},
		// kine reports no version.
		{"the write that created it, on kine", Entry{KV: KV{CreateRevision: 5, ModRevision: 5}}, nil, v1, Added, "created"},
		{"a deletion", Entry{KV: KV{ModRevision: 9}, Deleted: true}, &v1, decode.Object{}, Deleted, "deleted"},
		{"a modification", Entry{KV: KV{CreateRevision: 5, ModRevision: 6, Version: 2}}, &v1, v2, Modified, "metadata.labels.v"},
		{"a modification, on kine", Entry{KV: KV{CreateRevision: 5, ModRevision: 6}}, &v1, v2, Modified, "metadata.labels.v"},
		{"a write that changed nothing decoded", Entry{KV: KV{CreateRevision: 5, ModRevision: 7, Version: 3}}, &v2, v2, Modified, "no change"},
		{"the oldest retained write after compaction", Entry{KV: KV{CreateRevision: 5, ModRevision: 20, Version: 7}}, nil, v2, Modified, "(the revision before is gone)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.entry.Type(); got != tc.want {
				t.Errorf("Type() = %s, want %s", got, tc.want)
			}
			if got := Summary(tc.entry.Type(), tc.before, tc.after); !strings.Contains(got, tc.says) {
				t.Errorf("Summary = %q, want it to say %q", got, tc.says)
			}
		})
	}
}

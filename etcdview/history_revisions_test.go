package etcdview

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/etcdscope/etcdscope/decode"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// podEntry is a write of a Pod, as JSON, at rev.
func podEntry(t *testing.T, rev, version int64) Entry {
	t.Helper()
	pod := corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "default"}}
	js, err := json.Marshal(pod)
	if err != nil {
		t.Fatal(err)
	}
	return Entry{KV: KV{Key: "/registry/pods/default/web-0", Value: js, CreateRevision: rev - version + 1, ModRevision: rev, Version: version}}
}

// revisionOf is the revision an object was decoded at, "-" for no
// object, "nil" for none at all.
func revisionOf(o *decode.Object) string {
	if o == nil {
		return "nil"
	}
	m, err := meta.Accessor(o.Object)
	if err != nil {
		return "-"
	}
	return m.GetResourceVersion()
}

func TestEachRevisionPairsEachEntryWithTheOneBefore(t *testing.T) {
	h := History{Key: "/registry/pods/default/web-0", Entries: []Entry{
		podEntry(t, 7, 2),
		podEntry(t, 6, 1),
		{KV: KV{Key: "/registry/pods/default/web-0", ModRevision: 5}, Deleted: true},
		podEntry(t, 4, 3), // the oldest compaction left
	}}
	var got []string
	err := h.EachRevision(decode.Decoder{}, func(i int, e Entry, before *decode.Object, after decode.Object) error {
		got = append(got, fmt.Sprintf("%d %d: %s→%s", i, e.KV.ModRevision, revisionOf(before), revisionOf(&after)))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The creation after a deletion, and the oldest revision held, have
	// no revision before them; a deletion has no object.
	want := []string{"0 7: 6→7", "1 6: nil→6", "2 5: 4→-", "3 4: nil→4"}
	if !slices.Equal(got, want) {
		t.Errorf("pairs %q, want %q", got, want)
	}
	stop := errors.New("stop")
	calls := 0
	err = h.EachRevision(decode.Decoder{}, func(int, Entry, *decode.Object, decode.Object) error {
		calls++
		return stop
	})
	if !errors.Is(err, stop) || calls != 1 {
		t.Errorf("fn's error: walk returned %v after %d calls, want it at once", err, calls)
	}
}

func TestNoRevisionSaysWhatIsKnown(t *testing.T) {
	const key = "/registry/pods/default/web\x1b-0"
	tests := []struct {
		name string
		h    History
		want string
	}{
		{"never written", History{Key: key, Revision: 9, Earlier: EarlierNone},
			`no revision of "/registry/pods/default/web\x1b-0" found`},
		{"compacted away", History{Key: key, Revision: 9, CompactedAt: 8, Earlier: EarlierNone},
			`no revision of "/registry/pods/default/web\x1b-0" found (history before revision 8 was compacted)`},
		{"an earlier incarnation left unread", History{Key: key, Revision: 9, Earlier: EarlierUnread, EarlierSeenAt: 3},
			`"/registry/pods/default/web\x1b-0" does not exist at revision 9; an earlier incarnation existed at revision 3; the incarnations before this one were not read (read with -a)`},
		{"earlier incarnations not probed", History{Key: key, Revision: 9},
			`"/registry/pods/default/web\x1b-0" does not exist at revision 9; earlier incarnations, if etcd holds any, were not read (read with -a)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.h.NoRevision("(read with -a)")
			if err.Error() != tc.want {
				t.Errorf("error %q, want %q", err, tc.want)
			}
			if !errors.Is(err, ErrNoRevision) {
				t.Errorf("error %q does not match ErrNoRevision", err)
			}
		})
	}
}

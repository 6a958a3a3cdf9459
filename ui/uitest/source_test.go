package uitest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/etcdview"
)

// receive reads n batches of ch, failing t when they do not come within
// Deadline or the channel closes first.
func receive(t *testing.T, ch <-chan etcdview.Batch, n int) []etcdview.Batch {
	t.Helper()
	var out []etcdview.Batch
	timeout := time.After(Deadline)
	for len(out) < n {
		select {
		case b, ok := <-ch:
			if !ok {
				t.Fatalf("the watch closed after %d of %d batches", len(out), n)
			}
			out = append(out, b)
		case <-timeout:
			t.Fatalf("%d of %d batches within %v", len(out), n, Deadline)
		}
	}
	return out
}

// changes are the "TYPE key@rev" of the batches' events.
func changes(bs []etcdview.Batch) []string {
	var out []string
	for _, b := range bs {
		for _, ev := range b.Events {
			out = append(out, fmt.Sprintf("%s %s@%d", ev.Type, ev.KV.Key, ev.KV.ModRevision))
		}
	}
	return out
}

func TestWatchFromARevisionReplaysBelowThePrefixThenFollows(t *testing.T) {
	s := New()
	s.Put("/registry/pods/a", []byte("1"))       // 2
	s.Put("/registry/configmaps/b", []byte("1")) // 3
	s.Put("/registry/pods/a", []byte("2"))       // 4
	s.Delete("/registry/pods/a")                 // 5
	tests := []struct {
		rev  int64
		want []string
	}{
		{0, []string{"ADDED /registry/pods/c@7"}},
		{3, []string{"MODIFIED /registry/pods/a@4", "DELETED /registry/pods/a@5", "ADDED /registry/pods/c@7"}},
		{2, []string{"ADDED /registry/pods/a@2", "MODIFIED /registry/pods/a@4", "DELETED /registry/pods/a@5", "ADDED /registry/pods/c@7"}},
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var watches []<-chan etcdview.Batch
	for _, tc := range tests {
		watches = append(watches, s.Watch(ctx, "/registry/pods/", etcdview.WatchOptions{Rev: tc.rev}))
	}
	s.Put("/registry/configmaps/b", []byte("2")) // 6, not below the prefix
	s.Put("/registry/pods/c", []byte("1"))       // 7
	for i, tc := range tests {
		if got := changes(receive(t, watches[i], len(tc.want))); !slices.Equal(got, tc.want) {
			t.Errorf("from revision %d: %q, want %q", tc.rev, got, tc.want)
		}
	}
}

func TestWatchFromACompactedRevisionSaysSo(t *testing.T) {
	s := New()
	for i := range 5 {
		s.Put("/registry/pods/a", fmt.Append(nil, i)) // 2 to 6
	}
	s.Compact(5)
	for _, goOn := range []bool{false, true} {
		t.Run(fmt.Sprintf("continue %v", goOn), func(t *testing.T) {
			ch := s.Watch(t.Context(), "/registry/", etcdview.WatchOptions{Rev: 3, ContinueAfterCompaction: goOn})
			first := receive(t, ch, 1)[0]
			if !errors.Is(first.Err, etcdview.ErrCompacted) || first.Revision != 5 {
				t.Fatalf("first batch %+v, want the compaction at 5", first)
			}
			if !goOn {
				if b, ok := <-ch; ok {
					t.Errorf("the watch went on after the compaction with %+v", b)
				}
				return
			}
			if got := changes(receive(t, ch, 2)); !slices.Equal(got, []string{"MODIFIED /registry/pods/a@5", "MODIFIED /registry/pods/a@6"}) {
				t.Errorf("after the compaction: %q", got)
			}
		})
	}
}

func TestWriteNeverWaitsForAWatcherThatDoesNotRead(t *testing.T) {
	const writes = 5000
	s := New()
	ch := s.Watch(t.Context(), "/registry/", etcdview.WatchOptions{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range writes {
			s.Put(fmt.Sprintf("/registry/pods/p-%d", i), []byte("x"))
		}
	}()
	select {
	case <-done:
	case <-time.After(Deadline):
		t.Fatalf("%d writes did not finish within %v with a watcher that reads nothing", writes, Deadline)
	}
	got := receive(t, ch, writes)
	if last := got[writes-1].Revision; last != int64(writes+1) {
		t.Errorf("the last batch is at revision %d, want %d", last, writes+1)
	}
}

func TestHistoryKeepsWhatCompactionKeeps(t *testing.T) {
	s := New()
	s.Put("/registry/pods/a", []byte("1")) // 2
	s.Put("/registry/pods/a", []byte("2")) // 3
	s.Put("/registry/pods/b", []byte("1")) // 4
	s.Delete("/registry/pods/b")           // 5
	s.Put("/registry/pods/a", []byte("3")) // 6
	s.Compact(5)
	tests := []struct {
		key       string
		revs      []int64
		compacted int64
	}{
		{"/registry/pods/a", []int64{6, 3}, 5}, // 3 is the value at 5; 2 is gone
		{"/registry/pods/b", nil, 5},           // deleted at the compaction
		{"/registry/pods/never", nil, 0},
	}
	for _, tc := range tests {
		h, err := s.History(t.Context(), tc.key, etcdview.HistoryOptions{})
		var revs []int64
		for _, e := range h.Entries {
			revs = append(revs, e.KV.ModRevision)
		}
		if err != nil || !slices.Equal(revs, tc.revs) || h.CompactedAt != tc.compacted {
			t.Errorf("history of %s: revisions %v, compacted at %d, %v; want %v, %d, no error", tc.key, revs, h.CompactedAt, err, tc.revs, tc.compacted)
		}
	}
}

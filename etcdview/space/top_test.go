package space

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestTopNKeepsTheGreatest offers keys in descending, ascending and
// shuffled order, with ties on size (broken by key), and wants the n
// greatest of them, greatest first, as a sort of them all gives, and all
// of them in that order when there is room for all.
func TestTopNKeepsTheGreatest(t *testing.T) {
	var keys []KeyStat
	for i := range 500 {
		keys = append(keys, KeyStat{Key: fmt.Sprintf("/registry/pods/p-%04d", i), Size: int64(i % 7)})
	}
	want := slices.Clone(keys)
	slices.SortFunc(want, func(a, b KeyStat) int {
		switch {
		case bySize.less(&b, &a):
			return -1
		case bySize.less(&a, &b):
			return 1
		}
		return 0
	})
	want = want[:10]
	shuffled := slices.Clone(keys)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	descending := slices.Clone(keys)
	slices.Reverse(descending)
	for name, order := range map[string][]KeyStat{"ascending": keys, "descending": descending, "shuffled": shuffled} {
		top := newTopN(10, bySize)
		for _, k := range order {
			top.offer(&k)
		}
		if got := top.sorted(); !slices.Equal(got, want) {
			t.Errorf("%s: kept %v, want %v", name, got, want)
		}
		few := newTopN(len(keys)+1, bySize)
		for _, k := range order {
			few.offer(&k)
		}
		if got := few.sorted(); !slices.Equal(got[:10], want) || len(got) != len(keys) {
			t.Errorf("%s, room for all %d: kept %d, the first %v", name, len(keys), len(got), got[:10])
		}
	}
}

package common_test

import (
	"slices"
	"testing"

	"github.com/etcdscope/etcdscope/ui/common"
)

func TestDrainTakesWhatWaitsUpToTheLimit(t *testing.T) {
	tests := []struct {
		name       string
		waiting    []int
		close      bool
		limit      int
		want       []int
		wantClosed bool
	}{
		{"one waiting", []int{1}, false, 10, []int{1}, false},
		{"a burst", []int{1, 2, 3}, false, 10, []int{1, 2, 3}, false},
		{"a burst over the limit", []int{1, 2, 3, 4}, false, 3, []int{1, 2, 3}, false},
		{"the last before the close", []int{1, 2}, true, 10, []int{1, 2}, true},
		{"closed and empty", nil, true, 10, nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ch := make(chan int, len(tc.waiting))
			for _, v := range tc.waiting {
				ch <- v
			}
			if tc.close {
				close(ch)
			}
			got, closed := common.Drain(ch, tc.limit)
			if !slices.Equal(got, tc.want) || closed != tc.wantClosed {
				t.Errorf("Drain = %v, closed %v; want %v, closed %v", got, closed, tc.want, tc.wantClosed)
			}
		})
	}
}

func TestDrainWaitsForTheFirstValue(t *testing.T) {
	ch := make(chan int)
	done := make(chan []int)
	go func() {
		got, _ := common.Drain(ch, 10)
		done <- got
	}()
	ch <- 7
	if got := <-done; !slices.Equal(got, []int{7}) {
		t.Errorf("Drain = %v, want [7]", got)
	}
}

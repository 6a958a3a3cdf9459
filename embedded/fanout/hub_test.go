package fanout

import (
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestASlowSubscriberNeverBlocksThePublisher publishes far more than a
// subscriber that never reads can hold: every Publish returns, the
// subscriber keeps the first values, and the rest are counted as dropped.
func TestASlowSubscriberNeverBlocksThePublisher(t *testing.T) {
	var h Hub[int]
	slow, cancel := h.Subscribe(4)
	defer cancel()
	const n = 10_000
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range n {
			h.Publish(i)
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Publish blocked on a subscriber that does not read")
	}
	if d := h.Dropped(); d != n-4 {
		t.Errorf("Dropped = %d, want %d", d, n-4)
	}
	h.Close()
	var kept []int
	for v := range slow {
		kept = append(kept, v)
	}
	if !slices.Equal(kept, []int{0, 1, 2, 3}) {
		t.Errorf("the slow subscriber kept %v, want the first 4 values", kept)
	}
}

// TestMapHandsOverConvertedValuesInOrder reads each value as it is
// published: a subscriber that keeps up misses nothing.
func TestMapHandsOverConvertedValuesInOrder(t *testing.T) {
	var h Hub[int]
	strs, cancel := Map(&h, 1, strconv.Itoa)
	defer cancel()
	for i := range 100 {
		h.Publish(i)
		if got := <-strs; got != strconv.Itoa(i) {
			t.Fatalf("got %q, want %q", got, strconv.Itoa(i))
		}
	}
	if d := h.Dropped(); d != 0 {
		t.Errorf("Dropped = %d for a subscriber that kept up", d)
	}
}

func TestCloseEndsEverySubscription(t *testing.T) {
	var h Hub[string]
	a, cancelA := h.Subscribe(8)
	b, _ := h.Subscribe(8)
	h.Publish("x")
	h.Close()
	for name, ch := range map[string]<-chan string{"a": a, "b": b} {
		var got []string
		for v := range ch { // ends: Close closed it
			got = append(got, v)
		}
		if !slices.Equal(got, []string{"x"}) {
			t.Errorf("subscriber %s got %q, want the value published before Close", name, got)
		}
	}
	cancelA() // after Close: must not close the channel twice
	late, cancelLate := h.Subscribe(8)
	defer cancelLate()
	if _, open := <-late; open {
		t.Error("a subscription made after Close is open")
	}
	h.Publish("after") // must not panic on closed channels
}

func TestCancelEndsOneSubscription(t *testing.T) {
	var h Hub[int]
	gone, cancel := h.Subscribe(1)
	kept, cancelKept := h.Subscribe(1)
	defer cancelKept()
	cancel()
	cancel()
	if _, open := <-gone; open {
		t.Error("a cancelled subscription is open")
	}
	h.Publish(1)
	if v := <-kept; v != 1 || h.Dropped() != 0 {
		t.Errorf("after one cancel, the other got %d and %d were dropped; want 1 and none", v, h.Dropped())
	}
}

// TestNoGoroutineOutlivesTheHub publishes, subscribes, cancels and closes
// from many goroutines at once (run with -race): nothing is left running.
func TestNoGoroutineOutlivesTheHub(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	var h Hub[int]
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 1000 {
				h.Publish(i*1000 + j)
			}
		})
		wg.Go(func() {
			ch, cancel := h.Subscribe(16)
			for range 10 {
				select {
				case <-ch:
				default:
				}
			}
			cancel()
		})
	}
	wg.Go(h.Close)
	wg.Wait()
}

// TestSubscribersCountsOpenSubscriptions is what a publisher asks before
// it builds a value: no subscription, no work.
func TestSubscribersCountsOpenSubscriptions(t *testing.T) {
	var h Hub[int]
	if n := h.Subscribers(); n != 0 {
		t.Fatalf("a new hub has %d subscribers", n)
	}
	_, cancelA := h.Subscribe(1)
	_, cancelB := h.Subscribe(1)
	if n := h.Subscribers(); n != 2 {
		t.Errorf("after two subscriptions: %d", n)
	}
	cancelA()
	cancelA()
	if n := h.Subscribers(); n != 1 {
		t.Errorf("after one cancel, called twice: %d", n)
	}
	h.Close()
	cancelB()
	if n := h.Subscribers(); n != 0 {
		t.Errorf("after Close: %d", n)
	}
}

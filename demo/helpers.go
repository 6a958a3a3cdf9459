package demo

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
)

var labelsEverything = labels.Everything()

// setCondition replaces the condition of c's type, keeping its transition
// time when the status did not change, as the kubelet's status manager does.
func setCondition(st *corev1.PodStatus, c corev1.PodCondition) {
	for i, old := range st.Conditions {
		if old.Type == c.Type {
			if old.Status == c.Status {
				c.LastTransitionTime = old.LastTransitionTime
			}
			st.Conditions[i] = c
			return
		}
	}
	st.Conditions = append(st.Conditions, c)
}

func nodeName(i int) string { return fmt.Sprintf("node-%d", i+1) }

// work runs sync on each key of queue until the queue shuts down, as the
// workers of kube-controller-manager's controllers do: a key that failed
// comes back with the queue's backoff, one whose sync asks for a later look
// comes back after that long, any other is forgotten.
func work(ctx context.Context, queue workqueue.TypedRateLimitingInterface[string], sync func(context.Context, string) (time.Duration, error)) {
	for {
		key, quit := queue.Get()
		if quit {
			return
		}
		after, err := sync(ctx, key)
		switch {
		case err != nil:
			queue.AddRateLimited(key)
		case after > 0:
			queue.Forget(key)
			queue.AddAfter(key, after)
		default:
			queue.Forget(key)
		}
		queue.Done(key)
	}
}

// once adapts a sync that never asks for a later look to work.
func once(sync func(context.Context, string) error) func(context.Context, string) (time.Duration, error) {
	return func(ctx context.Context, key string) (time.Duration, error) { return 0, sync(ctx, key) }
}

// eventCacheEntries bounds each of the three caches of a component's event
// correlator (client-go's spam filter, aggregator and logger, 4096 entries
// each by default). Each new Pod's events have keys of their own, so the
// caches fill over hours and stay full: 5.6 MB for each simulated kubelet
// and the provisioner once full (0.35 MB at 256 entries; measured with 5000
// pods' kubelet events), which a real node pays in a process of its own. A
// few hundred keys cover the pods a simulated node runs at once, all that
// the aggregation of repeated events (10 alike within 10 minutes) looks back
// on.
const eventCacheEntries = 256

// newBroadcaster is an event broadcaster as a component makes it, with the
// demo's smaller correlator caches.
func newBroadcaster(ctx context.Context) record.EventBroadcaster {
	return record.NewBroadcaster(record.WithContext(ctx),
		record.WithCorrelatorOptions(record.CorrelatorOptions{LRUCacheSize: eventCacheEntries}))
}

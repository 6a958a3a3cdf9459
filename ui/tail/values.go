package tail

import (
	"github.com/etcdscope/etcdscope/etcdview"
	"k8s.io/utils/lru"
)

// recentValues is how many values the tail keeps, so that diffs and
// summaries of the newest rows need no read.
const recentValues = 512

type valueKey struct {
	key string
	rev int64
}

// valueCache keeps the values of the newest events by key and mod
// revision; a diff or summary that uses one keeps it longer.
type valueCache struct{ lru *lru.Cache }

func newValueCache() valueCache { return valueCache{lru.New(recentValues)} }

func (c valueCache) get(key string, rev int64) ([]byte, bool) {
	v, ok := c.lru.Get(valueKey{key, rev})
	if !ok {
		return nil, false
	}
	return v.([]byte), true
}

// add keeps the values of the last events of a batch: older ones would be
// evicted by the newer at once.
func (c valueCache) add(events []etcdview.Event) {
	if len(events) > recentValues/2 {
		events = events[len(events)-recentValues/2:]
	}
	for _, ev := range events {
		if ev.Type != etcdview.Deleted {
			c.lru.Add(valueKey{ev.KV.Key, ev.KV.ModRevision}, ev.KV.Value)
		}
		if ev.Prev != nil {
			c.lru.Add(valueKey{ev.Prev.Key, ev.Prev.ModRevision}, ev.Prev.Value)
		}
	}
}

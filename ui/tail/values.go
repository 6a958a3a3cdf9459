package tail

import "github.com/etcdscope/etcdscope/etcdview"

// recentValues is how many values the tail keeps, so that diffs and
// summaries of the newest rows need no read.
const recentValues = 512

type valueKey struct {
	key string
	rev int64
}

// valueCache keeps the newest recentValues values by key and mod revision,
// evicting in arrival order.
type valueCache struct {
	m     map[valueKey][]byte
	order []valueKey
	next  int
}

func newValueCache() *valueCache {
	return &valueCache{m: make(map[valueKey][]byte, recentValues), order: make([]valueKey, 0, recentValues)}
}

func (c *valueCache) put(key string, rev int64, v []byte) {
	k := valueKey{key, rev}
	if _, ok := c.m[k]; ok {
		return
	}
	if len(c.order) < recentValues {
		c.order = append(c.order, k)
	} else {
		delete(c.m, c.order[c.next])
		c.order[c.next] = k
		c.next = (c.next + 1) % recentValues
	}
	c.m[k] = v
}

func (c *valueCache) get(key string, rev int64) ([]byte, bool) {
	v, ok := c.m[valueKey{key, rev}]
	return v, ok
}

// add keeps the values of the last events of a batch: older ones would be
// evicted by the newer at once.
func (c *valueCache) add(events []etcdview.Event) {
	if len(events) > recentValues/2 {
		events = events[len(events)-recentValues/2:]
	}
	for _, ev := range events {
		if ev.Type != etcdview.Deleted {
			c.put(ev.KV.Key, ev.KV.ModRevision, ev.KV.Value)
		}
		if ev.Prev != nil {
			c.put(ev.Prev.Key, ev.Prev.ModRevision, ev.Prev.Value)
		}
	}
}

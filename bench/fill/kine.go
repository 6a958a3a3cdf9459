package fill

import (
	"context"
	"fmt"
	"iter"
	"sync"

	"github.com/etcdscope/etcdscope/etcdview/etcdviewtest"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// kineWriters is how many clients write into kine at once. kine commits
// each write in a SQLite transaction of its own, one at a time, so more
// clients only keep that queue full while others encode and wait on the
// network.
const kineWriters = 16

// FillKine writes the plan into kine (k3s' etcd API over SQLite) as
// kube-apiserver writes to it, and returns the revision of the last write.
// kine takes only kube-apiserver's transactions (a create if the key's mod
// revision is 0, an update or a delete if it is still the one read), not
// etcd's batches of puts, so every object is a transaction of its own: the
// objects, then the history (each update on the revision its key was last
// written at), then the deletion of every tenth Event, as kube-apiserver's
// events expire after an hour. The events carry no lease: kine would delete
// them itself on its own clock when a later run serves the file, and the
// measured data would change under the bench.
func FillKine(ctx context.Context, kv clientv3.KV, p Plan) (int64, error) {
	w := &kineWriter{kv: kv, revs: map[string]int64{}}
	rev, err := write(ctx, p.entries(), kineWriters, w.create)
	if err != nil {
		return 0, err
	}
	// One writer, so that the revisions of one key are in the order
	// written and each update reads the revision of the one before.
	hrev, err := write(ctx, objectEntries(p.History()), 1, w.update)
	if err != nil {
		return 0, err
	}
	drev, err := w.deleteAll(ctx, p.Expired())
	return max(rev, hrev, drev), err
}

// Expired is the keys of every tenth Event of the plan.
func (p Plan) Expired() iter.Seq[string] {
	return func(yield func(string) bool) {
		for i := 0; i < p.Counts["events"]; i += 10 {
			// The same namespace as Objects gave the event.
			key, _ := etcdviewtest.Key(event(nsName(i%p.Namespaces), i))
			if !yield(key) {
				return
			}
		}
	}
}

// kineWriter writes into kine and keeps the mod revision of every key it
// wrote, as kube-apiserver's watch cache holds the revision an update or a
// delete is conditioned on.
type kineWriter struct {
	kv   clientv3.KV
	mu   sync.Mutex
	revs map[string]int64
}

func (w *kineWriter) create(ctx context.Context, pairs []kvPair) (int64, error) {
	var last int64
	for _, p := range pairs {
		// kube-apiserver's create (etcd3.store.Create): put if absent.
		resp, err := w.kv.Txn(ctx).
			If(clientv3.Compare(clientv3.ModRevision(p.key), "=", 0)).
			Then(clientv3.OpPut(p.key, p.value)).
			Commit()
		if err != nil {
			return 0, fmt.Errorf("create %s: %w", p.key, err)
		}
		if !resp.Succeeded {
			return 0, fmt.Errorf("create %s: the key exists (at revision %d)", p.key, resp.Header.Revision)
		}
		last = w.wrote(p.key, resp.Header.Revision)
	}
	return last, nil
}

func (w *kineWriter) update(ctx context.Context, pairs []kvPair) (int64, error) {
	var last int64
	for _, p := range pairs {
		rev, err := w.guarded(ctx, p.key, clientv3.OpPut(p.key, p.value))
		if err != nil {
			return 0, fmt.Errorf("update %s: %w", p.key, err)
		}
		last = w.wrote(p.key, rev)
	}
	return last, nil
}

func (w *kineWriter) deleteAll(ctx context.Context, keys iter.Seq[string]) (int64, error) {
	var last int64
	for key := range keys {
		rev, err := w.guarded(ctx, key, clientv3.OpDelete(key))
		if err != nil {
			return 0, fmt.Errorf("delete %s: %w", key, err)
		}
		last = rev
	}
	return last, nil
}

// guarded commits op on key if the key is still at the revision this writer
// last wrote it at: kube-apiserver's GuaranteedUpdate and Delete, which read
// the object back (the Else) when another writer got there first. Nothing
// else writes during a fill, so that is an error here.
func (w *kineWriter) guarded(ctx context.Context, key string, op clientv3.Op) (int64, error) {
	w.mu.Lock()
	rev, ok := w.revs[key]
	w.mu.Unlock()
	if !ok {
		return 0, fmt.Errorf("not written by this fill")
	}
	resp, err := w.kv.Txn(ctx).
		If(clientv3.Compare(clientv3.ModRevision(key), "=", rev)).
		Then(op).
		Else(clientv3.OpGet(key)).
		Commit()
	if err != nil {
		return 0, err
	}
	if !resp.Succeeded {
		return 0, fmt.Errorf("written at revision %d by someone else, not %d", modRevision(resp), rev)
	}
	return resp.Header.Revision, nil
}

// modRevision is the revision of the key an Else read back, 0 when it is
// gone.
func modRevision(resp *clientv3.TxnResponse) int64 {
	if len(resp.Responses) == 0 {
		return 0
	}
	if kvs := resp.Responses[0].GetResponseRange().GetKvs(); len(kvs) > 0 {
		return kvs[0].ModRevision
	}
	return 0
}

func (w *kineWriter) wrote(key string, rev int64) int64 {
	w.mu.Lock()
	w.revs[key] = rev
	w.mu.Unlock()
	return rev
}

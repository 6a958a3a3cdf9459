package fill

import (
	"context"
	"fmt"
	"iter"
	"runtime"
	"sync"
	"time"

	"github.com/etcdscope/etcdscope/etcdview/etcdviewtest"
	clientv3 "go.etcd.io/etcd/client/v3"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
)

// txnOps is how many puts one transaction holds: below etcd's default
// --max-txn-ops of 128, and well below --max-request-bytes with values of a
// few KiB.
const txnOps = 100

// writers is how many transactions of the fill are in flight at once:
// enough for etcd to batch them into one Raft entry and one backend commit.
const writers = 8

// Fill writes the plan's objects, then its history, and returns the
// revision of the last write.
func Fill(ctx context.Context, kv clientv3.KV, p Plan) (int64, error) {
	put := putTxn(kv)
	rev, err := write(ctx, p.entries(), writers, put)
	if err != nil {
		return 0, err
	}
	// One transaction at a time, so that the revisions of one key are in
	// the order written.
	hrev, err := write(ctx, objectEntries(p.History()), 1, put)
	return max(rev, hrev), err
}

// putTxn commits a batch as one transaction of puts.
func putTxn(kv clientv3.KV) commitFunc {
	return func(ctx context.Context, pairs []kvPair) (int64, error) {
		ops := make([]clientv3.Op, len(pairs))
		for i, p := range pairs {
			ops[i] = clientv3.OpPut(p.key, p.value)
		}
		resp, err := kv.Txn(ctx).Then(ops...).Commit()
		if err != nil {
			return 0, fmt.Errorf("put %d keys from %s: %w", len(pairs), pairs[0].key, err)
		}
		return resp.Header.Revision, nil
	}
}

// History is the updates after the fill: every node lease renewed
// LeaseRenewals times, 10s apart as kubelets renew them, and PodUpdates pods
// restarted once.
func (p Plan) History() iter.Seq[k8sruntime.Object] {
	return func(yield func(k8sruntime.Object) bool) {
		for r := 1; r <= p.LeaseRenewals; r++ {
			for i := range min(p.Nodes, p.Counts["leases"]) {
				l := lease("kube-node-lease", nodeName(i), i).(*coordinationv1.Lease)
				renew := metav1.NewMicroTime(epoch.Add(time.Duration(r) * 10 * time.Second))
				l.Spec.RenewTime = &renew
				if !yield(l) {
					return
				}
			}
		}
		for i := range p.PodUpdates {
			po := pod(nsName(i%p.Namespaces), i, nodeName(i%p.Nodes)).(*corev1.Pod)
			po.Status.ContainerStatuses[0].RestartCount = 1
			if !yield(po) {
				return
			}
		}
	}
}

type kvPair struct{ key, value string }

// entry is one key a fill writes, and how its value is encoded: on the
// encoders' cores, not while the keys are laid out.
type entry struct {
	key    string
	encode func() ([]byte, error)
}

// objectEntries are objs, each under its key in kube-apiserver's encoding.
func objectEntries(objs iter.Seq[k8sruntime.Object]) iter.Seq[entry] {
	return func(yield func(entry) bool) {
		for o := range objs {
			key, err := etcdviewtest.Key(o)
			e := entry{key: key, encode: func() ([]byte, error) { return etcdviewtest.Encode(o) }}
			if err != nil {
				e.encode = func() ([]byte, error) { return nil, err }
			}
			if !yield(e) {
				return
			}
		}
	}
}

// commitFunc writes one batch of encoded objects and returns the revision
// of its last write.
type commitFunc func(ctx context.Context, pairs []kvPair) (int64, error)

// write encodes entries on every core and commits them in batches of
// txnOps, parallel batches at a time.
func write(ctx context.Context, entries iter.Seq[entry], parallel int, commit commitFunc) (int64, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches := make(chan []entry)
	go batchEntries(ctx, entries, batches)
	encoded := make(chan []kvPair)
	var encoders sync.WaitGroup
	errs := make(chan error, parallel+runtime.NumCPU())
	for range runtime.NumCPU() {
		encoders.Go(func() {
			for b := range batches {
				pairs, err := encode(b)
				if err != nil {
					errs <- err
					cancel()
					return
				}
				select {
				case encoded <- pairs:
				case <-ctx.Done():
					return
				}
			}
		})
	}
	go func() { encoders.Wait(); close(encoded) }()

	var mu sync.Mutex
	var last int64
	var putters sync.WaitGroup
	for range parallel {
		putters.Go(func() {
			for pairs := range encoded {
				rev, err := commit(ctx, pairs)
				if err != nil {
					errs <- err
					cancel()
					return
				}
				mu.Lock()
				last = max(last, rev)
				mu.Unlock()
			}
		})
	}
	putters.Wait()
	select {
	case err := <-errs:
		return 0, err
	default:
		return last, ctx.Err()
	}
}

// batchEntries sends entries in batches of at most txnOps, closing batches
// at the end or when ctx ends. etcd refuses a transaction that puts one key
// twice, so a key already in the batch starts the next one.
func batchEntries(ctx context.Context, entries iter.Seq[entry], batches chan<- []entry) {
	defer close(batches)
	var b []entry
	inBatch := map[string]bool{}
	send := func() bool {
		if len(b) == 0 {
			return true
		}
		select {
		case batches <- b:
			b, inBatch = nil, map[string]bool{}
			return true
		case <-ctx.Done():
			return false
		}
	}
	for e := range entries {
		if (len(b) == txnOps || inBatch[e.key]) && !send() {
			return
		}
		b, inBatch[e.key] = append(b, e), true
	}
	send()
}

func encode(entries []entry) ([]kvPair, error) {
	pairs := make([]kvPair, len(entries))
	for i, e := range entries {
		value, err := e.encode()
		if err != nil {
			return nil, fmt.Errorf("encode %s: %w", e.key, err)
		}
		pairs[i] = kvPair{e.key, string(value)}
	}
	return pairs, nil
}

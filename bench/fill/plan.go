// Package fill writes a large Kubernetes cluster into an etcd as
// kube-apiserver stores it: protobuf values under /registry keys, in the
// proportions of a 5,000-node cluster, then a history of updates on a subset
// (node lease renewals, pod status changes), as the control plane writes them.
package fill

import (
	"fmt"
	"iter"

	"k8s.io/apimachinery/pkg/runtime"
)

// share is how many objects of one resource a fill of 1M keys holds.
type share struct {
	resource string
	n        int
}

// perMillion is how many objects of each resource a cluster of 1M keys
// holds: events dominate (kube-apiserver keeps them an hour), then
// ReplicaSets (ten old ones per Deployment), ConfigMaps and Secrets; one
// lease per node renews every 10s.
var perMillion = []share{
	{"events", 480_000},
	{"replicasets", 120_000},
	{"configmaps", 110_000},
	{"secrets", 110_000},
	{"pods", 100_000},
	{"endpointslices", 64_500},
	{"leases", 10_000},
	{"minions", 5_000},
	{"namespaces", 500},
}

// Plan is the cluster a fill writes.
type Plan struct {
	Layout     Layout
	Keys       int // total keys below /registry
	Namespaces int
	Nodes      int
	// Counts is how many objects of each resource, by the resource's key
	// segment (pods, minions, ...).
	Counts map[string]int
	// LeaseRenewals is how many times each node lease is renewed after the
	// fill, PodUpdates how many pods get one status update: the history.
	LeaseRenewals int
	PodUpdates    int
	// Custom is how many custom objects (and CRDs) the plan holds beside
	// Counts, Foreign how many keys that are no Kubernetes object.
	Custom  int
	Foreign int
}

// NewPlan scales the proportions of a 1M-key, 500-namespace, 5,000-node
// cluster to keys: the cluster layout.
func NewPlan(keys int) Plan {
	return Layouts[0].Plan(keys)
}

// scale is the plan of keys objects in the proportions of shares, the
// first share taking what rounding leaves.
func scale(l Layout, keys int, shares []share) Plan {
	p := Plan{Layout: l, Keys: keys, Counts: map[string]int{}, LeaseRenewals: 10}
	total := 0
	for _, r := range shares {
		n := max(1, r.n*keys/1_000_000)
		p.Counts[r.resource] = n
		total += n
	}
	p.Counts[shares[0].resource] += keys - total
	p.Namespaces = p.Counts["namespaces"]
	p.Nodes = p.Counts["minions"]
	p.PodUpdates = p.Counts["pods"] / 20
	return p
}

// entries yields every key of the plan: its objects, then its custom
// objects and foreign keys.
func (p Plan) entries() iter.Seq[entry] {
	return func(yield func(entry) bool) {
		seqs := []iter.Seq[entry]{objectEntries(p.Objects())}
		if p.Custom > 0 {
			seqs = append(seqs, p.customEntries(p.Custom))
		}
		if p.Foreign > 0 {
			seqs = append(seqs, foreignEntries(p.Foreign))
		}
		for _, seq := range seqs {
			for e := range seq {
				if !yield(e) {
					return
				}
			}
		}
	}
}

// Objects yields every object of the plan, namespaced ones spread evenly
// over the namespaces.
func (p Plan) Objects() iter.Seq[runtime.Object] {
	return func(yield func(runtime.Object) bool) {
		ns := func(i int) string { return nsName(i % p.Namespaces) }
		for i := range p.Namespaces {
			if !yield(namespace(nsName(i), i)) {
				return
			}
		}
		for i := range p.Nodes {
			if !yield(node(i)) {
				return
			}
		}
		gens := []struct {
			resource string
			make     func(i int) runtime.Object
		}{
			{"pods", func(i int) runtime.Object { return pod(ns(i), i, nodeName(i%p.Nodes)) }},
			{"events", func(i int) runtime.Object { return event(ns(i), i) }},
			{"replicasets", func(i int) runtime.Object { return replicaSet(ns(i), i) }},
			{"configmaps", func(i int) runtime.Object { return configMap(ns(i), i) }},
			{"secrets", func(i int) runtime.Object { return secret(ns(i), i) }},
			{"endpointslices", func(i int) runtime.Object { return endpointSlice(ns(i), i) }},
			{"leases", func(i int) runtime.Object {
				if i < p.Nodes { // one per node, as kubelets hold them
					return lease("kube-node-lease", nodeName(i), i)
				}
				return lease(ns(i), fmt.Sprintf("controller-%05d", i), i)
			}},
		}
		for _, g := range gens {
			for i := range p.Counts[g.resource] {
				if !yield(g.make(i)) {
					return
				}
			}
		}
	}
}

func nsName(i int) string   { return fmt.Sprintf("team-%03d", i) }
func nodeName(i int) string { return fmt.Sprintf("node-%04d", i) }

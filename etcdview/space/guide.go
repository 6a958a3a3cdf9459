package space

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/dustin/go-humanize"
)

// Finding is one of a report's top findings: what it means and what usually
// fixes it, in one line. etcdscope only reads: the fixes are the operator's
// to run.
type Finding struct {
	Subject string // the node's path, the key or the member it is about
	// Weight orders findings: the share of the whole the finding is about,
	// above 1 for what stops etcd (an alarm, a quota near).
	Weight float64
	Text   string
}

// Namer names the manager that last wrote key at revision rev, from the
// object's managedFields: the report reads no values, its caller decodes
// them.
type Namer func(ctx context.Context, key string, rev int64) (string, error)

// Thresholds of the findings: below them a figure is not a finding.
const (
	minShare       = 0.10 // of the whole, for Events and Leases
	minNodeKeys    = 100  // or bytes, writes, rate: a node too small to matter
	minNodeBytes   = 1 << 20
	minNodeWrites  = 1000
	minNodeRate    = 1.0
	minKeyShare    = 0.02             // of all writes since a key was created
	minKeyVersions = 10               // writes of a hot key
	minReclaimable = 0.5              // of a member's DB size
	minFreeBytes   = 64 << 20         // reclaimable, in bytes
	historyFactor  = 4                // history bytes over current bytes
	minHistory     = 16 << 20         // history bytes
	minRateOver    = 1 * time.Second  // a rate measured over less is noise
	leaseRenewal   = 10 * time.Second // kubelet's node lease renewal interval
)

// Guide is r's findings, the weightiest first. rates (nil: none measured)
// and forecast (nil: none) add to them, and name names a hot key's writer
// (nil: not named).
func Guide(ctx context.Context, r *Report, rates *Rates, forecast *Forecast, name Namer) []Finding {
	var fs []Finding
	for _, m := range r.Members {
		for _, a := range m.Alarms {
			fs = append(fs, Finding{Subject: m.Name, Weight: 3, Text: fmt.Sprintf("alarm %s: etcd refuses writes until space is freed "+
				"(compaction, then defragmentation one member at a time, the leader last) and the alarm disarmed (etcdctl alarm disarm)", a)})
		}
	}
	if forecast != nil && forecast.Urgent() {
		fs = append(fs, Finding{Subject: "quota", Weight: 2, Text: forecast.String()})
	}
	if rates != nil && rates.Over < minRateOver {
		rates = nil
	}
	for _, n := range resources(r.Root) {
		switch n.Resource {
		case "events":
			fs = append(fs, eventsFinding(n, rates, r.History)...)
		case "leases":
			fs = append(fs, leasesFinding(n, rates, r.History)...)
		}
	}
	fs = append(fs, hotKeyFinding(ctx, r, rates, name)...)
	for _, m := range r.Members {
		if free := m.Reclaimable(); free >= minFreeBytes && float64(free) >= minReclaimable*float64(m.DBSize) {
			fs = append(fs, Finding{Subject: m.Name, Weight: ratio(float64(free), float64(m.DBSize)), Text: fmt.Sprintf(
				"%s of its %s DB (%.0f%%) is free pages: defragmentation gives them back (etcdctl defrag, one member at a time, the leader last: a member blocks while it defragments)",
				humanize.IBytes(uint64(free)), humanize.IBytes(uint64(m.DBSize)), 100*ratio(float64(free), float64(m.DBSize)))})
		}
	}
	if held := r.Root.HeldBytes(); r.History && held >= minHistory && held >= historyFactor*r.Root.Bytes {
		fs = append(fs, Finding{Subject: r.Root.Path, Weight: ratio(float64(held), float64(held+r.Root.Bytes)), Text: fmt.Sprintf(
			"history: %d revisions, %s, %.0f× the current values: etcd keeps every revision until compacted; kube-apiserver compacts every 5m (--etcd-compaction-interval): check that it runs, or compact (etcdctl compact)",
			r.Root.Revisions+r.Root.Tombstones, humanize.IBytes(uint64(held)), ratio(float64(held), float64(r.Root.Bytes)))})
	}
	slices.SortStableFunc(fs, func(a, b Finding) int { return cmp.Compare(b.Weight, a.Weight) })
	return fs
}

// only is f alone when ok, else nothing.
func only(f Finding, ok bool) []Finding {
	if ok {
		return []Finding{f}
	}
	return nil
}

// resources are the nodes of the tree that are a resource's directory.
func resources(root *Node) []*Node {
	var rs []*Node
	var walk func(n *Node)
	walk = func(n *Node) {
		if n.Role == RoleResource {
			rs = append(rs, n)
			return
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(root)
	return rs
}

// weight is n's greatest share of the root among the figures that make it
// a finding: its bytes, keys, churn, history and live rate; 0 for a node
// too small to matter whatever its share.
func weight(n *Node, rates *Rates, history bool) float64 {
	if n.Keys < minNodeKeys && n.Bytes < minNodeBytes && n.Writes < minNodeWrites && rates.Of(n.Path).Revisions < minNodeRate {
		return 0
	}
	root := n.root()
	w := max(ratio(float64(n.Bytes), float64(root.Bytes)), ratio(float64(n.Keys), float64(root.Keys)),
		ratio(float64(n.Writes), float64(root.Writes)))
	if history {
		w = max(w, ratio(float64(n.Revisions+n.Tombstones), float64(root.Revisions+root.Tombstones)))
	}
	if rates != nil {
		w = max(w, ratio(rates.Of(n.Path).Revisions, rates.Total.Revisions))
	}
	return w
}

func eventsFinding(n *Node, rates *Rates, history bool) []Finding {
	w := weight(n, rates, history)
	_, bytes := Share(n, ByBytes, rates, history)
	return only(Finding{Subject: n.Path, Weight: w, Text: fmt.Sprintf(
		"Events: %d keys, %s (%.0f%% of the bytes): kube-apiserver keeps each Event for its --event-ttl (1h by default); a flood of them is usually a workload failing in a loop (find it by namespace below), or lower --event-ttl",
		n.Keys, humanize.IBytes(uint64(n.Bytes)), 100*bytes)}, w >= minShare)
}

func leasesFinding(n *Node, rates *Rates, history bool) []Finding {
	w := weight(n, rates, history)
	nodes := n.Keys
	for _, c := range n.Children {
		if c.Name == "kube-node-lease/" {
			nodes = c.Keys
		}
	}
	expected := float64(nodes) / leaseRenewal.Seconds()
	measured := ""
	if rates != nil {
		measured = fmt.Sprintf(", %.1f/s measured", rates.Of(n.Path).Revisions)
	}
	root := n.root()
	return only(Finding{Subject: n.Path, Weight: w, Text: fmt.Sprintf(
		"Leases: %d keys, %d writes since created (%.0f%% of all): each kubelet renews its node Lease every %v, so %d nodes write %.1f revisions/s%s; history grows by that between compactions",
		n.Keys, n.Writes, 100*ratio(float64(n.Writes), float64(root.Writes)), leaseRenewal, nodes, expected, measured)}, w >= minShare)
}

// hotKeyFinding is the key that takes the greatest share of the writes:
// by live rate when one was measured, else by versions over the revisions
// since the key was created.
func hotKeyFinding(ctx context.Context, r *Report, rates *Rates, name Namer) []Finding {
	var key, what string
	var share float64
	switch {
	case rates != nil && len(rates.Keys) > 0:
		k := rates.Keys[0]
		key, share = k.Key, ratio(k.Revisions, rates.Total.Revisions)
		what = fmt.Sprintf("%.1f writes/s, %.0f%% of the writes measured", k.Revisions, 100*share)
	case len(r.Root.Hottest) > 0:
		k := r.Root.Hottest[0]
		if k.Version < minKeyVersions {
			return nil
		}
		key, share = k.Key, ratio(float64(k.Version), float64(r.Revision-k.CreateRevision+1))
		what = fmt.Sprintf("%d writes since revision %d, %.0f%% of all writes since", k.Version, k.CreateRevision, 100*share)
	default:
		return nil
	}
	if share < minKeyShare {
		return nil
	}
	writer := "its writer not named"
	if name != nil {
		if m, err := name(ctx, key, r.Revision); err != nil {
			writer = "its writer unknown: " + err.Error()
		} else if m != "" {
			writer = "last written by " + m + " (managedFields)"
		}
	}
	return []Finding{{Subject: key, Weight: min(share, 1), Text: fmt.Sprintf(
		"hot key: %s; %s: a controller that rewrites an object in a loop shows here (what it changes: etcdscope history %s)",
		what, writer, key)}}
}

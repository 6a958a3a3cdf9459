package space

import (
	"cmp"
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/etcdview"
)

// fakeSource hands a scan its records, and a status its cluster.
type fakeSource struct {
	recs    []etcdview.ScanRecord
	cluster etcdview.Cluster
	// block makes Scan wait for its context to end.
	block bool
	rev   int64 // the revision read at; 0 is 100
}

func (f *fakeSource) Scan(ctx context.Context, prefix string, opts etcdview.ScanOptions, fn func([]etcdview.ScanRecord) error) (etcdview.ScanResult, error) {
	if f.block {
		if opts.Progress != nil {
			opts.Progress(etcdview.ScanProgress{Phase: etcdview.ScanValues, Done: 1, Total: 2})
		}
		<-ctx.Done()
		return etcdview.ScanResult{}, ctx.Err()
	}
	var in []etcdview.ScanRecord
	for _, r := range f.recs {
		if strings.HasPrefix(r.Key, prefix) {
			in = append(in, r)
		}
	}
	return etcdview.ScanResult{Revision: cmp.Or(f.rev, 100)}, fn(in)
}

func (f *fakeSource) Status(context.Context) (etcdview.Cluster, error) { return f.cluster, nil }

func current(key string, size, version int64) etcdview.ScanRecord {
	return etcdview.ScanRecord{Key: key, Size: size, Version: version, CreateRevision: 90, ModRevision: 99, Current: true}
}

func TestNodesAreLabelledAsKubeApiserverLaysKeysOut(t *testing.T) {
	src := &fakeSource{recs: []etcdview.ScanRecord{
		current("/registry/pods/default/web-0", 10, 1),
		current("/registry/services/specs/default/kubernetes", 10, 1),
		current("/registry/shop.etcdscope.io/carts/default/cart-1", 10, 1),
		current("/registry/minions/node-1", 10, 1),
		current("/registry/masterleases/10.0.0.1", 10, 1),
	}}
	r, err := Run(context.Background(), src, Options{Prefix: "/registry", Depth: 4}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]struct {
		role            Role
		group, resource string
	}{
		"/registry/":                                       {RoleDir, "", ""},
		"/registry/pods/":                                  {RoleResource, "", "pods"},
		"/registry/pods/default/":                          {RoleNamespace, "", "pods"},
		"/registry/pods/default/web-0":                     {RoleObject, "", "pods"},
		"/registry/services/":                              {RoleDir, "", ""},
		"/registry/services/specs/":                        {RoleResource, "", "services"},
		"/registry/services/specs/default/":                {RoleNamespace, "", "services"},
		"/registry/shop.etcdscope.io/":                     {RoleGroup, "shop.etcdscope.io", ""},
		"/registry/shop.etcdscope.io/carts/":               {RoleResource, "shop.etcdscope.io", "carts"},
		"/registry/minions/":                               {RoleResource, "", "nodes"},
		"/registry/minions/node-1":                         {RoleObject, "", "nodes"},
		"/registry/shop.etcdscope.io/carts/default/cart-1": {RoleObject, "shop.etcdscope.io", "carts"},
	} {
		n := r.Find(path)
		if n == nil {
			t.Errorf("no node %s", path)
			continue
		}
		if n.Role != want.role || n.Group != want.group || n.Resource != want.resource {
			t.Errorf("%s is %s %q/%q, want %s %q/%q", path, n.Role, n.Group, n.Resource, want.role, want.group, want.resource)
		}
	}
	// Below a resource, the report's own root is that resource.
	r, err = Run(context.Background(), src, Options{Prefix: "/registry/pods", Depth: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Root.Path != "/registry/pods/" || r.Root.Role != RoleResource || len(r.Root.Children) != 1 {
		t.Errorf("root %s %s with %d children, want /registry/pods/ a resource with default/", r.Root.Path, r.Root.Role, len(r.Root.Children))
	}
}

func TestSharesAndOrderFollowTheMeasure(t *testing.T) {
	src := &fakeSource{recs: []etcdview.ScanRecord{
		current("/registry/events/ns/e1", 100, 1),
		current("/registry/events/ns/e2", 100, 1),
		current("/registry/events/ns/e3", 100, 1),
		current("/registry/configmaps/ns/big", 700, 9),
	}}
	r, err := Run(context.Background(), src, Options{Prefix: "/registry", Depth: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		by    Measure
		first string
		share float64
	}{
		{ByBytes, "configmaps/", 0.7},
		{ByKeys, "events/", 0.75},
		{ByRevisions, "configmaps/", 0.75}, // without history: writes, 9 of 12
	} {
		kids := Sorted(r.Root.Children, c.by, nil, r.History)
		parent, total := Share(kids[0], c.by, nil, r.History)
		if kids[0].Name != c.first || math.Abs(parent-c.share) > 1e-9 || parent != total {
			t.Errorf("by %s: first %s with %.3f of its parent, %.3f of the whole; want %s with %.3f of both", c.by, kids[0].Name, parent, total, c.first, c.share)
		}
	}
	rates := &Rates{Over: time.Second, Nodes: map[string]Rate{"/registry/events/": {Revisions: 5}}}
	if kids := Sorted(r.Root.Children, ByRate, rates, false); kids[0].Name != "events/" {
		t.Errorf("by rate: %s first, want events/", kids[0].Name)
	}
	if _, err := ParseMeasure("size"); err == nil || !strings.Contains(err.Error(), "bytes, keys, revisions or rate") {
		t.Errorf("ParseMeasure(size): %v, want an error naming the measures", err)
	}
}

func TestMaxNodesBoundsTheTreeAndCountsWhatItFolds(t *testing.T) {
	src := &fakeSource{}
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		src.recs = append(src.recs, current("/registry/pods/ns/"+name, 10, 1))
	}
	r, err := Run(context.Background(), src, Options{Prefix: "/registry", Depth: 3, MaxNodes: 5}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ns := r.Find("/registry/pods/ns/")
	// root, pods/, ns/ and two keys: the bound. The other three keys stay
	// in ns/, which counts all five.
	if len(ns.Children) != 2 || ns.Keys != 5 || r.Capped != 3 {
		t.Errorf("ns/ has %d children and %d keys, %d capped; want 2, 5, 3", len(ns.Children), ns.Keys, r.Capped)
	}
}

func TestRunRefusesOptionsThatMeanNothing(t *testing.T) {
	for _, opts := range []Options{{Depth: -1}, {Top: -2}, {Quota: -5}, {Rev: -1}} {
		if _, err := Run(context.Background(), &fakeSource{}, opts, nil); err == nil {
			t.Errorf("Run(%+v) did not fail", opts)
		}
	}
}

func TestJobReportsProgressAndStopsOnCancel(t *testing.T) {
	j := Start(context.Background(), &fakeSource{block: true}, Options{Prefix: "/registry"})
	deadline := time.After(10 * time.Second)
	for j.Progress().Total == 0 {
		select {
		case <-deadline:
			t.Fatal("no progress within 10s")
		case <-time.After(time.Millisecond):
		}
	}
	if p := j.Progress(); p.Done != 1 || p.Total != 2 || p.Phase != etcdview.ScanValues {
		t.Errorf("progress %+v, want 1 of 2 values", p)
	}
	j.Cancel()
	select {
	case <-j.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the job did not end within 10s of Cancel")
	}
	if r, err := j.Result(); r != nil || !errors.Is(err, context.Canceled) {
		t.Errorf("result %v, %v; want no report and context.Canceled", r, err)
	}
}

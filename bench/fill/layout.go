package fill

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"iter"
	"strings"
)

// Layout is how a fill lays out its keys: which resources, over how many
// namespaces, beside keys kube-apiserver never writes. A level of the key
// tree costs an etcd that counts every range (before 3.7) by where its
// children fall, so the bench lists one level of each.
type Layout struct {
	Name string
	// About says what the layout holds, for the bench's table.
	About string
	// Level is the level of the key tree the bench lists.
	Level string
	plan  func(l Layout, keys int) Plan
}

// Plan is the layout's plan for keys keys.
func (l Layout) Plan(keys int) Plan { return l.plan(l, keys) }

// Layouts are the layouts a fill can write, the bench's own first.
var Layouts = []Layout{
	{Name: "cluster", About: "a 5,000-node cluster's proportions", Level: "/registry",
		plan: func(l Layout, keys int) Plan { return scale(l, keys, perMillion) }},
	{Name: "namespaces", About: "7 resources × 500 namespaces", Level: "/registry",
		plan: func(l Layout, keys int) Plan { return scale(l, keys, sevenResources) }},
	{Name: "few", About: "2 resources in 20 namespaces", Level: "/registry",
		plan: func(l Layout, keys int) Plan { return scale(l, keys, twoResources) }},
	{Name: "crds", About: "80% custom resources of 9 API groups", Level: "/registry",
		plan: func(l Layout, keys int) Plan {
			p := scale(l, keys/5, perMillion)
			p.Custom, p.Keys = keys-p.Keys, keys
			return p
		}},
	{Name: "foreign", About: "an application's keys, no Kubernetes", Level: "/app",
		plan: func(l Layout, keys int) Plan { return Plan{Layout: l, Keys: keys, Foreign: keys} }},
}

// LayoutNamed is the layout called name.
func LayoutNamed(name string) (Layout, error) {
	var names []string
	for _, l := range Layouts {
		if l.Name == name {
			return l, nil
		}
		names = append(names, l.Name)
	}
	return Layout{}, fmt.Errorf("no layout %q: one of %s", name, strings.Join(names, ", "))
}

// sevenResources spreads 1M keys evenly over 7 namespaced resources in 500
// namespaces, about 285 objects of each in each; 100 nodes hold the pods.
var sevenResources = []share{
	{"events", 142_400}, {"configmaps", 142_500}, {"endpointslices", 142_500}, {"leases", 142_500},
	{"pods", 142_500}, {"replicasets", 142_500}, {"secrets", 142_500}, {"minions", 100}, {"namespaces", 500},
}

// twoResources is 1M keys of two resources in 20 namespaces: each namespace
// of each resource holds 25,000 objects or more.
var twoResources = []share{{"events", 700_000}, {"pods", 299_880}, {"minions", 100}, {"namespaces", 20}}

// customKind is a custom resource stored as kube-apiserver stores them:
// JSON under /registry/<group>/<plural>/[<namespace>/]<name>.
type customKind struct {
	group, plural, kind string
	namespaced          bool
	weight              int // its share of the custom objects
}

// customKinds are custom resources of operators clusters commonly run,
// some groups with several kinds, one cluster-scoped.
var customKinds = []customKind{
	{"acme.cert-manager.io", "challenges", "Challenge", true, 1},
	{"acme.cert-manager.io", "orders", "Order", true, 1},
	{"argoproj.io", "applications", "Application", true, 2},
	{"cert-manager.io", "certificaterequests", "CertificateRequest", true, 3},
	{"cert-manager.io", "certificates", "Certificate", true, 2},
	{"cilium.io", "ciliumendpoints", "CiliumEndpoint", true, 8},
	{"cilium.io", "ciliumidentities", "CiliumIdentity", false, 3},
	{"kyverno.io", "policyreports", "PolicyReport", true, 4},
	{"monitoring.coreos.com", "podmonitors", "PodMonitor", true, 1},
	{"monitoring.coreos.com", "servicemonitors", "ServiceMonitor", true, 2},
	{"networking.istio.io", "virtualservices", "VirtualService", true, 1},
	{"snapshot.storage.k8s.io", "volumesnapshots", "VolumeSnapshot", true, 2},
	{"velero.io", "backups", "Backup", true, 1},
}

// customEntries are the CRDs of customKinds and n custom objects, shared
// out by weight over the plan's namespaces.
func (p Plan) customEntries(n int) iter.Seq[entry] {
	return func(yield func(entry) bool) {
		weights := 0
		for _, k := range customKinds {
			weights += k.weight
			crd := map[string]any{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
				"metadata": map[string]any{"name": k.plural + "." + k.group, "creationTimestamp": epoch},
				"spec":     map[string]any{"group": k.group, "names": map[string]any{"plural": k.plural, "kind": k.kind}, "scope": scope(k.namespaced)}}
			if !yield(jsonEntry("/registry/apiextensions.k8s.io/customresourcedefinitions/"+k.plural+"."+k.group, crd)) {
				return
			}
			n--
		}
		i := 0
		for ki, k := range customKinds {
			count := n * k.weight / weights
			if ki == len(customKinds)-1 {
				count = n - i
			}
			for range count {
				key := fmt.Sprintf("/registry/%s/%s/", k.group, k.plural)
				name := fmt.Sprintf("%s-%07d", strings.ToLower(k.kind), i)
				meta := map[string]any{"name": name, "uid": fmt.Sprintf("%08x-2222-4000-8000-%012x", i, i), "creationTimestamp": epoch}
				if k.namespaced {
					ns := nsName(i % p.Namespaces)
					key += ns + "/"
					meta["namespace"] = ns
				}
				obj := map[string]any{"apiVersion": k.group + "/v1", "kind": k.kind, "metadata": meta,
					"spec": map[string]any{"owner": fmt.Sprintf("app-%d", i%97), "interval": "30s", "generation": i % 7}}
				if !yield(jsonEntry(key+name, obj)) {
					return
				}
				i++
			}
		}
	}
}

func scope(namespaced bool) string {
	if namespaced {
		return "Namespaced"
	}
	return "Cluster"
}

// services are the first segments of the foreign layout, each with its
// share of the keys: a few large, many small, as an application's stores
// come.
var services = []struct {
	name   string
	weight int
}{
	{"audit-log", 30}, {"billing", 4}, {"cache-index", 20}, {"catalog", 6}, {"checkout", 2}, {"config", 1},
	{"feature-flags", 1}, {"inventory", 8}, {"locks", 1}, {"metrics-rollup", 12}, {"notifications", 3},
	{"orders", 6}, {"payments", 2}, {"search-shards", 4}, {"sessions", 10}, {"users", 5},
}

// foreignEntries are n keys an application keeps in etcd: /app/<service>/
// <shard>/<id>, shards named by a hash (no numbered run), and a leaf or two
// beside the services.
func foreignEntries(n int) iter.Seq[entry] {
	return func(yield func(entry) bool) {
		leaves := []string{"/app/leader", "/app/schema-version"}
		for _, k := range leaves {
			if !yield(rawEntry(k, `{"holder":"app-0","since":"2025-01-01T00:00:00Z"}`)) {
				return
			}
		}
		n -= len(leaves)
		weights := 0
		for _, s := range services {
			weights += s.weight
		}
		i := 0
		for si, s := range services {
			count := n * s.weight / weights
			if si == len(services)-1 {
				count = n - i
			}
			for j := range count {
				h := fnv.New32a()
				fmt.Fprintf(h, "%s/%d", s.name, j%64)
				key := fmt.Sprintf("/app/%s/%08x/item-%07d", s.name, h.Sum32(), j)
				if !yield(rawEntry(key, fmt.Sprintf(`{"id":%d,"service":%q,"payload":"%0128d"}`, i, s.name, i))) {
					return
				}
				i++
			}
		}
	}
}

func jsonEntry(key string, obj any) entry {
	return entry{key: key, encode: func() ([]byte, error) { return json.Marshal(obj) }}
}

func rawEntry(key, value string) entry {
	return entry{key: key, encode: func() ([]byte, error) { return []byte(value), nil }}
}

// KeyNames yields the key of every entry the plan writes, in the order
// written, without encoding a value: the layout, for tests of what
// listing it costs.
func (p Plan) KeyNames() iter.Seq[string] {
	return func(yield func(string) bool) {
		for e := range p.entries() {
			if !yield(e.key) {
				return
			}
		}
	}
}

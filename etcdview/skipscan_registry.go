package etcdview

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/etcdscope/etcdscope/decode"
)

// registryPrefix is kube-apiserver's default --etcd-prefix, as a level.
const registryPrefix = decode.DefaultPrefix + "/"

// registryName is where kube-apiserver stores a resource below its prefix:
// its storage prefix with a "/" ("pods/", "apiregistration.k8s.io/
// apiservices/", "cilium.io/ciliumendpoints/" for a custom resource).
type registryName struct {
	name string
	// namespaced says the segment below it is the namespace, as in
	// pods/<namespace>/<name>.
	namespaced bool
}

// registryNames are the storage prefixes of every resource decode knows,
// sorted.
var registryNames = sync.OnceValue(func() []registryName {
	var names []registryName
	for _, r := range decode.Resources() {
		names = append(names, registryName{r.StoragePrefix + "/", r.Namespaced})
	}
	return sortNames(names)
})

// sortNames sorts names and drops the repeated ones (a resource served in
// two groups is stored once).
func sortNames(names []registryName) []registryName {
	slices.SortFunc(names, func(a, b registryName) int { return strings.Compare(a.name, b.name) })
	return slices.CompactFunc(names, func(a, b registryName) bool { return a.name == b.name })
}

// learnRegistry reads, below kube-apiserver's prefix, the first namespaces
// and the resources CustomResourceDefinitions define, for the heads of
// resources (bounds).
func (s *scan) learnRegistry(ctx context.Context) error {
	if err := s.firstNamespace(ctx); err != nil {
		return err
	}
	return s.customResources(ctx)
}

// firstNamespace reads the first namespace (namespaces/<name>), the one the
// heads of resources reach until the resources found name a greater one.
// etcd walks the namespaces to answer: a few hundred keys, where a resource
// read whole before a namespace is known may walk a hundred thousand.
func (s *scan) firstNamespace(ctx context.Context) error {
	key, end := prefixRange(s.lvl.Prefix + "namespaces/")
	res, err := s.read(ctx, key, end, firstNamespaces)
	for _, kv := range res.kvs {
		name, _ := segment(kv.Key[len(key):])
		s.nss = append(s.nss, strings.TrimSuffix(name, "/")+"/")
	}
	if len(s.nss) > 0 {
		s.ns = s.nss[0]
	}
	return err
}

// firstNamespaces is how many namespaces firstNamespace reads: the first,
// and those after it that a head may be given a second chance up to
// (kine reads the whole of a range however few keys it returns).
const firstNamespaces = 4

// maxCustomResources is how many CustomResourceDefinitions customResources
// reads: every one of nearly every cluster.
const maxCustomResources = 2000

// customResources adds to the names the storage prefix of each custom
// resource, read from the keys of the CustomResourceDefinitions, as
// namespaced: apiextensions-apiserver stores the objects of
// <plural>.<group> under <group>/<plural>/, and a CRD's name is
// <plural>.<group> (its plural is a DNS label, without a dot). Without
// them, a custom resource's group is found by a walk of all of it. A
// cluster-scoped one costs what it did: its head reaches the objects
// named before the first namespace.
func (s *scan) customResources(ctx context.Context) error {
	crd, ok := decode.LookupResource("customresourcedefinitions.apiextensions.k8s.io")
	if !ok {
		return nil
	}
	key, end := prefixRange(s.lvl.Prefix + crd.StoragePrefix + "/")
	res, err := s.read(ctx, key, end, maxCustomResources)
	if err != nil || len(res.kvs) == 0 {
		return err
	}
	names := slices.Clone(s.names)
	for _, kv := range res.kvs {
		plural, group, ok := strings.Cut(kv.Key[len(key):], ".")
		if ok && plural != "" && group != "" && !strings.Contains(plural+group, "/") {
			names = append(names, registryName{group + "/" + plural + "/", true})
		}
	}
	s.names = sortNames(names)
	return nil
}

// nextNamespace is the first namespace read that sorts after s.ns, or "".
func (s *scan) nextNamespace() string {
	for _, ns := range s.nss {
		if ns > s.ns {
			return ns
		}
	}
	return ""
}

// learn notes the namespace a namespaced resource's directory begins with,
// from its first key: the segment after the resource's storage prefix, the
// longest of the names that first's rest begins with.
func (s *scan) learn(first string) {
	rest := first[len(s.lvl.Prefix):]
	var ns string
	for j := range len(rest) {
		if rest[j] != '/' {
			continue
		}
		i, ok := slices.BinarySearchFunc(s.names, rest[:j+1], func(n registryName, name string) int { return strings.Compare(n.name, name) })
		if ok {
			ns = ""
			if s.names[i].namespaced {
				ns, _ = segment(rest[j+1:])
			}
		}
	}
	if strings.HasSuffix(ns, "/") {
		s.ns = max(s.ns, ns)
	}
}

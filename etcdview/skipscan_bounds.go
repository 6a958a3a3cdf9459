package etcdview

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/etcdscope/etcdscope/decode"
)

// nextBatch reads the next batch of keys from start on: first with ranges
// that end early (bounds), where the next entry is likely and etcd's work
// is bounded, then to the end of the level. to is where the range that
// answered ends.
//
// A range to the end of the level costs etcd more than its batch: through
// RangeStream (etcd 3.7 and later), etcd goes on reading chunks until it
// sees the hang up (about 3 ms on 2 cores, against 0.4 ms for a range that
// ends); before 3.7 (counted), etcd walks its index over the whole range to
// count it, however small the limit (mvcc's treeIndex.Revisions, about 150
// ns a key on etcd 3.4), where an empty range costs a round trip (0.1 to
// 0.2 ms).
func (s *scan) nextBatch(ctx context.Context, start, end string) (rangeResult, string, error) {
	for _, bound := range s.bounds(start) {
		res, err := s.read(ctx, start, bound, scanBatch)
		if err != nil || len(res.kvs) > 0 {
			return res, bound, err
		}
		start = bound
	}
	res, err := s.read(ctx, start, end, scanBatch)
	return res, end, err
}

// read is the first limit keys of [key, end) at the level's revision: the
// one asked for, or the newest as of the first answer (a Range's header
// revision is the newest even when it reads an older one). Each answer says
// whether etcd counts.
func (s *scan) read(ctx context.Context, key, end string, limit int64) (rangeResult, error) {
	res, err := s.r.rangeKeys(ctx, rangeRequest{key: key, end: end, rev: s.lvl.Revision, limit: limit, keysOnly: true, uncounted: true})
	if err != nil {
		return res, err
	}
	s.counted, s.whole = res.counted, res.whole
	if s.lvl.Revision == 0 {
		s.lvl.Revision = res.rev
	}
	return res, nil
}

// maxProbes bounds the narrow ranges tried after a run of directories, and
// maxBuckets the first-byte buckets tried on an etcd that counts, before the
// range to the end of the level.
const (
	maxProbes  = 3
	maxBuckets = 16
)

// bounds are the ends of the ranges nextBatch tries before the one to the
// end of the level, in the order tried, each past the one before:
//
//   - The end of the directory the last range ended inside, so that the rest
//     of it is counted on its own.
//   - On an etcd that counts, below kube-apiserver's prefix, each namespaced
//     resource it may store, in turn, up to the head of its directory: its
//     keys in the namespaces up to s.ns (pods/team-000/... for team-000/).
//     etcd walks every key up to the end of a range it counts, so a resource
//     that has objects there is found after a walk of those, not of the
//     resource, and the rest of it is never read. A resource with none
//     there is read whole by the range to the next head, as is a resource
//     that is not namespaced: a bound at its end would cost the same walk,
//     and a round trip more. On kine, whose round trip costs less than a
//     listing of a few thousand keys, each head gets a second chance up to
//     the namespace after s.ns: a resource whose first namespace holds
//     none of it (Events expired there) is found there, not read whole.
//   - After a directory too large for its batch, in a run of directories
//     with a common stem (namespaces team-041/, team-042/), the name that
//     would follow (team-043) and the ends of shorter and shorter prefixes
//     of the last name (team-04, team-0).
//   - Elsewhere on an etcd that counts, the first-byte buckets from start on
//     (the rest of c, then d, e, ...): etcd walks one bucket for each entry,
//     where the range to the end would walk every key after it.
func (s *scan) bounds(start string) []string {
	var bounds []string
	add := func(bound string) {
		if bound != "\x00" && bound > start && (len(bounds) == 0 || bound > bounds[len(bounds)-1]) {
			bounds = append(bounds, bound)
		}
	}
	addPrefix := func(p string) {
		_, end := prefixRange(s.lvl.Prefix + p)
		add(end)
	}
	children := s.lvl.Children
	n := len(children)
	if s.open {
		_, end := prefixRange(children[n-1].Prefix)
		add(end)
	}
	if s.ns != "" && s.counted {
		next := s.nextNamespace()
		for _, name := range s.names {
			if name.namespaced {
				addPrefix(name.name + s.ns)
				if next != "" && s.whole {
					addPrefix(name.name + next)
				}
			}
		}
		return bounds
	}
	if n >= 2 && children[n-1].Count == CountUnknown && children[n-2].Dir {
		for _, p := range runPrefixes(children[n-1].Name, children[n-2].Name) {
			addPrefix(p)
		}
	}
	if s.counted && n > 0 && len(start) > len(s.lvl.Prefix) {
		for b := int(start[len(s.lvl.Prefix)]); b <= 0xff && b < int(start[len(s.lvl.Prefix)])+maxBuckets; b++ {
			addPrefix(string([]byte{byte(b)}))
		}
	}
	return bounds
}

// runPrefixes are the prefixes of the next directory of a run after last,
// which follows prev: none unless they have a stem of two bytes or more in
// common. First the name that would follow in a numbered run (team-043 after
// team-042/), then shorter and shorter prefixes of last (team-04, team-0).
func runPrefixes(last, prev string) []string {
	stem := 0
	for stem < len(last) && stem < len(prev) && last[stem] == prev[stem] {
		stem++
	}
	if stem < 2 {
		return nil
	}
	name := last[:len(last)-1]
	var prefixes []string
	if c := name[len(name)-1]; c < 0xff {
		prefixes = append(prefixes, name[:len(name)-1]+string([]byte{c + 1}))
	}
	for k := len(name); k >= stem && len(prefixes) < maxProbes; k-- {
		prefixes = append(prefixes, name[:k])
	}
	return prefixes
}

// registryPrefix is kube-apiserver's default --etcd-prefix, as a level.
const registryPrefix = decode.DefaultPrefix + "/"

// registryName is an entry kube-apiserver stores below its prefix: the first
// segment of a resource's storage prefix ("pods/", "services/",
// "apiextensions.k8s.io/").
type registryName struct {
	name string
	// namespaced says the segment below it is the namespace, as in
	// pods/<namespace>/<name>.
	namespaced bool
}

// registryNames are the first segments of every storage prefix decode
// knows, sorted.
var registryNames = sync.OnceValue(func() []registryName {
	byName := map[string]bool{}
	for _, r := range decode.Resources() {
		first, rest, _ := strings.Cut(r.StoragePrefix, "/")
		ns, seen := byName[first+"/"]
		byName[first+"/"] = (ns || !seen) && r.Namespaced && rest == ""
	}
	var names []registryName
	for name, ns := range byName {
		names = append(names, registryName{name, ns})
	}
	slices.SortFunc(names, func(a, b registryName) int { return strings.Compare(a.name, b.name) })
	return names
})

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

// nextNamespace is the first namespace read that sorts after s.ns, or "".
func (s *scan) nextNamespace() string {
	for _, ns := range s.nss {
		if ns > s.ns {
			return ns
		}
	}
	return ""
}

// learn notes the namespace a namespaced resource's directory c begins
// with, from its first key.
func (s *scan) learn(c Child, first string) {
	i, ok := slices.BinarySearchFunc(s.names, c.Name, func(n registryName, name string) int { return strings.Compare(n.name, name) })
	if !ok || !s.names[i].namespaced {
		return
	}
	if ns, dir := segment(first[len(c.Prefix):]); dir {
		s.ns = max(s.ns, ns)
	}
}

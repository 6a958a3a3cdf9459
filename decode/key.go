package decode

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// DefaultPrefix is kube-apiserver's default --etcd-prefix.
const DefaultPrefix = "/registry"

// compactRevKey is written at the root of the keyspace (outside any prefix) by
// the API server's compactor (k8s.io/apiserver/pkg/storage/etcd3.compact) to
// agree on the last compacted revision between API servers.
const compactRevKey = "compact_rev_key"

// Key is an etcd key read the way kube-apiserver lays its keys out:
// <prefix>/<storage prefix>[/<namespace>]/<name>.
type Key struct {
	Raw    string // the key exactly as stored, possibly not UTF-8
	Prefix string // the matched --etcd-prefix, "" when outside every prefix

	// StoragePrefix is the key segment(s) naming the resource in etcd: usually
	// the plural resource, but "minions" for nodes, "services/specs" for
	// services, "<group>/<plural>" for custom resources.
	StoragePrefix string
	Group         string // API group, "" for core or when not known
	Resource      string // plural resource as the API serves it ("nodes"), or StoragePrefix when not known
	Namespace     string // "" for cluster-scoped objects
	Name          string

	// IsObject is true when the key holds one object rather than being a
	// directory-like prefix, a marker, or a key from outside the prefix.
	IsObject bool
	// Note says in plain words what a non-object key is, or what is special
	// about an object key ("API server compaction marker").
	Note string
}

// KeyParser parses keys under one or more etcd prefixes. OpenShift 3 runs its
// API servers with /kubernetes.io and /openshift.io.
type KeyParser struct {
	Prefixes []string // each without a trailing slash; empty means DefaultPrefix
}

// ParseKey parses key under DefaultPrefix.
func ParseKey(key string) Key { return KeyParser{}.Parse(key) }

// Parse splits key into resource, namespace and name.
func (p KeyParser) Parse(key string) Key {
	k := Key{Raw: key}
	if key == compactRevKey {
		k.Note = "API server compaction marker (last compacted revision)"
		return k
	}
	prefixes := p.Prefixes
	if len(prefixes) == 0 {
		prefixes = []string{DefaultPrefix}
	}
	var rest string
	for _, prefix := range prefixes {
		prefix = strings.TrimSuffix(prefix, "/")
		if key == prefix {
			k.Prefix = prefix
			k.Note = "the prefix itself"
			return k
		}
		if r, ok := strings.CutPrefix(key, prefix+"/"); ok {
			k.Prefix, rest = prefix, r
			break
		}
	}
	if k.Prefix == "" {
		k.Note = "outside " + strings.Join(prefixes, ", ")
		return k
	}
	segs := strings.Split(rest, "/")
	res, n := storageResourceFor(segs)
	k.StoragePrefix = strings.Join(segs[:n], "/")
	k.Group, k.Resource = res.Group, res.Resource
	if k.Resource == "" {
		k.Resource = k.StoragePrefix
	}
	return k.place(res, segs[n:])
}

// place fills namespace and name from the segments after the storage prefix.
// Object names never contain "/" (path segment names are validated by
// k8s.io/apiserver/pkg/registry/generic/registry.NamespaceKeyFunc), so the
// segment count tells namespaced from cluster-scoped when the resource is not
// known.
func (k Key) place(res Resource, tail []string) Key {
	for _, s := range tail {
		if s == "" {
			k.Note = "empty path segment"
			return k
		}
	}
	switch {
	case res.Singleton:
		k.IsObject = len(tail) == 0
	case len(tail) == 1 && (!res.known() || !res.Namespaced):
		k.Name, k.IsObject = tail[0], true
	case len(tail) == 2 && (!res.known() || res.Namespaced):
		k.Namespace, k.Name, k.IsObject = tail[0], tail[1], true
	}
	if !k.IsObject {
		if len(tail) <= 1 {
			k.Namespace = strings.Join(tail, "")
			k.Note = "a directory of " + k.Resource + ", not an object"
		} else {
			k.Note = "not laid out as " + k.Resource + " keys are"
		}
	}
	if k.IsObject && res.Note != "" {
		k.Note = res.Note
	}
	return k
}

// String is the key fit for a terminal: as stored when it is printable UTF-8,
// otherwise Go-quoted so binary bytes show as escapes rather than mangled runes.
func (k Key) String() string { return EscapeKey(k.Raw) }

// EscapeKey returns key unchanged when it is printable UTF-8 and its
// strconv.Quote form otherwise.
func EscapeKey(key string) string {
	if utf8.ValidString(key) && strings.IndexFunc(key, func(r rune) bool { return !unicode.IsPrint(r) }) < 0 {
		return key
	}
	return strconv.Quote(key)
}

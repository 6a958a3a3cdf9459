// Package space is where etcd's bytes and writes go, for every node of the
// key tree: keys, bytes of the current values, the revisions etcd still
// holds (history) and their bytes, the writes each node took since its
// objects were created (churn), the largest objects and the hottest keys,
// the live rate of writes, each member's DB size against its quota, and
// guidance on the top findings. It reads through a Source (etcdview's Live
// or File) and never writes: it suggests, and never compacts or
// defragments.
//
// Memory is bounded by the tree, not the store: aggregates per node down to
// Options.Depth, and the top-N lists.
package space

import (
	"fmt"
	"strings"

	"github.com/dustin/go-humanize"
	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/etcdview"
)

// Role is what a node of the tree is in kube-apiserver's key layout, as
// decode parses its keys.
type Role string

const (
	RoleDir       Role = "dir"       // a directory decode names no part of
	RoleGroup     Role = "group"     // an API group's directory (custom resources)
	RoleResource  Role = "resource"  // every object of one resource
	RoleNamespace Role = "namespace" // one namespace's objects of a resource
	RoleObject    Role = "object"    // one object's key
	RoleKey       Role = "key"       // a key that holds no object
)

// Stats are the figures of one node: the sums over the keys below it.
type Stats struct {
	Keys  int64 // keys that exist as of the revision read
	Bytes int64 // their keys' and values' bytes
	// Writes is the churn: the writes the current keys took since each
	// was last created, the sum of their versions (no history read).
	Writes int64
	// WritesUnknown are the current keys whose writes are not known (a
	// kine file whose compaction deleted their creation, kine keeping no
	// version): Writes is then the others' alone, a lower bound.
	WritesUnknown int64
	// Revisions are the revisions etcd still holds that put a value, the
	// current ones included, and RevisionBytes their bytes; Tombstones
	// and TombstoneBytes the deletions it holds. Zero unless the report
	// read history.
	Revisions      int64
	RevisionBytes  int64
	Tombstones     int64
	TombstoneBytes int64
}

// WritesText is Writes as du shows it: "-" when no key's writes are
// known, "≥N" when some are not (N is then a lower bound).
func (s Stats) WritesText() string {
	switch {
	case s.Keys > 0 && s.WritesUnknown == s.Keys:
		return "-"
	case s.WritesUnknown > 0:
		return fmt.Sprintf("≥%d", s.Writes)
	}
	return fmt.Sprint(s.Writes)
}

// VersionText is a key's version as du shows it: "-" where the source
// keeps none (kine) or cannot know it.
func VersionText(version int64) string {
	if version <= 0 {
		return "-"
	}
	return fmt.Sprint(version)
}

// QuotaText is a member's quota and the share of it its DB uses, "-" for
// a store that has none (kine).
func QuotaText(m Member) (quota, share string) {
	if m.Quota <= 0 {
		return "-", "-"
	}
	return humanize.IBytes(uint64(m.Quota)), fmt.Sprintf("%.1f%%", 100*float64(m.DBSize)/float64(m.Quota))
}

// Plus is the sum of s and o.
func (s Stats) Plus(o Stats) Stats {
	return Stats{Keys: s.Keys + o.Keys, Bytes: s.Bytes + o.Bytes, Writes: s.Writes + o.Writes, WritesUnknown: s.WritesUnknown + o.WritesUnknown, Revisions: s.Revisions + o.Revisions,
		RevisionBytes: s.RevisionBytes + o.RevisionBytes, Tombstones: s.Tombstones + o.Tombstones, TombstoneBytes: s.TombstoneBytes + o.TombstoneBytes}
}

// HeldBytes is every byte of history etcd holds: values and deletions.
func (s Stats) HeldBytes() int64 { return s.RevisionBytes + s.TombstoneBytes }

// Node is one node of the tree: the prefix, a directory below it, or a key.
type Node struct {
	Name  string // the path segment: "pods/", "default/", "web-0"
	Path  string // the whole prefix, or the key: "/registry/pods/default/"
	Depth int    // 0 for the prefix the report was asked for
	Role  Role
	// Group and Resource are the API group and resource the node's keys
	// belong to, when the node is at or below a resource ("" otherwise, and
	// Group "" for the core group).
	Group, Resource string
	Stats
	// Largest and Hottest are the top keys below a directory by bytes and
	// by version (writes since creation), first the largest; nil for a key.
	Largest, Hottest []KeyStat
	Children         []*Node // by name

	parent   *Node
	byName   map[string]*Node
	largest  topN
	hottest  topN
	labelled bool
}

// Parent is the node above n, nil for the root.
func (n *Node) Parent() *Node { return n.parent }

func (n *Node) root() *Node {
	for n.parent != nil {
		n = n.parent
	}
	return n
}

// IsKey says n is a key, not a directory.
func (n *Node) IsKey() bool { return n.Role == RoleObject || n.Role == RoleKey }

// KeyStat is one key in a top list.
type KeyStat struct {
	Key            string
	Size           int64 // key and value bytes
	Version        int64 // writes since the key was created; etcdview.VersionUnknown when not known
	CreateRevision int64
	ModRevision    int64
}

// builder adds scan records to a tree.
type builder struct {
	root     *Node
	dir      string // the root's path, as a directory
	depth    int
	top      int
	maxNodes int
	nodes    int
	// capped counts the current keys whose nodes at the asked depth were
	// not made, for maxNodes: their figures stay in the deepest node made.
	capped int64
}

func newBuilder(dir string, depth, top, maxNodes int) *builder {
	root := &Node{Name: dir, Path: dir, Role: RoleDir}
	root.largest, root.hottest = newTopN(top, bySize), newTopN(top, byVersion)
	return &builder{root: root, dir: dir, depth: depth, top: top, maxNodes: maxNodes, nodes: 1}
}

// add counts one record in every node on its key's path.
func (b *builder) add(rec etcdview.ScanRecord) {
	if !strings.HasPrefix(rec.Key, b.dir) {
		return
	}
	var ks KeyStat
	if rec.Current {
		ks = KeyStat{Key: rec.Key, Size: rec.Size, Version: rec.Version, CreateRevision: rec.CreateRevision, ModRevision: rec.ModRevision}
	}
	n, at := b.root, len(b.dir)
	for {
		n.count(&rec, &ks)
		if n.Depth == b.depth || at == len(rec.Key) || n.IsKey() {
			return
		}
		name, dir := Segment(rec.Key[at:])
		next := n.byName[name]
		if next == nil {
			if b.nodes >= b.maxNodes {
				if rec.Current {
					b.capped++
				}
				return
			}
			next = b.newChild(n, name, dir, rec.Key)
		}
		n, at = next, at+len(name)
	}
}

func (b *builder) newChild(parent *Node, name string, dir bool, key string) *Node {
	n := &Node{Name: name, Path: parent.Path + name, Depth: parent.Depth + 1, parent: parent}
	n.label(key, dir)
	if dir {
		n.largest, n.hottest = newTopN(b.top, bySize), newTopN(b.top, byVersion)
	}
	if parent.byName == nil {
		parent.byName = map[string]*Node{}
	}
	parent.byName[name] = n
	parent.Children = append(parent.Children, n)
	b.nodes++
	return n
}

// count adds rec to n's figures, and a current key to its top lists.
func (n *Node) count(rec *etcdview.ScanRecord, ks *KeyStat) {
	if !n.labelled {
		n.label(rec.Key, n.Path != rec.Key)
	}
	if rec.Current {
		n.Keys++
		n.Bytes += rec.Size
		n.largest.offer(ks)
		// A current key's version is 1 or more on etcd; 0 is kine's,
		// which keeps none.
		if rec.Version == etcdview.VersionUnknown || rec.Version == 0 {
			n.WritesUnknown++
		} else {
			n.Writes += rec.Version
			n.hottest.offer(ks)
		}
	}
	if rec.Retained {
		if rec.Tombstone {
			n.Tombstones++
			n.TombstoneBytes += rec.Size
		} else {
			n.Revisions++
			n.RevisionBytes += rec.Size
		}
	}
}

// label names what n is from one key below it (or n's own key), by
// decode's parse: how many segments the resource's storage prefix takes
// after the etcd prefix tells a group's directory from a resource's, and
// the one after it the namespace.
func (n *Node) label(key string, dir bool) {
	n.labelled = true
	k := decode.ParseKey(key)
	if !dir {
		n.Role = RoleKey
		if k.IsObject {
			n.Role = RoleObject
		}
		n.Group, n.Resource = k.Group, k.Resource
		return
	}
	n.Role = RoleDir
	if k.Prefix == "" || !strings.HasPrefix(n.Path, k.Prefix+"/") {
		return
	}
	segs := strings.Count(n.Path[len(k.Prefix)+1:], "/")
	storage := strings.Count(k.StoragePrefix, "/") + 1
	switch {
	case segs == 0:
	case segs < storage:
		if k.Group != "" && strings.HasPrefix(k.StoragePrefix, k.Group+"/") {
			n.Role, n.Group = RoleGroup, k.Group
		}
	case segs == storage:
		n.Role, n.Group, n.Resource = RoleResource, k.Group, k.Resource
	case segs == storage+1 && k.Namespace != "":
		n.Role, n.Group, n.Resource = RoleNamespace, k.Group, k.Resource
	}
}

// finish sorts every level by name and turns the top heaps into lists.
func (n *Node) finish() {
	n.byName = nil
	n.Largest, n.Hottest = n.largest.sorted(), n.hottest.sorted()
	sortByName(n.Children)
	for _, c := range n.Children {
		c.finish()
	}
}

// Segment is the first path segment of rest: up to and including the first
// "/" after its first byte, as etcdview's levels name their entries, so that
// "/registry/pods/x" below the empty prefix opens "/registry/". dir is false
// when rest is a whole key.
func Segment(rest string) (name string, dir bool) {
	if len(rest) < 2 {
		return rest, false
	}
	if i := strings.IndexByte(rest[1:], '/'); i >= 0 {
		return rest[:i+2], true
	}
	return rest, false
}

package space

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/etcdscope/etcdscope/etcdview"
)

// Source is what a report reads: etcdview's Live and File.
type Source interface {
	Scan(ctx context.Context, prefix string, opts etcdview.ScanOptions, fn func([]etcdview.ScanRecord) error) (etcdview.ScanResult, error)
	Status(ctx context.Context) (etcdview.Cluster, error)
}

// Defaults of Options.
const (
	DefaultDepth    = 2
	DefaultTop      = 10
	DefaultMaxNodes = 250_000
	// DefaultQuota is etcd's default --quota-backend-bytes
	// (storage.DefaultQuotaBytes).
	DefaultQuota = 2 << 30
)

// Options say what a report reads and keeps.
type Options struct {
	// Prefix is read as a directory ("/registry" is "/registry/"); "" is
	// the whole keyspace.
	Prefix string
	Rev    int64 // the revision to read at; 0 is the newest
	// Depth is how many levels below Prefix the tree keeps: 0 keeps the
	// prefix alone. Each level costs memory in proportion to its nodes:
	// kube-apiserver's objects are at depth 3 (pods/NS/NAME) or 4 (a
	// custom resource's GROUP/PLURAL/NS/NAME).
	Depth int
	Top   int // keys in each top list; 0 means DefaultTop
	// MaxNodes bounds the nodes of the tree; 0 means DefaultMaxNodes.
	// Keys whose nodes would pass it are counted in the deepest node made
	// (Report.Capped).
	MaxNodes int
	// History asks a live etcd for the revisions it holds (see
	// etcdview.ScanOptions.History); a data file always has them.
	History bool
	// Quota is the members' --quota-backend-bytes; 0 means DefaultQuota.
	Quota int64
}

func (o Options) withDefaults() Options {
	if o.Top == 0 {
		o.Top = DefaultTop
	}
	if o.MaxNodes == 0 {
		o.MaxNodes = DefaultMaxNodes
	}
	if o.Quota == 0 {
		o.Quota = DefaultQuota
	}
	return o
}

// check refuses options that mean nothing.
func (o Options) check() error {
	switch {
	case o.Depth < 0:
		return fmt.Errorf("depth %d: want 0 or more", o.Depth)
	case o.Top < 0:
		return fmt.Errorf("top %d: want 0 or more", o.Top)
	case o.Quota < 0:
		return fmt.Errorf("quota %d bytes: want more than 0", o.Quota)
	case o.Rev < 0:
		return fmt.Errorf("revision %d: want 0 (the newest) or more", o.Rev)
	}
	return nil
}

// Report is where the bytes and writes below a prefix go, as of one
// revision.
type Report struct {
	Options  Options // as asked, with the defaults filled in: Run again to refresh
	Source   string  // the source's description
	Revision int64   // the revision read at
	// CompactRevision is the last compaction, when known: the history
	// held starts after it.
	CompactRevision int64
	History         bool // the Stats' history figures were read
	// Kine is true when kine answered (live, or its SQLite file): no
	// version per key, no quota.
	Kine    bool
	Root    *Node
	Members []Member
	Layout  *etcdview.Layout // a data file's pages; nil for a live etcd
	// Capped counts the keys whose nodes the MaxNodes bound kept from the
	// tree.
	Capped int64
	Took   time.Duration
}

// Member is one etcd member's space.
type Member struct {
	Name, Endpoint string
	Leader         bool
	DBSize         int64 // what etcd checks against its quota
	// InUse is the DB size less its free pages; 0 when the member does
	// not report it (before etcd 3.4).
	InUse  int64
	Quota  int64 // 0: none (kine)
	Alarms []string
	Err    error // why the member could not be asked
}

// Reclaimable is what defragmentation would give back: the free pages
// inside the DB size. 0 when not known.
func (m Member) Reclaimable() int64 {
	if m.InUse == 0 {
		return 0
	}
	return m.DBSize - m.InUse
}

// Progress is how far a report's read is.
type Progress = etcdview.ScanProgress

// Run reads the report opts ask for from src. progress, when not nil, is
// told how far the read is, from the goroutine that reads.
func Run(ctx context.Context, src Source, opts Options, progress func(Progress)) (*Report, error) {
	if err := opts.check(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	start := time.Now()
	cl, err := src.Status(ctx)
	if err != nil {
		return nil, err
	}
	dir := asDir(opts.Prefix)
	b := newBuilder(dir, opts.Depth, opts.Top, opts.MaxNodes)
	res, err := src.Scan(ctx, dir, etcdview.ScanOptions{Rev: opts.Rev, History: opts.History, Progress: progress},
		func(recs []etcdview.ScanRecord) error {
			for _, r := range recs {
				b.add(r)
			}
			return nil
		})
	if err != nil {
		return nil, err
	}
	b.root.finish()
	r := &Report{
		Options: opts, Source: cl.Description, Revision: res.Revision, CompactRevision: max(res.CompactRevision, cl.CompactRevision),
		History: res.History, Kine: cl.Kine, Root: b.root, Layout: res.Layout, Capped: b.capped,
	}
	r.Members = members(cl, res.Layout, opts.Quota)
	r.Took = time.Since(start)
	return r, nil
}

// members are the cluster's members' space. A data file's is its layout:
// its DB size as etcd would report it, and in use.
func members(cl etcdview.Cluster, layout *etcdview.Layout, quota int64) []Member {
	var ms []Member
	for _, m := range cl.Members {
		sm := Member{Name: m.Name, Endpoint: m.Endpoint, Leader: m.Leader, DBSize: m.DBSize, InUse: m.DBInUse,
			Quota: quota, Alarms: m.Alarms, Err: m.Err}
		if cl.Kine {
			// kine's store has no quota: it grows until its disk is full.
			sm.Quota = 0
		}
		if layout != nil {
			sm.DBSize, sm.InUse = layout.Size, layout.InUse
		}
		ms = append(ms, sm)
	}
	return ms
}

// asDir is prefix read as a directory: /registry is /registry/.
func asDir(prefix string) string {
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		return prefix + "/"
	}
	return prefix
}

// Find is the node at path (a directory's path ends in "/"), nil when the
// tree has none.
func (r *Report) Find(path string) *Node {
	n := r.Root
	if !strings.HasPrefix(path, n.Path) {
		return nil
	}
	for n.Path != path {
		name, _ := Segment(path[len(n.Path):])
		var next *Node
		for _, c := range n.Children {
			if c.Name == name {
				next = c
				break
			}
		}
		if next == nil {
			return nil
		}
		n = next
	}
	return n
}

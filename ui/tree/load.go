package tree

import (
	"fmt"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/etcdscope/etcdscope/decode/table"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/ui/common"
)

// pageThreshold is the key count above which a level is first tried as a
// paged List: Children ranges 100 keys per round trip, List 500 keys per
// page, and a leaf level of 100k objects needs only the pages in view.
const pageThreshold = 2000

// listFirst says whether a directory of count keys is first read as a page
// of List: a large one, or one Children left uncounted, may be a leaf level
// of objects. A first page that holds directories costs one range before
// Children.
func listFirst(count int64) bool { return count == etcdview.CountUnknown || count > pageThreshold }

// loaded is one level as read from the source.
type loaded struct {
	prefix   string
	rev      int64
	children []etcdview.Child
	// count is how many keys below the level are known: the sum of its
	// children's counts, or, when paged, the level's own. uncounted is how
	// many of those counts (children's, or the paged level's) are unknown.
	count     int64
	uncounted int
	// paged is a leaf level read by List a page at a time; next is its
	// next page, nil once the last is read.
	paged bool
	next  *etcdview.PageToken
	// mods are the children's mod_revisions, 0 while not known (a level
	// read by Children learns them as its rows are read).
	mods []int64
	// res makes the rows of a leaf level of objects, nil on any other
	// level; resErr is why a leaf level has none.
	res    *table.Resource
	resErr error
}

// keepResource gives a level read again the resource old resolved: it is
// the same resource, and a custom one costs a read of every CRD. A level
// read by Children learns no mod_revisions: its keys keep old's, so that
// their rows stay on screen, and are returned as stale, to read again.
func (ld *loaded) keepResource(old *loaded) (stale map[string]bool) {
	if _, ok := objectsOf(ld); !ok || old.res == nil {
		return nil
	}
	ld.res, ld.resErr = old.res, old.resErr
	if ld.mods != nil {
		return nil
	}
	ld.mods = make([]int64, len(ld.children))
	had := make(map[string]int64, len(old.children))
	for i, ch := range old.children {
		if old.mods[i] != 0 {
			had[ch.Prefix] = old.mods[i]
		}
	}
	stale = map[string]bool{}
	for i, ch := range ld.children {
		if mod, ok := had[ch.Prefix]; ok {
			ld.mods[i] = mod
			stale[ch.Prefix] = true
		}
	}
	return stale
}

// size is the level's number of keys, CountUnknown until all are counted.
func (ld *loaded) size() int64 {
	if ld.uncounted > 0 {
		return etcdview.CountUnknown
	}
	return ld.count
}

// tally sums the children's known counts.
func (ld *loaded) tally() {
	ld.count, ld.uncounted = 0, 0
	for _, ch := range ld.children {
		if ch.Count == etcdview.CountUnknown {
			ld.uncounted++
			continue
		}
		ld.count += ch.Count
	}
}

// LevelsMsg carries the levels of a path, root first, read for request gen;
// or, when one of them failed, err and no level.
type LevelsMsg struct {
	gen    int
	levels []loaded
	// selected is the child to put the cursor on in the last level.
	selected string
	// reload says the one level replaces the open level of the same prefix.
	reload bool
	took   time.Duration
	err    error
}

// PageMsg carries the next page of a paged level.
type PageMsg struct {
	gen    int
	prefix string
	page   etcdview.Page
	err    error
}

// loadPath reads every level from root down to prefix, so a jump to
// /registry/pods/default/ shows the counts on the way.
func loadPath(c common.Common, resolve table.Resolver, gen int, root, path string, rev int64, selected string) tea.Cmd {
	return func() tea.Msg {
		msg := LevelsMsg{gen: gen, selected: selected}
		var parent []etcdview.Child
		for i, prefix := range pathPrefixes(root, path) {
			// The root holds a directory per resource, never objects;
			// each level below takes its count from its entry in the
			// parent.
			count, tryList := int64(0), false
			if i > 0 {
				count = childCount(parent, prefix)
				tryList = listFirst(count)
			}
			l, err := loadLevel(c, prefix, count, rev, tryList)
			if err != nil {
				return LevelsMsg{gen: gen, err: err}
			}
			msg.levels = append(msg.levels, l)
			parent = l.children
		}
		resolveOpen(c, resolve, &msg.levels[len(msg.levels)-1])
		return msg
	}
}

// loadOne reads one level below an open one, or, with reload, the open
// level again; resolve (nil on a reload) finds its resource.
func loadOne(c common.Common, resolve table.Resolver, gen int, prefix string, count, rev int64, tryList, reload bool) tea.Cmd {
	return func() tea.Msg {
		start := time.Now()
		l, err := loadLevel(c, prefix, count, rev, tryList)
		if err == nil {
			resolveOpen(c, resolve, &l)
		}
		msg := LevelsMsg{gen: gen, reload: reload, took: time.Since(start), err: err}
		if err == nil {
			msg.levels = []loaded{l}
		}
		return msg
	}
}

// loadLevel reads the level of count keys (CountUnknown when not counted)
// below prefix, with tryList first as a leaf level paged by List, else by
// Children, whose large directories are then left to count.
func loadLevel(c common.Common, prefix string, count, rev int64, tryList bool) (loaded, error) {
	ctx, cancel := c.Context()
	defer cancel()
	if tryList {
		p, err := c.Src.List(ctx, prefix, rev, etcdview.PageToken{})
		if err != nil {
			return loaded{}, fmt.Errorf("list %s: %w", prefix, err)
		}
		if direct(prefix, p.Keys) {
			return pagedLevel(prefix, count, p), nil
		}
	}
	l, err := c.Src.Children(ctx, prefix, rev)
	if err != nil {
		return loaded{}, fmt.Errorf("read %s: %w", prefix, err)
	}
	ld := loaded{prefix: prefix, rev: l.Revision, children: l.Children}
	ld.tally()
	return ld, nil
}

// resolveOpen finds the resource of the level about to open, when it is a
// leaf level of objects.
func resolveOpen(c common.Common, resolve table.Resolver, ld *loaded) {
	if resolve == nil {
		return
	}
	ctx, cancel := c.Context()
	defer cancel()
	resolveLevel(ctx, resolve, ld)
	if ld.res != nil && ld.mods == nil {
		ld.mods = make([]int64, len(ld.children))
	}
}

// pagedLevel is a leaf level from its first page. Its size is count, or the
// page's when it is the only one, or, when count is unknown, left to count.
func pagedLevel(prefix string, count int64, p etcdview.Page) loaded {
	ld := loaded{prefix: prefix, rev: p.Revision, children: keyChildren(prefix, p.Keys), mods: keyMods(p.Keys), count: count, paged: true, next: p.Next}
	switch {
	case p.Next == nil:
		ld.count = int64(len(p.Keys))
	case count == etcdview.CountUnknown:
		ld.count, ld.uncounted = 0, 1
	}
	return ld
}

func loadPage(c common.Common, gen int, prefix string, rev int64, token etcdview.PageToken) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := c.Context()
		defer cancel()
		p, err := c.Src.List(ctx, prefix, rev, token)
		if err != nil {
			err = fmt.Errorf("list %s after %s: %w", prefix, token.After, err)
		}
		return PageMsg{gen: gen, prefix: prefix, page: p, err: err}
	}
}

// direct reports whether every key is right below prefix: a leaf level.
func direct(prefix string, kvs []etcdview.KV) bool {
	for _, kv := range kvs {
		if strings.Contains(kv.Key[len(prefix):], "/") {
			return false
		}
	}
	return len(kvs) > 0
}

func keyChildren(prefix string, kvs []etcdview.KV) []etcdview.Child {
	out := make([]etcdview.Child, len(kvs))
	for i, kv := range kvs {
		out[i] = etcdview.Child{Name: kv.Key[len(prefix):], Prefix: kv.Key, Count: 1}
	}
	return out
}

// keyMods are the mod_revisions of kvs, which List reads with the keys.
func keyMods(kvs []etcdview.KV) []int64 {
	out := make([]int64, len(kvs))
	for i, kv := range kvs {
		out[i] = kv.ModRevision
	}
	return out
}

func childCount(children []etcdview.Child, prefix string) int64 {
	for _, ch := range children {
		if ch.Prefix == prefix {
			return ch.Count
		}
	}
	return 0
}

// pathPrefixes are the directory prefixes from root down to path:
// "/registry/", "/registry/pods/", "/registry/pods/default/" for
// "/registry/pods/default/web-0". A path outside root opens at root.
func pathPrefixes(root, path string) []string {
	out := []string{root}
	if !strings.HasPrefix(path, root) {
		return out
	}
	rest := path[len(root):]
	at := len(root)
	for {
		i := strings.Index(rest, "/")
		if i < 0 {
			return out
		}
		at += i + 1
		out = append(out, path[:at])
		rest = rest[i+1:]
	}
}

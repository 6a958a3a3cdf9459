package tree

import (
	"fmt"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/ui/common"
)

// pageThreshold is the key count above which a level is first tried as a
// paged List: Children ranges 100 keys per round trip, List 500 keys per
// page, and a leaf level of 100k objects needs only the pages in view.
const pageThreshold = 2000

// loaded is one level as read from the source.
type loaded struct {
	prefix   string
	count    int64
	rev      int64
	children []etcdview.Child
	next     *etcdview.PageToken // the next page of a paged level
}

// LevelsMsg carries the levels of a path, root first, read for request gen.
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
func loadPath(c common.Common, gen int, root, path string, rev int64, selected string) tea.Cmd {
	return func() tea.Msg {
		msg := LevelsMsg{gen: gen, selected: selected}
		var parent []etcdview.Child
		for i, prefix := range pathPrefixes(root, path) {
			// The root's size is unknown until read; each level below
			// takes its count from its entry in the parent.
			count := int64(-1)
			if i > 0 {
				count = childCount(parent, prefix)
			}
			l, err := loadLevel(c, prefix, count, rev)
			if err != nil {
				msg.err = err
				break
			}
			msg.levels = append(msg.levels, l)
			parent = l.children
		}
		return msg
	}
}

// loadOne reads one level below an open one, or, with reload, the open
// level again.
func loadOne(c common.Common, gen int, prefix string, count, rev int64, reload bool) tea.Cmd {
	return func() tea.Msg {
		start := time.Now()
		l, err := loadLevel(c, prefix, count, rev)
		return LevelsMsg{gen: gen, levels: []loaded{l}, reload: reload, took: time.Since(start), err: err}
	}
}

func loadLevel(c common.Common, prefix string, count, rev int64) (loaded, error) {
	ctx, cancel := c.Context()
	defer cancel()
	if count > pageThreshold {
		p, err := c.Src.List(ctx, prefix, rev, etcdview.PageToken{})
		if err != nil {
			return loaded{}, fmt.Errorf("list %s: %w", prefix, err)
		}
		if direct(prefix, p.Keys) {
			return loaded{prefix: prefix, count: count, rev: p.Revision, children: keyChildren(prefix, p.Keys), next: p.Next}, nil
		}
	}
	l, err := c.Src.Children(ctx, prefix, rev)
	if err != nil {
		return loaded{}, fmt.Errorf("read %s: %w", prefix, err)
	}
	var n int64
	for _, ch := range l.Children {
		n += ch.Count
	}
	return loaded{prefix: prefix, count: n, rev: l.Revision, children: l.Children}, nil
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

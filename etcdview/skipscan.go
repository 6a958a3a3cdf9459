package etcdview

import (
	"context"
	"strings"
)

// scanBatch is how many keys one skip-scan range returns. Leaves of a level
// come a batch per round trip, and a directory whose keys all fit in the
// batch is counted from it, with no count-only range.
const scanBatch = 100

// children lists one level below prefix by skip-scan: a keys-only range from
// the current position, then a jump past the directory its first key opens
// (to the directory's prefix range end), with a count-only range when the
// directory does not fit in the batch. Round trips grow with the children of
// the level, not with the keys below it (etcd still walks its index to count
// a range, but sends no key). Every range after the first reads
// the revision the first was answered at, so the level is one snapshot.
func children(ctx context.Context, r ranger, prefix string, rev int64) (Level, error) {
	lvl := Level{Prefix: prefix, Revision: rev}
	start, end := prefixRange(prefix)
	for {
		res, err := r.rangeKeys(ctx, rangeRequest{key: start, end: end, rev: lvl.Revision, limit: scanBatch, keysOnly: true})
		if err != nil {
			return lvl, err
		}
		lvl.Revision = res.rev
		kvs := res.kvs
		for len(kvs) > 0 {
			name, dir := segment(kvs[0].Key[len(prefix):])
			c := Child{Name: name, Prefix: prefix + name, Dir: dir, Count: 1}
			if !dir {
				lvl.Children = append(lvl.Children, c)
				kvs = kvs[1:]
				start = c.Prefix + "\x00"
				continue
			}
			n := 1
			for n < len(kvs) && strings.HasPrefix(kvs[n].Key, c.Prefix) {
				n++
			}
			c.Count = int64(n)
			dirStart, dirEnd := prefixRange(c.Prefix)
			if n == len(kvs) && res.more {
				cnt, err := r.rangeKeys(ctx, rangeRequest{key: dirStart, end: dirEnd, rev: lvl.Revision, countOnly: true})
				if err != nil {
					return lvl, err
				}
				c.Count = cnt.count
			}
			lvl.Children = append(lvl.Children, c)
			if dirEnd == "\x00" {
				// A prefix of 0xff bytes only: nothing sorts after it.
				return lvl, nil
			}
			kvs = kvs[n:]
			start = dirEnd
		}
		if !res.more {
			return lvl, nil
		}
	}
}

// segment is the first path segment of rest: up to and including the first
// "/" after its first byte, so that "/registry/pods/x" below the empty prefix
// opens "/registry/". dir is false when rest is a whole key.
func segment(rest string) (name string, dir bool) {
	if len(rest) < 2 {
		return rest, false
	}
	i := strings.IndexByte(rest[1:], '/')
	if i < 0 {
		return rest, false
	}
	return rest[:i+2], true
}

// list pages the keys below prefix, keys only unless page asks for values.
func list(ctx context.Context, r ranger, prefix string, rev int64, page PageToken) (Page, error) {
	limit := page.Limit
	if limit <= 0 {
		limit = DefaultPageSize
	}
	key, end := prefixRange(prefix)
	if page.After != "" {
		key = page.After + "\x00"
	}
	res, err := r.rangeKeys(ctx, rangeRequest{key: key, end: end, rev: rev, limit: int64(limit), keysOnly: !page.Values})
	if err != nil {
		return Page{}, err
	}
	p := Page{Keys: res.kvs, Revision: res.rev}
	if res.more && len(res.kvs) > 0 {
		p.Next = &PageToken{After: res.kvs[len(res.kvs)-1].Key, Limit: limit, Values: page.Values}
	}
	return p, nil
}

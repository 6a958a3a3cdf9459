package etcdview

import (
	"context"
	"strings"
)

// scanBatch is how many keys one skip-scan range returns. Leaves of a level
// come a batch per round trip, and a directory whose keys all fit in the
// batch is counted from it.
const scanBatch = 100

// children lists one level below prefix by skip-scan: a keys-only range from
// the current position, then a jump past the directory its first key opens
// (to the directory's prefix range end), or a new batch from the first key of
// a directory the batch cut off. Round trips grow with the children
// of the level, not with the keys below it, and the ranges are uncounted, so
// that on etcd 3.7 and later etcd does not walk the keys either. A directory
// too large for a batch of its own is left CountUnknown. Every range after the
// first reads the revision the first was answered at, so the level is one
// snapshot.
func children(ctx context.Context, r ranger, prefix string, rev int64) (Level, error) {
	lvl := Level{Prefix: prefix, Revision: rev}
	start, end := prefixRange(prefix)
	counted := false // the last range was counted by etcd
	for {
		res, bounded, err := nextBatch(ctx, r, &lvl, start, end, counted)
		if err != nil {
			return lvl, err
		}
		counted = res.counted
		kvs := res.kvs
		for first := true; len(kvs) > 0; first = false {
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
			if n == len(kvs) && res.more {
				if !first {
					// Cut off by the batch: read it again from its
					// first key, where it may fit whole.
					start = c.Prefix
					break
				}
				c.Count = CountUnknown
			}
			_, dirEnd := prefixRange(c.Prefix)
			lvl.Children = append(lvl.Children, c)
			if dirEnd == "\x00" {
				// A prefix of 0xff bytes only: nothing sorts after it.
				return lvl, nil
			}
			kvs = kvs[n:]
			start = dirEnd
		}
		if !res.more && !bounded {
			return lvl, nil
		}
	}
}

// maxProbes bounds the narrow ranges nextBatch tries after a run of
// directories, and maxBuckets the first-byte buckets it tries on an etcd
// that counts, before the range to the end of the level.
const (
	maxProbes  = 3
	maxBuckets = 16
)

// nextBatch reads a batch of keys from start on, first with ranges that end
// early, where the next entry is likely and etcd's work is bounded, then to
// the end of the level. bounded says the batch came from one of the first,
// so that keys may follow it.
//
// A range to the end of the level costs etcd more than its batch: through
// RangeStream, etcd goes on reading chunks until it sees the hang up (about
// 3 ms on 2 cores, against 0.4 ms for a range that ends); before etcd 3.7
// (counted), it walks its index to the end of the level to count the range.
// So after a directory too large for its batch, in a run of directories
// with a common stem (namespaces team-041/, team-042/), it tries the name
// that would follow (team-043) and the ends of shorter and shorter prefixes
// of the last name (team-04, team-0). And on an etcd that counts, it tries
// the first-byte buckets from start on (the rest of c, then d, e, ... for
// /registry/ after configmaps/): etcd then walks the keys of one bucket for
// each entry, where the range to the end would walk every key after it.
func nextBatch(ctx context.Context, r ranger, lvl *Level, start, end string, counted bool) (res rangeResult, bounded bool, err error) {
	for _, bound := range probeBounds(lvl, start, counted) {
		res, err := r.rangeKeys(ctx, rangeRequest{key: start, end: bound, rev: lvl.Revision, limit: scanBatch, keysOnly: true, uncounted: true})
		if err != nil || len(res.kvs) > 0 {
			return res, true, err
		}
	}
	res, err = r.rangeKeys(ctx, rangeRequest{key: start, end: end, rev: lvl.Revision, limit: scanBatch, keysOnly: true, uncounted: true})
	if err == nil {
		lvl.Revision = res.rev
	}
	return res, false, err
}

// probeBounds are the ends of the ranges nextBatch tries before the one to
// the end of the level, in increasing order, all past start.
func probeBounds(lvl *Level, start string, counted bool) []string {
	var prefixes []string
	if n := len(lvl.Children); n >= 2 && lvl.Children[n-1].Count == CountUnknown && lvl.Children[n-2].Dir {
		prefixes = runPrefixes(lvl.Children[n-1].Name, lvl.Children[n-2].Name)
	}
	if counted && len(lvl.Children) > 0 && len(start) > len(lvl.Prefix) {
		for b := int(start[len(lvl.Prefix)]); b <= 0xff && b < int(start[len(lvl.Prefix)])+maxBuckets; b++ {
			prefixes = append(prefixes, string([]byte{byte(b)}))
		}
	}
	var bounds []string
	for _, p := range prefixes {
		_, bound := prefixRange(lvl.Prefix + p)
		if bound != "\x00" && bound > start && (len(bounds) == 0 || bound > bounds[len(bounds)-1]) {
			bounds = append(bounds, bound)
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
	res, err := r.rangeKeys(ctx, rangeRequest{key: key, end: end, rev: rev, limit: int64(limit), keysOnly: !page.Values, uncounted: true})
	if err != nil {
		return Page{}, err
	}
	p := Page{Keys: res.kvs, Revision: res.rev}
	if res.more && len(res.kvs) > 0 {
		p.Next = &PageToken{After: res.kvs[len(res.kvs)-1].Key, Limit: limit, Values: page.Values}
	}
	return p, nil
}

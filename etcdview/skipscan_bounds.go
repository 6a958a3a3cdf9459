package etcdview

import (
	"context"
	"slices"
	"strings"
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
// 0.2 ms). Until the first answer says which etcd it is, the level is read
// as on one that counts: a first range to the end would walk every key of
// the level on it.
//
// On kine (rangeResult.ahead), a resource's second chance (bound.second)
// is read at the same time as its head: most resources kube-apiserver may
// store are absent, and each of their two empty ranges costs a round trip
// (0.41 ms through kine on SQLite, 0.27 ms each two at a time, on 2
// cores). When the head finds the resource, the second chance is dropped:
// a namespace of the resource read for nothing, which on an etcd that
// counts is a walk the heads are there to spare.
func (s *scan) nextBatch(ctx context.Context, start, end string) (rangeResult, string, error) {
	bounds := s.bounds(start)
	var ahead *readAhead
	defer func() { ahead.drop() }()
	for i, b := range bounds {
		if b.counted && !s.counted {
			continue
		}
		var res rangeResult
		var err error
		if ahead != nil && ahead.key == start && ahead.end == b.end {
			res, err = ahead.result()
			ahead = nil
			s.took(res)
		} else {
			if i+1 < len(bounds) && b.head > 0 && bounds[i+1].second == b.head && s.ahead && s.lvl.Revision != 0 {
				ahead = s.readAhead(ctx, b.end, bounds[i+1].end)
			}
			res, err = s.read(ctx, start, b.end, s.limit)
		}
		if err != nil || len(res.kvs) > 0 {
			s.walked = res.count
			return res, b.end, err
		}
		start = b.end
	}
	res, err := s.read(ctx, start, end, s.limit)
	s.walked = res.count
	return res, end, err
}

// readAhead is a range of the level read on a goroutine of its own, ahead
// of being asked for.
type readAhead struct {
	key, end string
	cancel   context.CancelFunc
	done     chan struct{}
	res      rangeResult
	err      error
}

// readAhead starts reading [key, end) as read would.
func (s *scan) readAhead(ctx context.Context, key, end string) *readAhead {
	ctx, cancel := context.WithCancel(ctx)
	a := &readAhead{key: key, end: end, cancel: cancel, done: make(chan struct{})}
	r := s.request(key, end, s.limit)
	go func() {
		defer close(a.done)
		a.res, a.err = s.r.rangeKeys(ctx, r)
	}()
	return a
}

// result waits for the range.
func (a *readAhead) result() (rangeResult, error) {
	<-a.done
	a.cancel()
	return a.res, a.err
}

// drop cancels the range, if any, and waits for its goroutine.
func (a *readAhead) drop() {
	if a != nil {
		a.cancel()
		<-a.done
	}
}

// read is the first limit keys of [key, end) at the level's revision: the
// one asked for, or the newest as of the first answer (a Range's header
// revision is the newest even when it reads an older one). Each answer says
// whether etcd counts.
func (s *scan) read(ctx context.Context, key, end string, limit int64) (rangeResult, error) {
	res, err := s.r.rangeKeys(ctx, s.request(key, end, limit))
	if err != nil {
		return res, err
	}
	s.took(res)
	return res, nil
}

// request is the keys-only range read asks for.
func (s *scan) request(key, end string, limit int64) rangeRequest {
	return rangeRequest{key: key, end: end, rev: s.lvl.Revision, limit: limit, keysOnly: true, uncounted: true}
}

// took notes what an answer says: whether etcd counts, whether ranges are
// read ahead, and the revision.
func (s *scan) took(res rangeResult) {
	s.counted, s.ahead = res.counted, res.ahead
	if s.lvl.Revision == 0 {
		s.lvl.Revision = res.rev
	}
}

// maxProbes bounds the narrow ranges tried after a directory of a run.
const maxProbes = 3

// bound is the end of a range nextBatch tries before the one to the end of
// the level. counted marks the ends worth a round trip only on an etcd that
// counts every range: there, a range that ends early saves a walk of every
// key after it; elsewhere it only adds a round trip.
//
// head and second mark the ends of a resource's head and of its second
// chance (see bounds), the resource's number + 1 (0: neither): the range
// from one to the other holds one namespace of the resource.
type bound struct {
	end          string
	counted      bool
	head, second int
}

// bounds are the ends of the ranges nextBatch tries before the one to the
// end of the level, in the order tried, each past the one before:
//
//   - The end of a directory the last batch cut off, read again on its own
//     (see take), or of the directory the last range ended inside, so that
//     the rest of it is counted on its own.
//   - Below kube-apiserver's prefix, the head of each namespaced resource
//     it may store or a CustomResourceDefinition defines: its keys in the
//     namespaces up to s.ns (pods/team-000/... for team-000/). etcd walks
//     every key up to the end of a range it counts, so a resource that has
//     objects there is found after a walk of those, not of the resource,
//     and the rest of it is never read. On an etcd that counts, and on
//     kine, each head gets a second chance up to the namespace after s.ns:
//     a resource the first holds none of (ReplicaSets in default, Events
//     expired there) is found there, not read whole by the range to the
//     next bound, for a round trip for each resource that is absent. A
//     resource that is not namespaced is read whole. Through RangeStream,
//     a head bounds what etcd streams before it sees the hang up: on 2
//     loaded cores, 20 to 130 ms for a range to the end of /registry
//     against a few for a head.
//   - After a directory too large for its batch, the name that would follow
//     in a numbered run (team-043 after team-042/), then the ends of
//     shorter and shorter prefixes of it (team-04, team-0).
//   - On an etcd that counts, the first-byte buckets from start on (see
//     bucketStarts): etcd walks the bucket of each entry, where the range
//     to the end would walk every key after it.
func (s *scan) bounds(start string) []bound {
	var bounds []bound
	add := func(b bound) {
		if b.end != "\x00" && b.end > start {
			bounds = append(bounds, b)
		}
	}
	addPrefix := func(p string, counted bool) {
		_, end := prefixRange(s.lvl.Prefix + p)
		add(bound{end: end, counted: counted})
	}
	children := s.lvl.Children
	n := len(children)
	if s.cut != "" {
		_, end := prefixRange(s.cut)
		add(bound{end: end})
	}
	if s.open {
		_, end := prefixRange(children[n-1].Prefix)
		add(bound{end: end})
	}
	if s.ns != "" {
		next := s.nextNamespace()
		for i, name := range s.names {
			if name.namespaced {
				_, head := prefixRange(s.lvl.Prefix + name.name + s.ns)
				add(bound{end: head, head: i + 1})
				if next != "" {
					_, end := prefixRange(s.lvl.Prefix + name.name + next)
					add(bound{end: end, counted: true, second: i + 1})
				}
			}
		}
	} else if n >= 1 && children[n-1].Count == CountUnknown {
		prev := ""
		if n >= 2 && children[n-2].Dir {
			prev = children[n-2].Name
		}
		for _, p := range runPrefixes(children[n-1].Name, prev) {
			addPrefix(p, false)
		}
	}
	if s.ns == "" {
		s.addBuckets(start, s.crowded(), addPrefix)
	}
	slices.SortFunc(bounds, func(a, b bound) int { return strings.Compare(a.end, b.end) })
	out := bounds[:0]
	for _, b := range bounds {
		if k := len(out) - 1; k >= 0 && out[k].end == b.end {
			out[k].counted = out[k].counted && b.counted
			out[k].head, out[k].second = 0, 0 // one end of two ranges
			continue
		}
		out = append(out, b)
	}
	return out
}

// bucketStarts are the first bytes that begin a first-byte bucket of their
// own: the digits and the lowercase letters, which kube-apiserver's names
// and most applications' keys begin with. The stretches between are one
// bucket each (below '0'; ':' to '`', the capitals among them; '{' on),
// cut at the byte of a start inside one.
var bucketStarts = []byte("0123456789:abcdefghijklmnopqrstuvwxyz{")

// addBuckets adds the ends of the first-byte buckets from start on: the
// rest of start's own bucket, then each that follows. A range per bucket
// costs a round trip where the bucket is empty and a walk of its keys where
// it is not, the first of which is the next entry. In a crowded bucket
// (crowded), the rest of it comes first by second bytes: each range that
// finds an entry there walks the keys of the entries after it in its
// bucket, which later ranges walk again, one per entry. Those second-byte
// buckets are tried one, one, two, four... at a time, as few ranges as the
// first-byte buckets where the rest of the bucket is empty.
func (s *scan) addBuckets(start string, crowded bool, addPrefix func(string, bool)) {
	rest := start[len(s.lvl.Prefix):]
	if crowded && len(rest) >= 2 {
		addLadder(rest[:1], int(rest[1]), true, addPrefix)
	}
	first := -1
	if rest != "" {
		first = int(rest[0])
	}
	addLadder("", first, false, addPrefix)
}

// addLadder adds the ends of the buckets of the byte after stem, from the
// bucket of byte from (-1 for none) on: every bucket, or with gallop the
// ends of the first, second, fourth, eighth... that follow its own.
func addLadder(stem string, from int, gallop bool, addPrefix func(string, bool)) {
	if from >= 0 {
		addPrefix(stem+string([]byte{byte(from)}), true)
	}
	i := 0
	for _, b := range bucketStarts {
		if int(b) <= from+1 {
			continue
		}
		if i++; !gallop || i&(i-1) == 0 {
			addPrefix(stem+string([]byte{b - 1}), true)
		}
	}
}

// refineKeys is how many keys the range that found an entry must have
// walked for its bucket to be crowded (crowded): the round trips of a
// bucket by second bytes cost about as much as walking a few thousand keys.
const refineKeys = 2000

// sameBucket says whether the last two entries found are directories that
// share their first byte, and returns it.
func (s *scan) sameBucket() (string, bool) {
	n := len(s.lvl.Children)
	if n < 2 {
		return "", false
	}
	last, prev := s.lvl.Children[n-1], s.lvl.Children[n-2]
	return last.Name[:1], last.Dir && prev.Dir && last.Name[0] == prev.Name[0]
}

// noteCrowd marks the bucket of the last entry crowded when it is the
// second entry found there and the range that found it walked refineKeys
// keys or more: the bucket may hold more entries, each of which would walk
// the rest of it again.
func (s *scan) noteCrowd() {
	if b, ok := s.sameBucket(); ok && s.counted && s.walked >= refineKeys {
		s.crowd = b
	}
}

// crowded says whether the next entry is looked for in a crowded bucket,
// the one the last two entries share.
func (s *scan) crowded() bool {
	b, ok := s.sameBucket()
	return ok && s.counted && b == s.crowd
}

// runPrefixes are the prefixes of the next directory of a run after last,
// which follows prev ("" for none): first the name that would follow in a
// numbered run (team-043 after team-042/, team-010 after team-009/), then
// shorter and shorter prefixes of last (team-04, team-0) down to the stem
// of the run. last is in a run when it ends in digits after a stem of two
// bytes or more: the bytes it has in common with prev, or, after no
// directory, those before its digits.
func runPrefixes(last, prev string) []string {
	name := last[:len(last)-1]
	head := strings.TrimRight(name, "0123456789")
	stem := len(head)
	if prev != "" {
		stem = 0
		for stem < len(name) && stem < len(prev) && name[stem] == prev[stem] {
			stem++
		}
	}
	if stem < 2 || stem < len(head) || stem == len(name) {
		return nil
	}
	prefixes := []string{successor(name, len(head))}
	for k := len(name) - 1; k >= stem && len(prefixes) < maxProbes; k-- {
		prefixes = append(prefixes, name[:k])
	}
	return prefixes
}

// successor is name with its number, the digits from i on, one greater:
// team-010 after team-009, node-1000 after node-999.
func successor(name string, i int) string {
	b := []byte(name)
	for j := len(b) - 1; j >= i; j-- {
		if b[j] != '9' {
			b[j]++
			return string(b)
		}
		b[j] = '0'
	}
	return name[:i] + "1" + string(b[i:])
}

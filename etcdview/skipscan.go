package etcdview

import (
	"context"
	"strings"
)

// scanBatch is how many keys one skip-scan range returns. A directory whose
// keys all fit in the batch is counted from it.
const scanBatch = 100

// maxLeafBatch bounds the batch after a run of leaves (leafBatch): 10,000
// keys-only entries, about half a megabyte.
const maxLeafBatch = 10_000

// children lists one level below prefix by skip-scan: a keys-only range from
// the current position, then a jump past the directory its first key opens
// (to the directory's prefix range end), or a new batch from the first key of
// a directory the batch cut off. Round trips grow with the children of the
// level, not with the keys below it. A directory too large for a batch of
// its own is left CountUnknown. Every range after the first reads the
// revision the first was answered at, so the level is one snapshot.
func children(ctx context.Context, r ranger, prefix string, rev int64) (Level, error) {
	s := newScan(r, prefix, rev)
	if s.names != nil {
		if err := s.learnRegistry(ctx); err != nil {
			return s.lvl, err
		}
	}
	start, end := prefixRange(prefix)
	for {
		res, to, err := s.nextBatch(ctx, start, end)
		if err != nil {
			return s.lvl, err
		}
		next, done := s.take(res, to, end)
		if done {
			return s.lvl, nil
		}
		start = next
	}
}

// scan is the state of one level's skip-scan.
type scan struct {
	r   ranger
	lvl Level
	// counted says etcd counted the last range (before 3.7), or that no
	// range was answered yet: the ranges that follow are chosen for what a
	// range costs it.
	counted bool
	// ahead says ranges are read ahead (rangeResult.ahead).
	ahead bool
	// open says the last range ended inside the last child, a directory:
	// the keys that follow it may be more of it, read next where a range
	// costs what it returns.
	open bool
	// cut is the prefix of a directory the last batch cut off after other
	// entries, read again on its own from its first key.
	cut string
	// walked is how many keys etcd counted in the range of the last batch,
	// on an etcd that counts.
	walked int64
	// crowd is the first byte of the last bucket found crowded (crowded).
	crowd string
	// limit is the next batch's size: scanBatch, or more after a run of
	// leaves (leafBatch).
	limit int64
	// names are the entries kube-apiserver stores under its prefix, when
	// the level looks like that prefix; see registryNames.
	names []registryName
	// ns is the first namespace (with its "/"), or the greatest that began
	// a namespaced resource's directory since: the head of the next one is
	// probed up to it.
	ns string
	// nss are the first namespaces, in order (firstNamespace).
	nss []string
}

func newScan(r ranger, prefix string, rev int64) *scan {
	s := &scan{r: r, lvl: Level{Prefix: prefix, Revision: rev}, counted: true, limit: scanBatch}
	if strings.HasSuffix(prefix, registryPrefix) {
		s.names = registryNames()
	}
	return s
}

// take adds the entries of one batch, read by a range that ended at to, and
// says where the next range starts, or that the level is complete.
func (s *scan) take(res rangeResult, to, end string) (next string, done bool) {
	prefix := s.lvl.Prefix
	kvs := res.kvs
	s.cut = ""
	batch := s.limit
	s.limit = scanBatch
	for first := true; len(kvs) > 0; first = false {
		name, dir := segment(kvs[0].Key[len(prefix):])
		c := Child{Name: name, Prefix: prefix + name, Dir: dir, Count: 1}
		cont := s.open && first && name == s.lvl.Children[len(s.lvl.Children)-1].Name
		s.open = false
		if !dir {
			s.lvl.Children = append(s.lvl.Children, c)
			kvs = kvs[1:]
			next = c.Prefix + "\x00"
			continue
		}
		n := 1
		for n < len(kvs) && strings.HasPrefix(kvs[n].Key, c.Prefix) {
			n++
		}
		c.Count = int64(n)
		if cont {
			// The rest of the directory the last range cut off.
			last := len(s.lvl.Children) - 1
			c.Count += s.lvl.Children[last].Count
			s.lvl.Children = s.lvl.Children[:last]
		}
		if n == len(kvs) && res.more {
			if !first {
				// Cut off by the batch: read it again from its
				// first key, where it may fit whole, up to its end:
				// on an etcd that counts, what follows it was walked
				// once already.
				s.cut = c.Prefix
				return c.Prefix, false
			}
			c.Count = CountUnknown
		}
		s.lvl.Children = append(s.lvl.Children, c)
		if !cont {
			s.learn(kvs[0].Key)
		}
		_, dirEnd := prefixRange(c.Prefix)
		if n == len(kvs) && !res.more && endsBefore(to, dirEnd) {
			// A narrow range ended inside the directory. Where etcd
			// counts, reading the rest of it would walk all of it (a
			// resource with a ConfigMap or a few Events in the first
			// namespace, as every namespace has): it is left for Count.
			if !s.counted {
				s.open = true
				return to, false
			}
			s.lvl.Children[len(s.lvl.Children)-1].Count = CountUnknown
		}
		if dirEnd == "\x00" {
			// A prefix of 0xff bytes only: nothing sorts after it.
			return "", true
		}
		kvs = kvs[n:]
		next = dirEnd
	}
	s.noteCrowd()
	if n := len(res.kvs); res.more && n > 0 && next == res.kvs[n-1].Key+"\x00" {
		s.limit = s.leafBatch(res, batch)
	}
	return next, to == end && !res.more
}

// leafBatch is the size of the batch after one that ended in a run of
// leaves and had more: a level of leaves is listed whole, and each range
// costs an etcd that counts a walk of every key after its start, so that
// batches of scanBatch would walk a level of n leaves n/200 times. It is
// every key left in the last range where etcd counted it, else twice the
// last batch, at most maxLeafBatch.
func (s *scan) leafBatch(res rangeResult, batch int64) int64 {
	n := 2 * batch
	if s.counted && res.count > int64(len(res.kvs)) {
		n = res.count - int64(len(res.kvs))
	}
	return min(max(n, scanBatch), maxLeafBatch)
}

// endsBefore says whether a range that ends at to stops short of end, both
// etcd range ends ("\x00" is no end).
func endsBefore(to, end string) bool {
	if end == "\x00" {
		return to != "\x00"
	}
	return to != "\x00" && to < end
}

// segment is the first path segment of rest: up to and including the first
// "/" after its first byte, so that "/registry/pods/x" below the empty prefix
// opens "/registry/". dir is false when rest is a whole key.
func segment(rest string) (name string, dir bool) {
	n, dir := segmentLen(rest)
	return rest[:n], dir
}

// segmentLen is the length of segment's name of rest, of either type.
func segmentLen[T string | []byte](rest T) (n int, dir bool) {
	for i := 1; i < len(rest); i++ {
		if rest[i] == '/' {
			return i + 1, true
		}
	}
	return len(rest), false
}

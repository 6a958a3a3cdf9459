package etcdview

import (
	"hash/maphash"
	"slices"
	"sort"
	"strings"
	"sync"
)

// keyIndex is every key a data file holds, sorted, each with its retained
// revisions, oldest first: what etcd's treeIndex holds in memory. It keeps
// no value. The keys lie back to back in a few large chunks and the
// revisions of all keys in one array, so that a million keys cost a few
// dozen allocations, not a million strings and slices (a profile of the
// first version, a map of strings and a slice per key, gave a third of the
// load to the allocator and the garbage collector).
type keyIndex struct {
	arena   keyArena
	entries []keyEntry // sorted by key
	revs    []revision // by key, then oldest first
}

// keyEntry is one key of the index.
type keyEntry struct {
	key keyRef
	// revEnd is where the key's revisions end in revs; they start where
	// the previous key's end. While the index is built, it is the key's id
	// instead: its number in the order the bucket first gave it.
	revEnd int32
}

func (x *keyIndex) len() int { return len(x.entries) }

func (x *keyIndex) key(i int) string { return x.arena.get(x.entries[i].key) }

func (x *keyIndex) revisions(i int) []revision {
	start := int32(0)
	if i > 0 {
		start = x.entries[i-1].revEnd
	}
	return x.revs[start:x.entries[i].revEnd]
}

// entry is key i as keyRevisions, its revisions shared with the index.
func (x *keyIndex) entry(i int) keyRevisions {
	return keyRevisions{key: x.key(i), revs: x.revisions(i)}
}

// search is the first key at or after key.
func (x *keyIndex) search(key string) int {
	return sort.Search(x.len(), func(i int) bool { return x.key(i) >= key })
}

// span is the keys in etcd's range [key, end) (see rangeRequest.end),
// found by binary search at both ends.
func (x *keyIndex) span(key, end string) (from, to int) {
	from = x.search(key)
	switch {
	case end == "" && from < x.len() && x.key(from) == key:
		return from, from + 1
	case end == "":
		return from, from
	case end == "\x00":
		return from, x.len()
	}
	return from, max(from, x.search(end))
}

// keyArena holds keys back to back in chunks of arenaChunk bytes (a key
// longer than that has a chunk of its own), so that it grows without
// copying what it holds, and wastes at most the end of its last chunk.
type keyArena struct {
	chunks []string
	// cur is being filled; its String, which shares its bytes, is the last
	// chunk, kept up to date as keys are added. A pointer, as the arena is
	// copied with its index: a Builder in use must not be (it keeps its
	// own address, unseen by the garbage collector).
	cur *strings.Builder
}

const arenaChunk = 1 << 20

// keyRef is where one key lies in a keyArena. etcd bounds a key by its
// request size (1.5 MiB by default): int32 holds any.
type keyRef struct{ chunk, off, n int32 }

func (a *keyArena) add(key []byte) keyRef {
	if a.cur == nil || a.cur.Len()+len(key) > a.cur.Cap() {
		a.cur = new(strings.Builder)
		a.cur.Grow(max(arenaChunk, len(key)))
		a.chunks = append(a.chunks, "")
	}
	last := len(a.chunks) - 1
	r := keyRef{chunk: int32(last), off: int32(a.cur.Len()), n: int32(len(key))}
	a.cur.Write(key)
	a.chunks[last] = a.cur.String()
	return r
}

func (a *keyArena) get(r keyRef) string { return a.chunks[r.chunk][r.off : r.off+r.n] }

// indexBuilder gathers the bucket's revisions in the bucket's order
// (revision order), each key stored once, and sorts them into a keyIndex
// at the end.
type indexBuilder struct {
	x keyIndex // entries by id until sorted; revs in the bucket's order
	// slots is an open-addressing hash table of key ids + 1 (0 is empty),
	// so that finding a key seen before allocates nothing: a map keyed by
	// string would make a string of every key the bucket holds.
	slots []int32
	seed  maphash.Seed
	ids   []int32 // the key id of each revision
}

// newIndexBuilder makes room for revisions revisions: appending them one
// by one would copy the slices four times over as they grow (a quarter
// at a time), a third of the pass on the 1M-key bench file.
func newIndexBuilder(revisions int) *indexBuilder {
	return &indexBuilder{
		x:     keyIndex{revs: make([]revision, 0, revisions)},
		slots: make([]int32, 1<<10), seed: maphash.MakeSeed(),
		ids: make([]int32, 0, revisions),
	}
}

// add records revision r of key, in bucket order.
func (b *indexBuilder) add(key []byte, r revision) {
	b.ids = append(b.ids, b.id(key))
	b.x.revs = append(b.x.revs, r)
}

// id is key's id, the key stored when it is new.
func (b *indexBuilder) id(key []byte) int32 {
	mask := uint64(len(b.slots) - 1)
	i := maphash.Bytes(b.seed, key) & mask
	for ; b.slots[i] != 0; i = (i + 1) & mask {
		if id := b.slots[i] - 1; b.x.key(int(id)) == string(key) {
			return id
		}
	}
	id := int32(len(b.x.entries))
	if len(b.x.entries) == cap(b.x.entries) {
		// Doubling copies each entry once on average, where append's
		// growth by a quarter copies it four times.
		b.x.entries = slices.Grow(b.x.entries, max(len(b.x.entries), 1<<10))
	}
	b.x.entries = append(b.x.entries, keyEntry{key: b.x.arena.add(key), revEnd: id})
	b.slots[i] = id + 1
	if 2*len(b.x.entries) > len(b.slots) {
		b.grow()
	}
	return id
}

// grow doubles the table, keeping it at most half full.
func (b *indexBuilder) grow() {
	b.slots = make([]int32, 2*len(b.slots))
	mask := uint64(len(b.slots) - 1)
	for id := range b.x.entries {
		i := maphash.String(b.seed, b.x.key(id)) & mask
		for b.slots[i] != 0 {
			i = (i + 1) & mask
		}
		b.slots[i] = int32(id) + 1
	}
}

// index sorts what was gathered: the keys by their bytes, then the
// revisions by key, in place, keeping each key's in bucket order, oldest
// first. The builder is spent after.
func (b *indexBuilder) index() keyIndex {
	b.slots = nil
	x := b.x
	x.entries = sortEntries(&x.arena, x.entries)
	rank := make([]int32, len(x.entries))
	for i, e := range x.entries {
		rank[e.revEnd] = int32(i)
		x.entries[i].revEnd = 0
	}
	// A counting sort: count each key's revisions, make the counts
	// running ends, then give each revision its place, from the last.
	for _, id := range b.ids {
		x.entries[rank[id]].revEnd++
	}
	end := int32(0)
	for i := range x.entries {
		end += x.entries[i].revEnd
		x.entries[i].revEnd = end
	}
	dst := b.ids // reused: each revision's id becomes its place
	for j := len(dst) - 1; j >= 0; j-- {
		e := &x.entries[rank[dst[j]]]
		e.revEnd--
		dst[j] = e.revEnd
	}
	// The places were taken from the ends down, so the ends are now the
	// starts: each key's end is the next key's start.
	for i := range x.entries {
		if i+1 < len(x.entries) {
			x.entries[i].revEnd = x.entries[i+1].revEnd
		} else {
			x.entries[i].revEnd = int32(len(x.revs))
		}
	}
	permute(x.revs, dst)
	b.x, b.ids = keyIndex{}, nil
	return x
}

// sortEntries sorts entries by key: a half on a goroutine of its own, the
// other here, then merged. The sort is a third of the pass over the 1M-key
// bench file, and there is a core to spare for it.
func sortEntries(a *keyArena, entries []keyEntry) []keyEntry {
	cmp := func(e, f keyEntry) int { return strings.Compare(a.get(e.key), a.get(f.key)) }
	half := len(entries) / 2
	if half < 1<<12 {
		slices.SortFunc(entries, cmp)
		return entries
	}
	var wg sync.WaitGroup
	wg.Go(func() { slices.SortFunc(entries[:half], cmp) })
	slices.SortFunc(entries[half:], cmp)
	wg.Wait()
	merged := make([]keyEntry, 0, len(entries))
	l, r := entries[:half], entries[half:]
	for len(l) > 0 && len(r) > 0 {
		if cmp(l[0], r[0]) < 0 {
			merged, l = append(merged, l[0]), l[1:]
		} else {
			merged, r = append(merged, r[0]), r[1:]
		}
	}
	return append(append(merged, l...), r...)
}

// permute moves revs[j] to revs[dst[j]] for every j, in place, by
// following each cycle of the permutation; dst is spent.
func permute(revs []revision, dst []int32) {
	for j := range revs {
		for d := dst[j]; d != int32(j); d = dst[j] {
			revs[j], revs[d] = revs[d], revs[j]
			dst[j], dst[d] = dst[d], d
		}
	}
}

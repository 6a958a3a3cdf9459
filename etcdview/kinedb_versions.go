package etcdview

import "hash/maphash"

// VersionUnknown is a ScanRecord's Version where the source cannot know it:
// kine keeps no version, and its compaction deletes the rows of a key it
// replaced, its creation among them.
const VersionUnknown = -1

// kineWalk is a walk of kine's rows from the newest back, as backWalk's,
// that marks each key's newest row Current (unless a deletion) and counts
// its version from the rows of its incarnation the file holds, as etcd
// counts it: a key's current record is held until the walk meets the
// incarnation's creation (a row whose create revision is its own), and is
// VersionUnknown when a deletion, or the end of the file, comes first.
//
// It needs no set of the keys met. A key's rows are a chain: every row
// names the key's row before it in prev_revision (kine's Update and Delete
// write the key's newest row's id there, and Create the deletion it
// follows, or 0 when there is none), and kine's compaction relies on it,
// deleting every row some row names (the CompactSQL of its drivers). So a
// row no later row names is its key's newest. The walk keeps the links of
// the rows met to the rows they name, not met yet, by the id named: a few
// thousand, where a set of every key met was found by hashing its name
// twice, a cache miss a row (a fifth of du's scan).
type kineWalk struct {
	w    *backWalk
	seed maphash.Seed
	// links are a heap, the link to the greatest id on top: the walk
	// meets ids from the greatest down, so that the next row named is
	// the top's, and a row named that the walk passes without meeting
	// (compaction deleted it, or it is not in the walk) leaves it there.
	links []link
	held  []ScanRecord
}

// link is what a row told of the row it names, to: a hash of its key,
// that a chain which would join two keys (never written by kine) is cut
// there rather than followed, and 1 + the index in held of the key's
// current record while its version is counted, else 0.
type link struct {
	to   int64
	key  uint64
	held int
}

func newKineWalk(w *backWalk) *kineWalk {
	return &kineWalk{w: w, seed: maphash.MakeSeed()}
}

// add adds rec, older than every record before it, whose row names the
// key's row before it, prev.
func (k *kineWalk) add(rec ScanRecord, prev int64) error {
	if !k.count(&rec, prev) {
		return nil
	}
	return k.push(rec, rec.ModRevision)
}

// count marks rec Current when no later row named it, counts it in the
// version of its key's current record, and says whether it is handed on
// now rather than held.
func (k *kineWalk) count(rec *ScanRecord, prev int64) bool {
	h := maphash.String(k.seed, rec.Key)
	l, named := k.take(rec.ModRevision)
	if named && l.key != h {
		// Another key's row names this one: its chain ends here, its
		// creation unmet, and this row is its own key's.
		k.unknown(l.held)
		named = false
	}
	created := !rec.Tombstone && rec.CreateRevision == rec.ModRevision
	next := link{to: prev, key: h}
	handOn := true
	switch {
	case !named && !rec.Tombstone:
		rec.Current, rec.Version = true, 1
		if !created {
			k.held = append(k.held, *rec)
			next.held = len(k.held)
			handOn = false
		}
	case !named, l.held == 0:
	case rec.Tombstone:
		k.unknown(l.held)
	default:
		k.held[l.held-1].Version++
		if !created {
			next.held = l.held
		}
	}
	if prev <= 0 || prev >= rec.ModRevision {
		// No earlier row named: the key's chain ends here.
		k.unknown(next.held)
	} else {
		k.link(next)
	}
	return handOn
}

// take takes the links to id and above off the heap, and returns the one
// to id. Those above name rows the walk passed without meeting them, and
// a second link to id is a second row naming it (never written by kine):
// the versions counted through them are unknown.
func (k *kineWalk) take(id int64) (l link, found bool) {
	for len(k.links) > 0 && k.links[0].to >= id {
		top := k.links[0]
		last := len(k.links) - 1
		k.links[0] = k.links[last]
		k.links = k.links[:last]
		k.down()
		if top.to == id && !found {
			l, found = top, true
		} else {
			k.unknown(top.held)
		}
	}
	return l, found
}

// link pushes l onto the heap.
func (k *kineWalk) link(l link) {
	k.links = append(k.links, l)
	for i := len(k.links) - 1; i > 0; {
		up := (i - 1) / 2
		if k.links[up].to >= k.links[i].to {
			break
		}
		k.links[up], k.links[i] = k.links[i], k.links[up]
		i = up
	}
}

// down moves the top of the heap down to its place.
func (k *kineWalk) down() {
	h := k.links
	for i := 0; ; {
		big := i
		if l := 2*i + 1; l < len(h) && h[l].to > h[big].to {
			big = l
		}
		if r := 2*i + 2; r < len(h) && h[r].to > h[big].to {
			big = r
		}
		if big == i {
			return
		}
		h[i], h[big] = h[big], h[i]
		i = big
	}
}

// unknown ends the count of the version of held record i-1 (none when i
// is 0): its creation is not met.
func (k *kineWalk) unknown(i int) {
	if i > 0 {
		k.held[i-1].Version = VersionUnknown
	}
}

func (k *kineWalk) push(rec ScanRecord, at int64) error {
	if k.w.batch = append(k.w.batch, rec); len(k.w.batch) == scanBatchSize {
		return k.w.flush(at)
	}
	return nil
}

// end hands on the held records, those whose creation the walk did not
// meet of unknown version, and what is left.
func (k *kineWalk) end() error {
	for _, l := range k.links {
		k.unknown(l.held)
	}
	for _, rec := range k.held {
		if err := k.push(rec, k.w.oldest); err != nil {
			return err
		}
	}
	return k.w.end()
}

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
// row no later row names is its key's newest. The walk keeps, by id, the
// rows named by the rows met and not met yet: a few thousand entries,
// found by id, where a set of every key met was found by hashing its name
// twice, a cache miss a row (a fifth of du's scan).
type kineWalk struct {
	w    *backWalk
	seed maphash.Seed
	// links are the rows named and not met yet, by id.
	links map[int64]link
	held  []ScanRecord
}

// link is what a row told of the row it names: a hash of its key, that a
// chain which would join two keys (never written by kine) is cut there
// rather than followed, and 1 + the index in held of the key's current
// record while its version is counted, else 0.
type link struct {
	key  uint64
	held int
}

func newKineWalk(w *backWalk) *kineWalk {
	return &kineWalk{w: w, seed: maphash.MakeSeed(), links: map[int64]link{}}
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
	l, named := k.links[rec.ModRevision]
	if named {
		delete(k.links, rec.ModRevision)
		if l.key != h {
			// Another key's row names this one: its chain ends here,
			// its creation unmet, and this row is its own key's.
			k.unknown(l.held)
			named = false
		}
	}
	created := !rec.Tombstone && rec.CreateRevision == rec.ModRevision
	next := link{key: h}
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
	k.name(prev, rec.ModRevision, next)
	return handOn
}

// name keeps the link of the row id to the row it names, prev. A row that
// names none (0), or no earlier row, ends its key's chain: a version
// counted through it is unknown.
func (k *kineWalk) name(prev, id int64, l link) {
	if prev <= 0 || prev >= id {
		k.unknown(l.held)
		return
	}
	if _, ok := k.links[prev]; ok {
		// Two rows name one: not kine's chain. The newer's link is kept,
		// and the older's count is unknown.
		k.unknown(l.held)
		return
	}
	k.links[prev] = l
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

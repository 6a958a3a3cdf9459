package etcdview

import "hash/maphash"

// VersionUnknown is a ScanRecord's Version where the source cannot know it:
// kine keeps no version, and its compaction deletes the rows of a key it
// replaced, its creation among them.
const VersionUnknown = -1

// kineWalk is a walk of kine's rows from the newest back, as backWalk's,
// that counts each current revision's version from the rows of its
// incarnation the file holds, as etcd counts it: a key's current record
// is held until the walk meets the incarnation's creation (a row whose
// create revision is its own), and is VersionUnknown when a deletion, or
// the end of the file, comes first.
type kineWalk struct {
	w     *backWalk
	seeds [2]maphash.Seed
	// keys are the keys met, by two hashes as keySet's: 1 + the index in
	// held of the key's current record while its creation is not met,
	// else 0.
	keys map[[2]uint64]int
	held []ScanRecord
}

// newKineWalk is a walk of rows rows: its set of keys gets room for as
// many, up to indexRoom as the key index's entries do, so that it is not
// rehashed as it grows (a sixth of the walk's time).
func newKineWalk(w *backWalk, rows int64) *kineWalk {
	return &kineWalk{w: w, seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()},
		keys: make(map[[2]uint64]int, min(max(rows, 0), indexRoom))}
}

// add adds rec, older than every record before it.
func (k *kineWalk) add(rec ScanRecord) error {
	if !k.count(&rec) {
		return nil
	}
	return k.push(rec, rec.ModRevision)
}

// count marks rec Current when it is its key's first, counts it in the
// version of its key's current record, and says whether it is handed on
// now rather than held.
func (k *kineWalk) count(rec *ScanRecord) bool {
	h := [2]uint64{maphash.String(k.seeds[0], rec.Key), maphash.String(k.seeds[1], rec.Key)}
	i, seen := k.keys[h]
	created := !rec.Tombstone && rec.CreateRevision == rec.ModRevision
	switch {
	case !seen && !rec.Tombstone:
		rec.Current, rec.Version = true, 1
		if !created {
			k.held = append(k.held, *rec)
			k.keys[h] = len(k.held)
			return false
		}
		k.keys[h] = 0
	case !seen:
		k.keys[h] = 0
	case i == 0:
	case rec.Tombstone:
		k.held[i-1].Version = VersionUnknown
		k.keys[h] = 0
	default:
		k.held[i-1].Version++
		if created {
			k.keys[h] = 0
		}
	}
	return true
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
	for _, i := range k.keys {
		if i > 0 {
			k.held[i-1].Version = VersionUnknown
		}
	}
	for _, rec := range k.held {
		if err := k.push(rec, k.w.oldest); err != nil {
			return err
		}
	}
	return k.w.end()
}

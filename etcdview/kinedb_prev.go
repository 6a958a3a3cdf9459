package etcdview

import (
	"context"
)

// PrevRevisions is a source that finds, in one read, the revision before
// another at which a key below a prefix changed: what a recording's time
// line steps back to (`[` in the explorer). A replay (Watch) only runs
// forward, so that without it the revision before is found by replaying
// windows that grow back.
//
// A live etcd has no such read: the revision before R below "" is R-1, but
// below a prefix it is the newest ModRevision of a range at R-1 sorted by
// it (which reads every key below the prefix) or a later deletion, which
// only a replay from there finds. The explorer's time line is a
// recording's alone, so only KineFile answers it.
type PrevRevisions interface {
	// PrevRevision is the newest revision before rev at which a key below
	// prefix ("" for every key) changed, after the source's compaction
	// revision; false when none did.
	PrevRevision(ctx context.Context, prefix string, rev int64) (int64, bool, error)
}

var _ PrevRevisions = (*KineFile)(nil)

// prevBatch is how many rows one query of PrevRevision reads back: a
// recording of Kubernetes holds a row below /registry/ at nearly every id,
// so that the first row all but always answers, and a narrow prefix reads
// on in batches of this many. Each query is bounded: PostgreSQL's rows
// arrive whole, and one left half-read is read to its end on close.
const prevBatch = 256

// PrevRevision reads the file's rows back from rev on kine's primary key,
// the id, in batches of prevBatch, down to the compaction revision (a
// recording's start: the rows before it are its first snapshot's), and
// returns the first whose key is below prefix and not one of kine's own
// rows. Up to the head the file was opened at: a recording read while it
// is written is read as of then.
func (f *KineFile) PrevRevision(ctx context.Context, prefix string, rev int64) (int64, bool, error) {
	key, end := prefixRange(prefix)
	hi := min(rev, f.rev+1)
	for hi > f.compacted+1 {
		rows, err := f.db.QueryContext(ctx, `SELECT id, name FROM kine WHERE id < ? AND id > ? ORDER BY id DESC LIMIT ?`, hi, f.compacted, prevBatch)
		if err != nil {
			return 0, false, kineError(f.path, err)
		}
		n, found := 0, int64(0)
		for rows.Next() && found == 0 {
			var name []byte
			if err := rows.Scan(&hi, &name); err != nil {
				rows.Close()
				return 0, false, kineError(f.path, err)
			}
			n++
			if inRange(string(name), key, end) && !kineInternal(name) {
				found = hi
			}
		}
		err = rows.Err()
		rows.Close()
		switch {
		case err != nil:
			return 0, false, kineError(f.path, err)
		case found > 0:
			return found, true, nil
		case n < prevBatch:
			return 0, false, nil
		}
	}
	return 0, false, nil
}

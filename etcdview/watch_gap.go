package etcdview

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
)

// gapPage is how many keys a gap's re-read lists, or fetches the values
// of, per request. Before etcd 3.7 each listed page costs etcd a walk of
// the rest of the prefix (it counts every range), so pages are larger than
// List's default; a gap is rare.
const gapPage = 5000

// fillGap goes on after etcd compacted revisions from w.next on, which the
// watch had still to deliver: its stream was cut for longer than etcd keeps
// history, or, on an etcd whose progress notifications cannot move the
// resume point, it watched a quiet prefix. etcd cannot replay them, so the
// prefix is re-read at the compaction revision c: each key written from
// w.next to c that still exists is delivered as of its last write (an
// event that really happened, its Prev lost); deletions are told from the
// key count kept since before the gap, as compaction drops tombstones and
// nothing else shows that a deleted key was there (mvcc's keyIndex.compact).
// A key both created and deleted in the gap leaves no trace at all. The gap
// is marked (a Batch with Gap) when changes were lost or may have been: a
// gap whose deletions could not be checked is one, for a consumer that can
// find them (the recorder compares its keys with etcd's); only a gap known
// to have changed nothing is a note alone. The watch goes on from c+1.
func (w *liveWatch) fillGap(ctx context.Context, c int64) error {
	w.keys.wait(ctx)
	written, total, created, err := w.writtenSince(ctx, c)
	if err != nil {
		return err
	}
	from, deleted := w.next, int64(-1)
	if w.keys.known {
		deleted = w.keys.n - (total - created)
	}
	// kine refuses a watch from its compaction revision c itself, where
	// etcd replays it: the range at c holds its write, whose event
	// follows, Prev lost. kine writes one key a revision, so that a put
	// found at c, or a count that did not drop, says no deletion was lost.
	atCompaction := from == c && (deleted == 0 || deleted < 0 && len(written) > 0)
	if !atCompaction {
		w.addNote(gapNote(from, c, describeRange(w.key, w.end), len(written), deleted))
	}
	if !atCompaction && (len(written) > 0 || deleted != 0) {
		b := Batch{Revision: c, Note: w.note, Gap: &Gap{From: from, To: c, Written: len(written), Deleted: deleted}}
		if !w.send(ctx, b) {
			return ctx.Err()
		}
		w.note = ""
	}
	// Until the gap is through, the count no longer matches next.
	w.keys.known = false
	for chunk := range slices.Chunk(written, gapPage) {
		b := Batch{Revision: c}
		for _, kv := range chunk {
			got, err := w.l.Get(ctx, kv.Key, c)
			if err != nil {
				return err
			}
			e := Event{Type: Modified, KV: *got}
			if got.CreateRevision == got.ModRevision {
				e.Type = Added
			}
			b.Events = append(b.Events, e)
		}
		if !w.send(ctx, b) {
			return ctx.Err()
		}
		// A retry after a failure here starts after what was sent.
		w.next = chunk[len(chunk)-1].ModRevision + 1
	}
	w.next = c + 1
	w.keys.n, w.keys.known = total, true
	return nil
}

// writtenSince lists the prefix keys-only at revision c and returns the
// keys written from w.next on, in the order of their last write, with how
// many keys there are and how many of them were created from w.next on.
func (w *liveWatch) writtenSince(ctx context.Context, c int64) (written []KV, total, created int64, err error) {
	err = Pages(w.l, w.prefix, c, Paging{Limit: gapPage})(ctx, func(p Page) error {
		for _, kv := range p.Keys {
			total++
			if kv.CreateRevision >= w.next {
				created++
			}
			if kv.ModRevision >= w.next {
				written = append(written, kv)
			}
		}
		return nil
	})
	if err != nil {
		return nil, 0, 0, err
	}
	slices.SortFunc(written, func(a, b KV) int {
		return cmp.Or(cmp.Compare(a.ModRevision, b.ModRevision), strings.Compare(a.Key, b.Key))
	})
	return written, total, created, nil
}

func gapNote(from, to int64, prefix string, written int, deleted int64) string {
	span := fmt.Sprintf("revisions %d to %d were compacted before the watch could resume", from, to)
	if from == to {
		span = fmt.Sprintf("revision %d, the compaction revision, could not be replayed", to)
	}
	switch {
	case written == 0 && deleted == 0:
		return fmt.Sprintf("%s; no key below %s changed in them", span, prefix)
	case written == 0 && deleted < 0:
		return fmt.Sprintf("%s; no key below %s was written in them (deletions could not be checked)", span, prefix)
	}
	lost := fmt.Sprintf("%d keys written in them follow as last written, their earlier changes lost", written)
	switch {
	case deleted > 0:
		lost += fmt.Sprintf("; %d keys deleted in them, not shown", deleted)
	case deleted < 0:
		lost += "; deletions in them could not be checked"
	}
	return fmt.Sprintf("%s; changes below %s lost: %s", span, prefix, lost)
}

// keyCount follows how many keys lie below the watch's prefix as of the
// revision before next, for fillGap.
type keyCount struct {
	n     int64
	known bool
	// answer brings the count asked at a revision; since is what events
	// delivered while it was on its way changed.
	answer <-chan countAnswer
	since  int64
	asked  bool
}

type countAnswer struct {
	n   int64
	err error
}

// ask counts the keys as of next-1 in the background, until etcd answers:
// it walks every key it counts, so the count is not repeated after, events
// keep it current.
func (k *keyCount) ask(ctx context.Context, src Source, prefix string, next int64) {
	if k.asked || k.known || next == 0 {
		return
	}
	ch := make(chan countAnswer, 1)
	go func() {
		n, err := src.Count(ctx, prefix, next-1)
		ch <- countAnswer{n, err}
	}()
	k.answer, k.since, k.asked = ch, 0, true
}

func (k *keyCount) settle(a countAnswer) {
	k.answer = nil
	k.n, k.known, k.asked = a.n+k.since, a.err == nil, a.err == nil
}

// wait takes the answer of a count on its way.
func (k *keyCount) wait(ctx context.Context) {
	if k.answer == nil {
		return
	}
	select {
	case a := <-k.answer:
		k.settle(a)
	case <-ctx.Done():
	}
}

// apply counts a delivered event in.
func (k *keyCount) apply(e Event) {
	d := int64(0)
	switch e.Type {
	case Added:
		d = 1
	case Deleted:
		d = -1
	}
	switch {
	case k.known:
		k.n += d
	case k.answer != nil:
		k.since += d
	}
}

package etcdview

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/etcdscope/etcdscope/decode"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// walk reads the current incarnation of a key back from its newest version
// kv, newest first. etcd answers a range at revision R with the key's newest
// write at or before R (mvcc keyIndex.get), so a range at a version's
// mod_revision-1 returns the version before it: one range per version, down
// to version 1, whatever the size of the store. The ranges of a window of
// consecutive revisions below a version need no answer first, and return
// every version written in the window and the one in effect below it: where
// the key's versions lie close together the walk reads such windows at
// once, where they lie far apart one revision at a time (walkWindow). A
// revision compaction removed ends the walk, with the compaction revision:
// etcd keeps each key's version in effect at the compaction revision, so
// the oldest entry is that one. The walk ends at the key's creation, where
// ModRevision is CreateRevision: kine, which sets no Version, is walked the
// same way.
func (l *Live) walk(ctx context.Context, kv KV) ([]Entry, int64, error) {
	entries := []Entry{{KV: kv}}
	window := walkWindow(kv)
	for kv.ModRevision > kv.CreateRevision {
		var revs []int64
		for r := kv.ModRevision - 1; r >= max(kv.ModRevision-window, kv.CreateRevision); r-- {
			revs = append(revs, r)
		}
		answers, errs := l.getEach(ctx, kv.Key, revs)
		for i, rev := range revs {
			if err := errs[i]; err != nil {
				err = l.readError(ctx, "read "+decode.EscapeKey(kv.Key), kv.Key, rev, err)
				var ce *CompactedError
				if errors.As(err, &ce) {
					return entries, ce.Compacted, nil
				}
				return entries, 0, err
			}
			prev, err := olderVersion(kv, rev, answers[i])
			if err != nil {
				return entries, 0, err
			}
			if prev.ModRevision != kv.ModRevision {
				entries = append(entries, Entry{KV: prev})
				kv = prev
			}
		}
	}
	return entries, 0, nil
}

// maxWalkWindow is the most revisions walk reads at once.
const maxWalkWindow = 16

// walkWindow is how many revisions walk reads at once below kv: about
// maxWalkWindow versions' worth when each revision since the key's creation
// wrote it, 1 when it wrote one revision in maxWalkWindow or fewer, so
// that a window costs at most a few ranges for each version it finds. kine
// says no Version: its writes are taken as far apart.
func walkWindow(kv KV) int64 {
	span := kv.ModRevision - kv.CreateRevision
	if span <= 0 || kv.Version == 0 {
		return 1
	}
	return min(max(maxWalkWindow*(kv.Version-1)/span, 1), maxWalkWindow)
}

// olderVersion checks etcd's answer at rev, below version kv in a walk: kv
// itself again, or the version before it, of the same incarnation (kine's
// Version, always 0, is not checked).
func olderVersion(kv KV, rev int64, resp *clientv3.GetResponse) (KV, error) {
	if len(resp.Kvs) == 0 {
		return KV{}, fmt.Errorf("read %s at revision %d: etcd has no version before the one written at %d", decode.EscapeKey(kv.Key), rev, kv.ModRevision)
	}
	prev := fromProto(resp.Kvs[0])
	if prev.ModRevision == kv.ModRevision {
		return kv, nil
	}
	if prev.CreateRevision != kv.CreateRevision || prev.ModRevision > kv.ModRevision || (kv.Version != 0 && prev.Version != kv.Version-1) {
		return KV{}, fmt.Errorf("read %s at revision %d: etcd answered the version written at %d (version %d) created at %d, want the one before the version written at %d (version %d) created at %d",
			decode.EscapeKey(kv.Key), rev, prev.ModRevision, prev.Version, prev.CreateRevision, kv.ModRevision, kv.Version, kv.CreateRevision)
	}
	return prev, nil
}

// getEach reads key at each of revs, all at once (getAt): the answer and
// the error at revs[i] are answers[i] and errs[i].
func (l *Live) getEach(ctx context.Context, key string, revs []int64, opts ...clientv3.OpOption) (answers []*clientv3.GetResponse, errs []error) {
	answers, errs = make([]*clientv3.GetResponse, len(revs)), make([]error, len(revs))
	var wg sync.WaitGroup
	for i, rev := range revs {
		wg.Go(func() { answers[i], errs[i] = l.getAt(ctx, key, rev, opts...) })
	}
	wg.Wait()
	return answers, errs
}

// getAt reads key as of rev, a revision etcd has already answered at, from
// whichever member the client asks and without the round of consensus a
// linearizable read costs (etcd's ReadIndex): what a revision holds never
// changes once written. A member that has not applied rev yet answers
// ErrFutureRev; the read is then made linearizable, which waits for it.
// kine refuses serializable reads (Unimplemented), and has no consensus to
// skip: from its first refusal on, reads are linearizable. The error is
// etcd's (rpctypes.ErrCompacted for a compacted rev), in the user's words.
func (l *Live) getAt(ctx context.Context, key string, rev int64, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	at := append([]clientv3.OpOption{clientv3.WithRev(rev)}, opts...)
	rctx, cancel := l.commandTimeout().bound(ctx)
	defer cancel()
	var resp *clientv3.GetResponse
	var err error
	if !l.noSerializable.Load() {
		resp, err = l.c.Get(rctx, key, append(at, clientv3.WithSerializable())...)
		if status.Code(err) == codes.Unimplemented {
			l.noSerializable.Store(true)
		}
	}
	if l.noSerializable.Load() || errors.Is(err, rpctypes.ErrFutureRev) {
		resp, err = l.c.Get(rctx, key, at...)
	}
	if err != nil {
		return nil, requestError(rctx, err)
	}
	return resp, nil
}

// denseProbes is the longest span probeEarlier reads at every revision.
const denseProbes = 32

// probeEarlier says whether etcd holds an incarnation of key older than
// revision absent, at which the key is known to be absent, and a revision
// it existed at. An incarnation etcd holds anything of exists at one
// revision at least that is not compacted: its creation, or, for one
// created before the compaction and deleted after it, the compaction
// revision itself. A span of up to denseProbes revisions is read at each
// of them, which proves there is none; a longer one at absent-1, -2, -4,
// ... and its oldest revision, which finds an incarnation that lived
// longer than the gap that followed it, but cannot prove there is none.
// The reads are independent, so they go out at once.
func (l *Live) probeEarlier(ctx context.Context, key string, absent int64) (Earlier, int64, error) {
	oldest := int64(1)
	for {
		revs, dense := probeRevisions(oldest, absent)
		seen, compacted, err := l.probe(ctx, key, revs)
		switch {
		case err != nil:
			return EarlierUnknown, 0, err
		case seen > 0:
			return EarlierUnread, seen, nil
		case compacted > oldest:
			oldest = compacted
			continue
		case dense:
			return EarlierNone, 0, nil
		}
		return EarlierUnknown, 0, nil
	}
}

// probeRevisions are the revisions probeEarlier reads between oldest and
// absent, newest first, and whether they are every one of them.
func probeRevisions(oldest, absent int64) (revs []int64, dense bool) {
	if absent-oldest <= denseProbes {
		for r := absent - 1; r >= oldest; r-- {
			revs = append(revs, r)
		}
		return revs, true
	}
	for step := int64(1); absent-step > oldest; step *= 2 {
		revs = append(revs, absent-step)
	}
	return append(revs, oldest), false
}

// probe reads key at each of revs, counting only, all at once. seen is the
// newest revision it exists at (0: none), compacted the compaction
// revision when some of revs were compacted.
func (l *Live) probe(ctx context.Context, key string, revs []int64) (seen, compacted int64, err error) {
	answers, errs := l.getEach(ctx, key, revs, clientv3.WithCountOnly())
	var gone int64 // a compacted revision asked for
	for i, err := range errs {
		switch {
		case errors.Is(err, rpctypes.ErrCompacted):
			gone = revs[i]
		case err != nil:
			return 0, 0, l.readError(ctx, "read "+decode.EscapeKey(key), key, revs[i], err)
		case answers[i].Count > 0 && seen == 0:
			seen = revs[i]
		}
	}
	if seen > 0 || gone == 0 {
		return seen, 0, nil
	}
	// etcd's error does not say the compaction revision: ask once.
	var ce *CompactedError
	if err := l.readError(ctx, "read "+decode.EscapeKey(key), key, gone, rpctypes.ErrCompacted); !errors.As(err, &ce) {
		return 0, 0, err
	}
	return 0, ce.Compacted, nil
}

package etcdview

// kine (github.com/k3s-io/kine, k3s' default datastore) serves the etcd API
// from a SQL table that is a log of revisions, one row per write. etcdview
// reads it through the same Live as etcd; where kine answers differently
// (measured on v0.17.5), this is what etcdview does about it:
//
//   - Status has an empty header (member 0, revision 0, no Raft figures) and
//     Version is kine's --emulated-etcd-version (3.6.11 by default);
//     MemberList names one member "kine", ID 0. Status says Kine and the
//     emulated version, takes the revision from a range's header, and the
//     compaction from a read at revision 1 (kineCompaction).
//   - A serializable range is refused (Unimplemented): getAt makes it
//     linearizable from the first refusal on, which kine answers alike.
//   - Version is 0 in every KeyValue, of ranges and watches: a creation is
//     CreateRevision == ModRevision (as on etcd), the history walk goes
//     back to the creation revision instead of down to version 1, and a
//     history numbers the versions from the creation (numberVersions).
//     du's writes per key, which come from Version, read 0.
//   - A read below the compaction revision C fails with ErrCompacted, one at
//     C reads the state at C; a watch from C is refused as compacted, so a
//     replay from a compaction starts at C+1, the range at C giving the
//     rest. A watch replays by reading every row since its start revision,
//     of every key, into kine's memory: a history is walked by reads, and
//     --all-incarnations is as costly as on etcd, or more.
//   - DeleteRange and most transactions are refused; etcdview writes nothing,
//     so only tests care (etcdtest.Delete).
//   - kine sorts the whole range before each limit: a limited range costs a
//     listing of the range, as a counted range costs etcd before 3.7, and
//     the skip-scan chooses its ranges as for such an etcd (rangeResult's
//     counted), and never reads on inside a directory its narrow range
//     ended in: on 100k objects, reading the rest of every resource below
//     the first namespace was a third of a listing.
//     A level it has no narrow ranges for is one keys-only stream
//     (Children).
//   - kine on SQLite loses some Puts acknowledged at once from many
//     writers (measured: 155 of 98,250 from 16): etcdviewtest writes to
//     it one key at a time.

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// kineMember is the name kine's MemberList gives its one member.
const kineMember = "kine"

// isKine says whether MemberList's answer is kine's: one member named
// "kine" with ID 0, which no etcd member has.
func isKine(list *clientv3.MemberListResponse) bool {
	return list != nil && len(list.Members) == 1 && list.Members[0].ID == 0 && list.Members[0].Name == kineMember
}

// kineStatus completes the Status of kine: its one member's revision, the
// store's, from a range's header, and the compaction revision.
func (l *Live) kineStatus(ctx context.Context, cl Cluster) (Cluster, error) {
	cl.Kine = true
	resp, err := l.c.Get(ctx, compactRevKey)
	if err != nil {
		return cl, fmt.Errorf("kine at %s: read the revision: %w", cl.Members[0].Endpoint, requestError(ctx, err))
	}
	cl.Revision = resp.Header.Revision
	for i := range cl.Members {
		if cl.Members[i].Err == nil {
			cl.Members[i].Revision = cl.Revision
			cl.Members[i].Leader = true // the only one: it takes every write
			cl.EmulatedVersion = cl.Members[i].Version
		}
	}
	// Named as what it is, for status and the explorer's header alike.
	cl.Description = cl.Server() + " at " + strings.Join(l.c.Endpoints(), ",")
	cl.CompactRevision, err = l.kineCompaction(ctx)
	return cl, err
}

// kineCompaction is kine's compaction revision. The compact_rev_key kine
// serves is kube-apiserver's, which kine ignores when it compacts on its own
// schedule (k3s), so its own compaction is found by a read at revision 1,
// which fails as compacted once kine compacted anything, and then the watch
// compactRevision makes, refused at once with the revision. Without a
// compaction that watch would replay kine's whole log.
func (l *Live) kineCompaction(ctx context.Context) (int64, error) {
	_, err := l.getAt(ctx, compactRevKey, 1, clientv3.WithCountOnly())
	switch {
	case err == nil:
		return 0, nil
	case !errors.Is(err, rpctypes.ErrCompacted):
		return 0, fmt.Errorf("kine: read at revision 1: %w", err)
	}
	return l.compactRevision(ctx, compactRevKey)
}

// kineServer says whether the Live reads kine, asking MemberList the first
// time (Status answers it too); an error leaves it to ask again.
func (l *Live) kineServer(ctx context.Context) (bool, error) {
	if l.kineKnown.Load() {
		return l.kine.Load(), nil
	}
	ctx, cancel := l.commandTimeout().bound(ctx)
	defer cancel()
	list, err := l.c.MemberList(ctx)
	if err != nil {
		return false, fmt.Errorf("ask the members: %w", requestError(ctx, err))
	}
	l.kine.Store(isKine(list))
	l.kineKnown.Store(true)
	return l.kine.Load(), nil
}

// Children is one level of the key tree below prefix: by skip-scan, and on
// kine below any prefix but kube-apiserver's by kineChildren. kine reads
// and sorts the whole of a range before it sends its first key, so that its
// skip-scan takes the narrow ranges chosen for an etcd that counts every
// range (scan.bounds): below kube-apiserver's prefix, each resource up to
// its keys in the first namespace, about 0.1x a listing of the prefix on
// 100k keys. Elsewhere no bound is known that holds fewer keys than the
// child it finds, and a range per child costs more than one listing.
func (l *Live) Children(ctx context.Context, prefix string, rev int64) (Level, error) {
	if kine, err := l.kineServer(ctx); err == nil && kine && !strings.HasSuffix(prefix, registryPrefix) {
		return l.kineChildren(ctx, prefix, rev)
	}
	return l.reads.Children(ctx, prefix, rev)
}

// kineChildren lists one level below prefix from one keys-only stream of
// every key below it, each child counted as its keys pass. The stream
// (kine's RangeStream) keeps the keys out of memory but the child being
// counted.
func (l *Live) kineChildren(ctx context.Context, prefix string, rev int64) (Level, error) {
	lvl := Level{Prefix: prefix, Revision: rev}
	key, end := prefixRange(prefix)
	opts := []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithKeysOnly()}
	if rev > 0 {
		opts = append(opts, clientv3.WithRev(rev))
	}
	sctx, cancel := l.commandTimeout().bound(ctx)
	defer cancel()
	chunks, err := l.c.GetStream(sctx, key, opts...)
	if err != nil {
		return lvl, l.readError(ctx, "read "+describeRange(key, end), key, rev, requestError(sctx, rpctypes.Error(err)))
	}
	for chunk := range chunks {
		if err := chunk.Err(); err != nil {
			return lvl, l.readError(ctx, "read "+describeRange(key, end), key, rev, requestError(sctx, rpctypes.Error(err)))
		}
		for _, kv := range chunk.Kvs {
			lvl.add(string(kv.Key))
		}
		if chunk.Header != nil && lvl.Revision == 0 {
			lvl.Revision = chunk.Header.Revision
		}
	}
	return lvl, nil
}

// add counts key, the next below the level's prefix in key order, in its
// child.
func (lvl *Level) add(key string) {
	name, dir := segment(key[len(lvl.Prefix):])
	if n := len(lvl.Children); n > 0 && lvl.Children[n-1].Name == name {
		lvl.Children[n-1].Count++
		return
	}
	lvl.Children = append(lvl.Children, Child{Name: name, Prefix: lvl.Prefix + name, Dir: dir, Count: 1})
}

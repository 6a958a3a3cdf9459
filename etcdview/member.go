package etcdview

import (
	"context"
	"errors"
	"fmt"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// MemberDialer connects to the member at one client URL alone, with the
// TLS and credentials of the main connection.
type MemberDialer func(ctx context.Context, endpoint string) (*clientv3.Client, error)

// SetMemberDialer says how DialMember reaches one member; Connect sets it
// from its Config, the caller of NewLive sets it when it wants DialMember.
func (l *Live) SetMemberDialer(d MemberDialer) { l.dialMember = d }

// ErrNoMemberDialer is DialMember on a Live made by NewLive without
// SetMemberDialer.
var ErrNoMemberDialer = errors.New("this connection cannot dial members one by one")

// DialMember is a Live of the member at endpoint alone, whose reads are
// serializable: each answer is that member's own store, not the leader's,
// which is what comparing members needs. Close closes it.
func (l *Live) DialMember(ctx context.Context, endpoint string) (*Live, error) {
	if l.dialMember == nil {
		return nil, ErrNoMemberDialer
	}
	cli, err := l.dialMember(ctx, endpoint)
	if err != nil {
		return nil, err
	}
	m := NewLive(cli, l.timeout)
	m.close = cli.Close
	m.serializable = true
	m.streamer = streamerOf(cli)
	return m, nil
}

// configDialer is the MemberDialer of a Config: Dial with one endpoint.
func configDialer(cfg Config) MemberDialer {
	return func(ctx context.Context, endpoint string) (*clientv3.Client, error) {
		c := cfg
		c.Endpoints = []string{endpoint}
		return Dial(ctx, c)
	}
}

// Hash is one member's HashKV: the hash of every revision its store holds
// from its compaction up to Revision.
type Hash struct {
	Hash            uint32
	Revision        int64 // the revision hashed (HashKV's hash_revision)
	CompactRevision int64 // the member's compaction, where the hash starts
	HeaderRevision  int64 // the member's newest revision when it answered
}

// HashKV asks the first endpoint of l for the hash of its store at rev
// (Maintenance.HashKV, a read). etcd allows it to the root role only when
// authentication is on, and not to a learner; a rev above the member's
// newest is rpctypes.ErrFutureRev, a compacted one a *CompactedError.
func (l *Live) HashKV(ctx context.Context, rev int64) (Hash, error) {
	eps := l.c.Endpoints()
	if len(eps) == 0 {
		return Hash{}, errors.New("hashkv: the client has no endpoint")
	}
	rctx, cancel := l.commandTimeout().bound(ctx)
	defer cancel()
	resp, err := l.c.HashKV(rctx, eps[0], rev)
	if err != nil {
		err = rpctypes.Error(requestError(rctx, err))
		if errors.Is(err, rpctypes.ErrCompacted) {
			return Hash{}, l.readError(ctx, "hashkv", "", rev, err)
		}
		return Hash{}, fmt.Errorf("hashkv of %s at revision %d: %w", eps[0], rev, err)
	}
	h := Hash{Hash: resp.Hash, Revision: resp.HashRevision, CompactRevision: resp.CompactRevision}
	if resp.Header != nil {
		h.HeaderRevision = resp.Header.Revision
	}
	return h, nil
}

// Range calls fn with every key of [key, end) at rev (end "" for key
// alone, "\x00" for every key from key on), values included, in key order,
// a chunk at a time: through RangeStream (etcd 3.7), or in pages of plain
// ranges before. fn may not keep the slice; memory holds about one chunk.
func (l *Live) Range(ctx context.Context, key, end string, rev int64, fn func([]KV) error) error {
	if !l.noStream.Load() {
		err := l.streamRange(ctx, key, end, rev, fn)
		if !errors.Is(err, errNoStream) {
			return err
		}
		l.noStream.Store(true)
	}
	limit := int64(pageKeys)
	for {
		res, err := l.rangeKeys(ctx, rangeRequest{key: key, end: end, rev: rev, limit: limit})
		if err != nil {
			return err
		}
		if err := fn(res.kvs); err != nil {
			return err
		}
		if !res.more || len(res.kvs) == 0 {
			return nil
		}
		key = res.kvs[len(res.kvs)-1].Key + "\x00"
		var bytes int
		for _, kv := range res.kvs {
			bytes += len(kv.Key) + len(kv.Value)
		}
		switch {
		case bytes < pageBytes/2:
			limit *= 2
		case bytes > 2*pageBytes:
			limit = max(1, limit/2)
		}
	}
}

// streamRange is Range through one RangeStream; the command timeout bounds
// the wait for each chunk.
func (l *Live) streamRange(ctx context.Context, key, end string, rev int64, fn func([]KV) error) error {
	r := rangeRequest{key: key, end: end, rev: rev}
	sctx, cancel, touch := l.idleBound(ctx)
	chunks, err := l.c.GetStream(sctx, key, l.readOpts(clientv3.WithRange(end), clientv3.WithRev(rev))...)
	if err != nil {
		cancel()
		return l.streamError(ctx, sctx, r, idleError(sctx, err))
	}
	defer func() {
		cancel()
		for range chunks {
		}
	}()
	var kvs []KV
	for chunk := range chunks {
		touch()
		if err := chunk.Err(); err != nil {
			return l.streamError(ctx, sctx, r, idleError(sctx, err))
		}
		kvs = kvs[:0]
		for _, kv := range chunk.Kvs {
			kvs = append(kvs, fromProto(kv))
		}
		if err := fn(kvs); err != nil {
			return err
		}
	}
	return nil
}

// readOpts are opts, serializable on a Live of one member.
func (l *Live) readOpts(opts ...clientv3.OpOption) []clientv3.OpOption {
	if l.serializable {
		opts = append(opts, clientv3.WithSerializable())
	}
	return opts
}

// EndpointStatus is the status of the first endpoint of l: on a Live of
// one member (DialMember), that member's. Its Err says why it did not
// answer.
func (l *Live) EndpointStatus(ctx context.Context) Member {
	eps := l.c.Endpoints()
	if len(eps) == 0 {
		return Member{Err: errors.New("the client has no endpoint")}
	}
	ctx, cancel := l.commandTimeout().bound(ctx)
	defer cancel()
	return l.status(ctx, eps[0])
}

package etcdview

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/etcdscope/etcdscope/decode"
	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Client is all of the etcd client API the live Source may call: ranges,
// watches and progress requests, and the Status, MemberList and HashKV RPCs,
// none of which changes state. *clientv3.Client satisfies it. Live holds nothing but
// a Client, so it cannot Put, Delete, run a Txn, Compact, grant a lease or
// defragment: it is read-only by construction.
type Client interface {
	Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error)
	// GetStream is etcd 3.7's RangeStream: a range in chunks, uncounted.
	GetStream(ctx context.Context, key string, opts ...clientv3.OpOption) (clientv3.GetStreamChan, error)
	Watch(ctx context.Context, key string, opts ...clientv3.OpOption) clientv3.WatchChan
	RequestProgress(ctx context.Context) error
	Status(ctx context.Context, endpoint string) (*clientv3.StatusResponse, error)
	MemberList(ctx context.Context, opts ...clientv3.OpOption) (*clientv3.MemberListResponse, error)
	// HashKV is Maintenance's hash of one member's store at a revision.
	HashKV(ctx context.Context, endpoint string, rev int64) (*clientv3.HashKVResponse, error)
	Endpoints() []string
}

// Live is the Source of a running etcd.
type Live struct {
	reads
	c       Client
	timeout time.Duration
	close   func() error
	// noStream is set once etcd answers RangeStream with Unimplemented
	// (before 3.7): uncounted ranges are plain ranges from then on.
	noStream atomic.Bool
	// noSerializable is set once the server refuses serializable reads
	// (kine): getAt's reads are linearizable from then on.
	noSerializable atomic.Bool
	// kine is set once Status or kineServer found kine; kineKnown once
	// kineServer asked.
	kine, kineKnown atomic.Bool
	// dialMember connects to one member alone (DialMember).
	dialMember MemberDialer
	// serializable makes every range serializable: set on a Live of one
	// member, whose answers must be its own.
	serializable bool
	// windowsRead counts the windows catching-up watches delivered
	// (watch_catchup.go).
	windowsRead atomic.Int64
	// streamer opens RangeStream on that member's connection, for
	// RangeRaw; nil on the others.
	streamer rangeStreamer
}

// NewLive reads etcd through c. requestTimeout bounds each request (not a
// watch); 0 means 5s, etcdctl's --command-timeout.
func NewLive(c Client, requestTimeout time.Duration) *Live {
	if requestTimeout <= 0 {
		requestTimeout = Config{}.CommandTimeoutOrDefault()
	}
	l := &Live{c: c, timeout: requestTimeout}
	l.reads = reads{l}
	return l
}

// Connect dials the etcd cfg names (see Dial) and reads it. Close closes the
// connection.
func Connect(ctx context.Context, cfg Config) (*Live, error) {
	cli, err := Dial(ctx, cfg)
	if err != nil {
		return nil, err
	}
	l := NewLive(cli, cfg.CommandTimeoutOrDefault())
	l.close = cli.Close
	l.dialMember = configDialer(cfg)
	return l, nil
}

// Close closes the connection Connect made; the caller of NewLive closes its
// own client.
func (l *Live) Close() error {
	if l.close == nil {
		return nil
	}
	return l.close()
}

func (l *Live) rangeKeys(ctx context.Context, r rangeRequest) (rangeResult, error) {
	if r.uncounted && r.limit > 0 && r.end != "" && !l.noStream.Load() {
		res, err := l.streamKeys(ctx, r)
		// kine reads and sorts the whole range before it sends the
		// first keys: a range costs it what a counted one costs etcd.
		res.counted = l.kine.Load()
		res.ahead = l.kine.Load()
		if !errors.Is(err, errNoStream) {
			return res, err
		}
		l.noStream.Store(true)
	}
	opts := l.readOpts(clientv3.WithRev(r.rev))
	if r.end != "" {
		opts = append(opts, clientv3.WithRange(r.end))
	}
	if r.limit > 0 {
		opts = append(opts, clientv3.WithLimit(r.limit))
	}
	if r.keysOnly {
		opts = append(opts, clientv3.WithKeysOnly())
	}
	if r.countOnly {
		opts = append(opts, clientv3.WithCountOnly())
	}
	rctx, cancel := l.commandTimeout().bound(ctx)
	defer cancel()
	resp, err := l.c.Get(rctx, r.key, opts...)
	if err != nil {
		return rangeResult{}, l.readError(ctx, "read "+describeRange(r.key, r.end), r.key, r.rev, requestError(rctx, err))
	}
	res := rangeResult{count: resp.Count, more: resp.More, rev: resp.Header.Revision, counted: r.uncounted && r.end != "", ahead: l.kine.Load()}
	for _, kv := range resp.Kvs {
		res.kvs = append(res.kvs, fromProto(kv))
	}
	return res, nil
}

// streamKeys reads the first r.limit keys of a range through RangeStream
// and hangs up: etcd sends the range in chunks that start at 10 keys and
// double, without counting it, where Range would walk its whole index from
// r.key to r.end to count it (about 170 ms for 1M keys, on 2 cores). The
// stream's revision comes only with its last chunk, so a range at the
// newest revision first learns the revision from a one-key read.
func (l *Live) streamKeys(ctx context.Context, r rangeRequest) (rangeResult, error) {
	rev := r.rev
	if rev == 0 {
		head, err := l.rangeKeys(ctx, rangeRequest{key: r.key})
		if err != nil {
			return rangeResult{}, err
		}
		rev = head.rev
	}
	opts := l.readOpts(clientv3.WithRev(rev), clientv3.WithRange(r.end))
	if r.keysOnly {
		opts = append(opts, clientv3.WithKeysOnly())
	}
	sctx, cancel := l.commandTimeout().bound(ctx)
	chunks, err := l.c.GetStream(sctx, r.key, opts...)
	if err != nil {
		cancel()
		return rangeResult{}, l.streamError(ctx, sctx, r, err)
	}
	// Hanging up makes the client's receiving goroutine send one last
	// error and close the channel: drain it, or that goroutine stays.
	defer func() {
		cancel()
		for range chunks {
		}
	}()
	res := rangeResult{rev: rev}
	for chunk := range chunks {
		if err := chunk.Err(); err != nil {
			return rangeResult{}, l.streamError(ctx, sctx, r, err)
		}
		for _, kv := range chunk.Kvs {
			if int64(len(res.kvs)) == r.limit {
				res.more = true
				return res, nil
			}
			res.kvs = append(res.kvs, fromProto(kv))
		}
		if chunk.Header == nil && int64(len(res.kvs)) == r.limit {
			res.more = true // the stream goes on: etcd has more
			return res, nil
		}
	}
	return res, nil
}

// errNoStream is an etcd before 3.7 answering RangeStream.
var errNoStream = errors.New("etcd has no RangeStream")

// streamError is readError for a RangeStream made under sctx, whose errors
// come as gRPC statuses; Unimplemented becomes errNoStream, for the
// fallback.
func (l *Live) streamError(ctx, sctx context.Context, r rangeRequest, err error) error {
	if status.Code(err) == codes.Unimplemented {
		return errNoStream
	}
	return l.readError(ctx, "read "+describeRange(r.key, r.end), r.key, r.rev, requestError(sctx, rpctypes.Error(err)))
}

// commandTimeout bounds each request.
func (l *Live) commandTimeout() *timeout { return newCommandTimeout(l.timeout) }

// readError says what failed, at which revision; err is in the user's words
// already (requestError). A compacted revision becomes a *CompactedError
// naming the compaction.
func (l *Live) readError(ctx context.Context, what, key string, rev int64, err error) error {
	at := "newest revision"
	if rev > 0 {
		at = fmt.Sprintf("revision %d", rev)
	}
	if errors.Is(err, rpctypes.ErrCompacted) {
		if c, cerr := l.compactRevision(ctx, key); cerr == nil {
			return fmt.Errorf("%s: %w", what, &CompactedError{Rev: rev, Compacted: c})
		}
	}
	return fmt.Errorf("%s at %s: %w", what, at, err)
}

// compactRevision asks etcd for its compaction revision, which no read RPC
// reports: a watch from revision 1 is answered with the compaction revision
// (WatchResponse.CompactRevision) and cancelled when revision 1 is gone. It
// needs read permission on key only. The caller knows that a compaction
// happened; otherwise the watch would wait for events until ctx ends.
func (l *Live) compactRevision(ctx context.Context, key string) (int64, error) {
	ctx, cancel := l.commandTimeout().bound(ctx)
	defer cancel()
	for resp := range l.c.Watch(ctx, key, clientv3.WithRev(1)) {
		if resp.CompactRevision != 0 {
			return resp.CompactRevision, nil
		}
		if err := resp.Err(); err != nil {
			return 0, err
		}
		if len(resp.Events) > 0 {
			return 0, nil
		}
	}
	return 0, fmt.Errorf("no compaction revision for %s: %w", key, ctx.Err())
}

func describeRange(key, end string) string {
	switch end {
	case "":
		return decode.EscapeKey(key)
	case "\x00":
		return decode.EscapeKey(key) + " and after"
	}
	if end == clientv3.GetPrefixRangeEnd(key) {
		return decode.EscapeKey(key) + "*"
	}
	return decode.EscapeKey(key) + ".." + decode.EscapeKey(end)
}

func fromProto(kv *mvccpb.KeyValue) KV {
	return KV{
		Key:            string(kv.Key),
		Value:          kv.Value,
		CreateRevision: kv.CreateRevision,
		ModRevision:    kv.ModRevision,
		Version:        kv.Version,
		Lease:          kv.Lease,
	}
}

// isTerminal says whether retrying cannot help: the user may not read the
// range, or the client was closed (gRPC's Canceled status, which clientv3
// passes on as is when the caller's context was not cancelled).
func isTerminal(err error) bool {
	return errors.Is(err, rpctypes.ErrPermissionDenied) ||
		errors.Is(err, rpctypes.ErrInvalidAuthToken) ||
		errors.Is(err, rpctypes.ErrAuthFailed) ||
		status.Code(err) == codes.Canceled
}

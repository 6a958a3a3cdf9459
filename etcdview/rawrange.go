package etcdview

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"
)

// RawKV is one key of a range as etcd encoded it: the bytes of its
// mvccpb.KeyValue. Comparing members needs no more until two differ: the
// same bytes are the same key, value, revisions, version and lease, while
// decoding every key of every member costs the comparison more than all
// of its reads. Bytes that differ may still be the same fields (another
// encoder's order), so a caller decodes both (Decode) before it calls them
// different.
type RawKV struct {
	Key   []byte // the key, inside Bytes
	Bytes []byte // the KeyValue message
}

// Decode is r's fields.
func (r RawKV) Decode() (KV, error) {
	var kv mvccpb.KeyValue
	if err := proto.Unmarshal(r.Bytes, &kv); err != nil {
		return KV{}, fmt.Errorf("key %q: %w", r.Key, err)
	}
	return fromProto(&kv), nil
}

// rangeStreamer opens etcd 3.7's RangeStream for one request on the
// member's connection, and nothing else: a Live that holds it can still
// only read.
type rangeStreamer func(ctx context.Context, req *pb.RangeRequest) (grpc.ClientStream, error)

// streamerOf is the rangeStreamer of cli's connection.
func streamerOf(cli *clientv3.Client) rangeStreamer {
	conn := cli.ActiveConnection()
	desc := &pb.KV_ServiceDesc.Streams[0]
	return func(ctx context.Context, req *pb.RangeRequest) (grpc.ClientStream, error) {
		// A chunk holds whole values: a few of etcd's largest (1.5 MiB
		// each) pass gRPC's default 4 MiB bound, as clientv3 lifts it.
		cs, err := conn.NewStream(ctx, desc, pb.KV_RangeStream_FullMethodName, grpc.MaxCallRecvMsgSize(math.MaxInt32))
		if err != nil {
			return nil, err
		}
		if err := cs.SendMsg(req); err != nil {
			return nil, err
		}
		return cs, cs.CloseSend()
	}
}

// RangeRaw is Range with each key as etcd encoded it, for a comparison of
// members: fn owns each chunk it is given, which is read again for no
// other call. Through RangeStream on a Live of one member (DialMember);
// otherwise, or before etcd 3.7, Range's keys encoded again.
func (l *Live) RangeRaw(ctx context.Context, key, end string, rev int64, fn func([]RawKV) error) error {
	if l.streamer != nil && !l.noStream.Load() {
		err := l.rawStream(ctx, key, end, rev, fn)
		if !errors.Is(err, errNoStream) {
			return err
		}
		l.noStream.Store(true)
	}
	return l.Range(ctx, key, end, rev, func(kvs []KV) error {
		raw := make([]RawKV, len(kvs))
		for i, kv := range kvs {
			b, err := proto.MarshalOptions{Deterministic: true}.Marshal(&mvccpb.KeyValue{Key: []byte(kv.Key), Value: kv.Value,
				CreateRevision: kv.CreateRevision, ModRevision: kv.ModRevision, Version: kv.Version, Lease: kv.Lease})
			if err != nil {
				return err
			}
			raw[i] = RawKV{Key: []byte(kv.Key), Bytes: b}
		}
		return fn(raw)
	})
}

// rawStream is RangeRaw through one RangeStream. Each answer is received
// into a message of no fields, so that protobuf keeps all of it as
// unknown bytes, which rawChunk splits into keys without decoding them.
func (l *Live) rawStream(ctx context.Context, key, end string, rev int64, fn func([]RawKV) error) error {
	r := rangeRequest{key: key, end: end, rev: rev}
	sctx, cancel, touch := l.idleBound(ctx)
	defer cancel()
	req := &pb.RangeRequest{Key: []byte(key), RangeEnd: []byte(end), Revision: rev, Serializable: l.serializable}
	cs, err := l.streamer(sctx, req)
	if err != nil {
		return l.streamError(ctx, sctx, r, idleError(sctx, err))
	}
	for {
		var m emptypb.Empty
		err := cs.RecvMsg(&m)
		touch()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return l.streamError(ctx, sctx, r, idleError(sctx, err))
		}
		kvs, err := rawChunk(m.ProtoReflect().GetUnknown())
		if err != nil {
			return fmt.Errorf("read %s at revision %d: etcd answered a chunk that is not a RangeStreamResponse: %w", describeRange(key, end), rev, err)
		}
		if err := fn(kvs); err != nil {
			return err
		}
	}
}

// Field numbers of etcd's rpc.proto and kv.proto that rawChunk reads.
const (
	fieldRangeResponse protowire.Number = 1 // RangeStreamResponse.range_response
	fieldKvs           protowire.Number = 2 // RangeResponse.kvs
	fieldKey           protowire.Number = 1 // KeyValue.key
)

// rawChunk is the keys of one RangeStreamResponse's encoding, each as
// bytes of b. It reads the fields as proto.Unmarshal does: a message field
// that comes twice is merged (its repeated kvs appended), the last key of
// a KeyValue wins, a field of another wire type than its own is an
// unknown field; what protobuf cannot parse is an error.
func rawChunk(b []byte) ([]RawKV, error) {
	var kvs []RawKV
	err := eachField(b, func(num protowire.Number, typ protowire.Type, v []byte) error {
		if num != fieldRangeResponse || typ != protowire.BytesType {
			return nil
		}
		return eachField(v, func(num protowire.Number, typ protowire.Type, v []byte) error {
			if num != fieldKvs || typ != protowire.BytesType {
				return nil
			}
			kv := RawKV{Bytes: v, Key: []byte{}}
			err := eachField(v, func(num protowire.Number, typ protowire.Type, v []byte) error {
				if num == fieldKey && typ == protowire.BytesType {
					kv.Key = v
				}
				return nil
			})
			kvs = append(kvs, kv)
			return err
		})
	})
	return kvs, err
}

// eachField calls fn with each field of the message b: its number, wire
// type, and for a bytes field its contents (nil for the others).
func eachField(b []byte, fn func(protowire.Number, protowire.Type, []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		var v []byte
		if typ == protowire.BytesType {
			v, n = protowire.ConsumeBytes(b)
		} else {
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if err := fn(num, typ, v); err != nil {
			return err
		}
	}
	return nil
}

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
	"google.golang.org/grpc/encoding"
	grpcproto "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
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

// RawChunk is one chunk of RangeRaw's keys, each as bytes of the chunk's
// buffer.
type RawChunk struct {
	KVs []RawKV
	buf []byte // the RangeStreamResponse as received; nil for keys Range decoded
}

// RawBuffers hands the buffers of the chunks a caller is done with back to
// RangeRaw, which receives the next chunks into them rather than into new
// ones: a comparison of two 1 GiB stores then holds a few chunks' worth of
// buffers, and leaves the collector nothing to sweep.
type RawBuffers struct{ free chan RawChunk }

// NewRawBuffers keeps up to n buffers for reuse.
func NewRawBuffers(n int) *RawBuffers { return &RawBuffers{free: make(chan RawChunk, n)} }

// Put gives c's buffer back for another chunk: neither c's keys nor their
// bytes may be used after. A nil RawBuffers keeps nothing.
func (b *RawBuffers) Put(c RawChunk) {
	if b == nil || c.buf == nil {
		return
	}
	select {
	case b.free <- RawChunk{KVs: c.KVs[:0], buf: c.buf[:0]}:
	default:
	}
}

// get is a chunk to receive into: one given back, or an empty one.
func (b *RawBuffers) get() RawChunk {
	if b != nil {
		select {
		case c := <-b.free:
			return c
		default:
		}
	}
	return RawChunk{}
}

// rangeStreamer opens etcd 3.7's RangeStream for one request on the
// member's connection, and nothing else: a Live that holds it can still
// only read.
type rangeStreamer func(ctx context.Context, req *pb.RangeRequest) (grpc.ClientStream, error)

// streamerOf is the rangeStreamer of cli's connection.
func streamerOf(cli *clientv3.Client) rangeStreamer {
	conn := cli.ActiveConnection()
	desc := &pb.KV_ServiceDesc.Streams[0]
	codec := rawCodec{encoding.GetCodecV2(grpcproto.Name)}
	return func(ctx context.Context, req *pb.RangeRequest) (grpc.ClientStream, error) {
		// A chunk holds whole values: a few of etcd's largest (1.5 MiB
		// each) pass gRPC's default 4 MiB bound, as clientv3 lifts it.
		cs, err := conn.NewStream(ctx, desc, pb.KV_RangeStream_FullMethodName, grpc.MaxCallRecvMsgSize(math.MaxInt32),
			grpc.ForceCodecV2(codec))
		if err != nil {
			return nil, err
		}
		if err := cs.SendMsg(req); err != nil {
			return nil, err
		}
		return cs, cs.CloseSend()
	}
}

// rawMessage is one RangeStreamResponse as etcd encoded it.
type rawMessage struct{ b []byte }

// rawCodec is gRPC's proto codec, but for a rawMessage, which it copies
// whole into the message's own buffer: where protobuf would copy it once
// more into a message's unknown fields, in a new buffer each chunk (the
// two copies and their garbage were a third of check members' own CPU).
type rawCodec struct{ proto encoding.CodecV2 }

func (c rawCodec) Marshal(v any) (mem.BufferSlice, error) { return c.proto.Marshal(v) }

func (c rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	m, ok := v.(*rawMessage)
	if !ok {
		return c.proto.Unmarshal(data, v)
	}
	n := data.Len()
	if cap(m.b) < n {
		// etcd sizes its chunks by their bytes, within a factor of two:
		// room for a larger one spares most reallocations.
		m.b = make([]byte, n, n+n/2)
	}
	m.b = m.b[:n]
	data.CopyTo(m.b)
	return nil
}

func (c rawCodec) Name() string { return c.proto.Name() }

// RangeRaw is Range with each key as etcd encoded it, for a comparison of
// members: fn owns each chunk it is given until it Puts it in bufs (which
// may be nil). Through RangeStream on a Live of one member (DialMember);
// otherwise, or before etcd 3.7, Range's keys encoded again.
func (l *Live) RangeRaw(ctx context.Context, key, end string, rev int64, bufs *RawBuffers, fn func(RawChunk) error) error {
	if l.streamer != nil && !l.noStream.Load() {
		err := l.rawStream(ctx, key, end, rev, bufs, fn)
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
		return fn(RawChunk{KVs: raw})
	})
}

// rawStream is RangeRaw through one RangeStream. Each answer is received
// whole into a buffer of bufs' (rawCodec), which rawChunk splits into keys
// without decoding them.
func (l *Live) rawStream(ctx context.Context, key, end string, rev int64, bufs *RawBuffers, fn func(RawChunk) error) error {
	r := rangeRequest{key: key, end: end, rev: rev}
	sctx, cancel, touch := l.idleBound(ctx)
	defer cancel()
	req := &pb.RangeRequest{Key: []byte(key), RangeEnd: []byte(end), Revision: rev, Serializable: l.serializable}
	cs, err := l.streamer(sctx, req)
	if err != nil {
		return l.streamError(ctx, sctx, r, idleError(sctx, err))
	}
	for {
		c := bufs.get()
		m := rawMessage{b: c.buf}
		err := cs.RecvMsg(&m)
		touch()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return l.streamError(ctx, sctx, r, idleError(sctx, err))
		}
		c.buf = m.b
		if c.KVs, err = rawChunk(c.KVs[:0], m.b); err != nil {
			return fmt.Errorf("read %s at revision %d: etcd answered a chunk that is not a RangeStreamResponse: %w", describeRange(key, end), rev, err)
		}
		if err := fn(c); err != nil {
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

// rawChunk appends to kvs the keys of one RangeStreamResponse's encoding,
// each as bytes of b. It reads the fields as proto.Unmarshal does: a message field
// that comes twice is merged (its repeated kvs appended), the last key of
// a KeyValue wins, a field of another wire type than its own is an
// unknown field; what protobuf cannot parse is an error.
func rawChunk(kvs []RawKV, b []byte) ([]RawKV, error) {
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

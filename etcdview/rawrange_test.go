package etcdview

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/etcdscope/etcdscope/embedded/etcdtest"
	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/encoding"
	grpcproto "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
)

// TestRangeRawAnswersWhatRangeAnswers reads one member's keys through
// RangeRaw (RangeStream's own bytes on 3.7, Range's keys encoded again
// before) and through Range, which clientv3 decodes: the same keys in the
// same order, with the same values, revisions, versions and leases, over
// many chunks, each given back once read, for the next to reuse.
func TestRangeRawAnswersWhatRangeAnswers(t *testing.T) {
	etcdtest.EachVersion(t, func(t *testing.T, e etcdtest.Etcd) {
		ctx := testCtx(t)
		lease, err := e.Client.Grant(ctx, 600)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 300 {
			key, val := fmt.Sprintf("/registry/configmaps/ns/cm-%03d", i), strings.Repeat("v", i*37)
			switch i {
			case 7:
				val = "\x00\xff\x1b[2J binary"
			case 8:
				val = ""
			case 150:
				val = strings.Repeat("large ", 20<<10)
			}
			var opts []clientv3.OpOption
			if i%50 == 3 {
				opts = append(opts, clientv3.WithLease(lease.ID))
			}
			if _, err := e.Client.Put(ctx, key, val, opts...); err != nil {
				t.Fatal(err)
			}
		}
		rev := put(t, e.Client, "/registry/configmaps/ns/cm-005", "written twice")
		put(t, e.Client, "/registry/configmaps/ns/cm-006", "after the revision read")

		src, err := Connect(ctx, liveConfig(e, "", ""))
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		m, err := src.DialMember(ctx, e.Endpoints[0])
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		key, end := "/registry/configmaps/", clientv3.GetPrefixRangeEnd("/registry/configmaps/")
		var want []KV
		if err := m.Range(ctx, key, end, rev, func(kvs []KV) error { want = append(want, kvs...); return nil }); err != nil {
			t.Fatal(err)
		}
		// Each chunk is given back once read: the next ones come in the
		// same buffers, and say the same.
		bufs := NewRawBuffers(1)
		var got []KV
		chunks := 0
		err = m.RangeRaw(ctx, key, end, rev, bufs, func(c RawChunk) error {
			chunks++
			for _, r := range c.KVs {
				kv, err := r.Decode()
				if err != nil {
					return err
				}
				if string(r.Key) != kv.Key {
					t.Errorf("RawKV.Key %q, its bytes' key %q", r.Key, kv.Key)
				}
				got = append(got, kv)
			}
			bufs.Put(c)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(want) != 300 || !slices.EqualFunc(got, want, sameFields) {
			first := 0
			for first < min(len(got), len(want)) && sameFields(got[first], want[first]) {
				first++
			}
			t.Fatalf("RangeRaw: %d keys, Range %d (of 300); they differ from the %dth on", len(got), len(want), first)
		}
		// RangeStream's chunks start at 10 keys; Range's pages, at 500.
		if e.Version == "3.7" && chunks < 2 {
			t.Errorf("RangeRaw answered 300 keys in %d chunk(s)", chunks)
		}
		if streamed := !m.noStream.Load(); streamed != (e.Version == "3.7") {
			t.Errorf("etcd %s: RangeRaw read through RangeStream: %v", e.Version, streamed)
		}
	})
}

// TestRawChunksReuseTheBuffersGivenBack receives chunks as RangeRaw does:
// into the buffer of a chunk given back when it holds the next one, into a
// new one when it is too small or none was given back, and the keys split
// from it are the chunk's.
func TestRawChunksReuseTheBuffersGivenBack(t *testing.T) {
	codec := rawCodec{encoding.GetCodecV2(grpcproto.Name)}
	encode := func(keys ...string) mem.BufferSlice {
		var kvs []*mvccpb.KeyValue
		for _, k := range keys {
			kvs = append(kvs, &mvccpb.KeyValue{Key: []byte(k), Value: []byte(strings.Repeat("v", 100))})
		}
		b, err := proto.Marshal(&pb.RangeStreamResponse{RangeResponse: &pb.RangeResponse{Kvs: kvs}})
		if err != nil {
			t.Fatal(err)
		}
		// As gRPC hands a message over: in the frames it came in.
		return mem.BufferSlice{mem.SliceBuffer(b[:len(b)/2]), mem.SliceBuffer(b[len(b)/2:])}
	}
	bufs := NewRawBuffers(1)
	receive := func(data mem.BufferSlice) RawChunk {
		c := bufs.get()
		m := rawMessage{b: c.buf}
		if err := codec.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		c.buf = m.b
		var err error
		if c.KVs, err = rawChunk(c.KVs[:0], m.b); err != nil {
			t.Fatal(err)
		}
		return c
	}
	keys := func(c RawChunk) (ks []string) {
		for _, kv := range c.KVs {
			ks = append(ks, string(kv.Key))
		}
		return ks
	}
	first := receive(encode("a", "b", "c"))
	bufs.Put(first)
	second := receive(encode("d", "e"))
	if &second.buf[0] != &first.buf[0] || !slices.Equal(keys(second), []string{"d", "e"}) {
		t.Errorf("a smaller chunk after one given back: keys %q, same buffer %v", keys(second), &second.buf[0] == &first.buf[0])
	}
	third := receive(encode("f"))
	if &third.buf[0] == &second.buf[0] {
		t.Error("a chunk not given back was received into again")
	}
	bufs.Put(third)
	large := receive(encode("g", "h", "i", "j", "k", "l", "m", "n"))
	if !slices.Equal(keys(large), []string{"g", "h", "i", "j", "k", "l", "m", "n"}) {
		t.Errorf("a chunk larger than the buffer given back: keys %q", keys(large))
	}
}

func sameFields(a, b KV) bool {
	return a.Key == b.Key && bytes.Equal(a.Value, b.Value) && a.CreateRevision == b.CreateRevision &&
		a.ModRevision == b.ModRevision && a.Version == b.Version && a.Lease == b.Lease
}

// FuzzRawChunk holds rawChunk to what proto.Unmarshal makes of the same
// bytes, the reference it replaces: whatever protobuf can read as a
// RangeStreamResponse, rawChunk splits into the same KeyValues, each with
// its key; nothing makes it panic.
func FuzzRawChunk(f *testing.F) {
	chunk := func(kvs ...*mvccpb.KeyValue) []byte {
		b, err := proto.Marshal(&pb.RangeStreamResponse{RangeResponse: &pb.RangeResponse{Kvs: kvs, More: true,
			Header: &pb.ResponseHeader{Revision: 9, MemberId: 3}}})
		if err != nil {
			f.Fatal(err)
		}
		return b
	}
	f.Add(chunk())
	f.Add(chunk(&mvccpb.KeyValue{Key: []byte("/registry/a"), Value: []byte("v"), CreateRevision: 2, ModRevision: 5, Version: 3, Lease: 7}))
	f.Add(chunk(&mvccpb.KeyValue{Key: []byte("a")}, &mvccpb.KeyValue{Key: []byte("b"), Value: bytes.Repeat([]byte{0xff}, 300)}))
	f.Add(append(chunk(&mvccpb.KeyValue{Key: []byte("a")}), chunk(&mvccpb.KeyValue{Key: []byte("b")})...))
	f.Add([]byte{0x0a, 0x05, 0x12, 0x03, 0x0a, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := rawChunk(nil, b)
		var want pb.RangeStreamResponse
		if proto.Unmarshal(b, &want) != nil {
			return
		}
		if err != nil {
			t.Fatalf("rawChunk: %v; proto.Unmarshal read it", err)
		}
		kvs := want.GetRangeResponse().GetKvs()
		if len(got) != len(kvs) {
			t.Fatalf("rawChunk: %d KeyValues, proto.Unmarshal %d", len(got), len(kvs))
		}
		for i, r := range got {
			var kv mvccpb.KeyValue
			if err := proto.Unmarshal(r.Bytes, &kv); err != nil {
				t.Fatalf("KeyValue %d: %v", i, err)
			}
			if !proto.Equal(&kv, kvs[i]) || !bytes.Equal(r.Key, kvs[i].Key) {
				t.Fatalf("KeyValue %d: %v with key %q, proto.Unmarshal %v", i, &kv, r.Key, kvs[i])
			}
		}
	})
}

package etcdview

import (
	"testing"

	bolt "go.etcd.io/bbolt"
	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/server/v3/storage/schema"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// bucketValues are the values of a data file's "key" bucket.
func bucketValues(t testing.TB, path string) [][]byte {
	t.Helper()
	db, err := bolt.Open(path, 0o400, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var values [][]byte
	err = db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(schema.Key.Name()).ForEach(func(_, v []byte) error {
			values = append(values, append([]byte(nil), v...))
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return values
}

// oddValues are encodings etcd does not write but protobuf allows or
// refuses: repeated fields, unknown fields, a known number with another
// wire type, groups, truncations.
func oddValues() [][]byte {
	tag := protowire.AppendTag
	var odd [][]byte
	add := func(b []byte) { odd = append(odd, b) }
	add(nil)
	add(protowire.AppendVarint(tag(nil, kvCreateField, protowire.VarintType), 1<<63))
	// The last of a repeated field wins.
	b := protowire.AppendBytes(tag(nil, kvKeyField, protowire.BytesType), []byte("first"))
	add(protowire.AppendBytes(tag(b, kvKeyField, protowire.BytesType), []byte("second")))
	// A known number with another wire type is an unknown field.
	add(protowire.AppendVarint(tag(nil, kvKeyField, protowire.VarintType), 7))
	add(protowire.AppendBytes(tag(nil, kvLeaseField, protowire.BytesType), []byte{1}))
	add(protowire.AppendFixed64(tag(nil, kvVersionField, protowire.Fixed64Type), 9))
	// Unknown fields of every wire type, a group among them.
	b = protowire.AppendFixed32(tag(nil, 99, protowire.Fixed32Type), 1)
	b = tag(b, 100, protowire.StartGroupType)
	b = protowire.AppendVarint(tag(b, 1, protowire.VarintType), 5)
	b = tag(b, 100, protowire.EndGroupType)
	add(protowire.AppendVarint(tag(b, kvVersionField, protowire.VarintType), 3))
	// Malformed: an unbalanced group, a truncated length, a truncated
	// varint, field number 0, a reserved wire type.
	add(tag(nil, 100, protowire.StartGroupType))
	add(tag(nil, 100, protowire.EndGroupType))
	add(append(tag(nil, kvKeyField, protowire.BytesType), 5, 'a'))
	add(append(tag(nil, kvCreateField, protowire.VarintType), 0x80))
	add([]byte{0x00, 0x01})
	add([]byte{0x0e})
	return odd
}

// TestParseKVFieldsReadsWhatProtoUnmarshalReads holds the index's parser to
// proto.Unmarshal over every value of the kube-1.7 file, of a generated file
// with leases, deletions and compaction, and over odd encodings.
func TestParseKVFieldsReadsWhatProtoUnmarshalReads(t *testing.T) {
	values := bucketValues(t, kube17+"boltdb-db")
	values = append(values, bucketValues(t, storyFile(t))...)
	values = append(values, oddValues()...)
	for _, v := range values {
		checkKVFields(t, v)
	}
}

func checkKVFields(t *testing.T, v []byte) {
	t.Helper()
	var want mvccpb.KeyValue
	wantErr := proto.Unmarshal(v, &want)
	got, err := parseKVFields(v)
	if (err == nil) != (wantErr == nil) {
		t.Fatalf("parse %x: error %v, proto.Unmarshal's %v", v, err, wantErr)
	}
	if err != nil {
		return
	}
	if string(got.key) != string(want.Key) || got.create != want.CreateRevision || got.version != want.Version || got.lease != want.Lease {
		t.Fatalf("parse %x: key %q create %d version %d lease %d, proto.Unmarshal: %q %d %d %d", v,
			got.key, got.create, got.version, got.lease, want.Key, want.CreateRevision, want.Version, want.Lease)
	}
}

func FuzzParseKVFields(f *testing.F) {
	for _, v := range bucketValues(f, kube17+"boltdb-db") {
		f.Add(v)
	}
	for _, v := range oddValues() {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v []byte) { checkKVFields(t, v) })
}

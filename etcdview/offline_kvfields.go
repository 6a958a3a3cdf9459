package etcdview

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// kvFields are the fields of a stored mvccpb.KeyValue the key index needs:
// all but the value and mod_revision (the bucket key is the revision).
type kvFields struct {
	key                    []byte // aliases the parsed bytes
	create, version, lease int64
}

// The field numbers of mvccpb.KeyValue (etcd's api/mvccpb/kv.proto).
const (
	kvKeyField     protowire.Number = 1
	kvCreateField  protowire.Number = 2
	kvVersionField protowire.Number = 4
	kvLeaseField   protowire.Number = 6
)

// parseKVFields reads what kvFields holds from an encoded mvccpb.KeyValue,
// skipping the value without copying it. proto.Unmarshal spent most of the
// load of a 1M-key file copying values the index drops (memmove and the
// allocator, 1.25 s of 4.1 s); this reads the same fields as it does, the
// same way: the last occurrence of a field wins, and a known field number
// with another wire type is an unknown field, skipped (protobuf-go's
// impl.MessageInfo keeps such fields as unknown). It fails where
// proto.Unmarshal fails: on a malformed tag or field number, a truncated
// field or an unbalanced group. The differential tests and FuzzParseKVFields hold it to
// proto.Unmarshal.
func parseKVFields(b []byte) (kvFields, error) {
	var f kvFields
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return kvFields{}, parseErr(n)
		}
		// ConsumeTag takes numbers up to MaxInt32 (for MessageSet);
		// proto.Unmarshal refuses those past MaxValidNumber.
		if num > protowire.MaxValidNumber {
			return kvFields{}, fmt.Errorf("%w: field number %d", errKeyValue, num)
		}
		b = b[n:]
		switch {
		case num == kvKeyField && typ == protowire.BytesType:
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return kvFields{}, parseErr(n)
			}
			f.key, b = v, b[n:]
		case typ == protowire.VarintType && (num == kvCreateField || num == kvVersionField || num == kvLeaseField):
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return kvFields{}, parseErr(n)
			}
			b = b[n:]
			switch num {
			case kvCreateField:
				f.create = int64(v)
			case kvVersionField:
				f.version = int64(v)
			default:
				f.lease = int64(v)
			}
		default:
			n := protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return kvFields{}, parseErr(n)
			}
			b = b[n:]
		}
	}
	return f, nil
}

var errKeyValue = errors.New("not an mvccpb.KeyValue")

func parseErr(n int) error {
	return fmt.Errorf("%w: %w", errKeyValue, protowire.ParseError(n))
}

// parseEntry reads one entry of the key bucket: the revision in its bucket
// key and the index's fields of the KeyValue it holds, with create, version
// and lease copied into the revision.
func parseEntry(k, v []byte) (revision, kvFields, error) {
	r, err := parseRevision(k)
	if err != nil {
		return revision{}, kvFields{}, err
	}
	kv, err := parseKVFields(v)
	if err != nil {
		return revision{}, kvFields{}, fmt.Errorf("revision %d: %w", r.main, err)
	}
	r.create, r.ver, r.lease = kv.create, kv.version, kv.lease
	return r, kv, nil
}

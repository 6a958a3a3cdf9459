package sqlitefile

import (
	"bytes"
	"encoding/binary"
	"math"
)

// varint reads SQLite's variable-length integer at the start of b: up to
// eight bytes of seven bits, the high bit saying another follows, and a
// ninth of eight bits. n is 0 when b ends first.
func varint(b []byte) (v uint64, n int) {
	if len(b) > 0 && b[0] < 0x80 {
		// One byte: most serial types and lengths of kine's rows.
		return uint64(b[0]), 1
	}
	return varintLong(b)
}

func varintLong(b []byte) (v uint64, n int) {
	for i := 0; i < 8; i++ {
		if i >= len(b) {
			return 0, 0
		}
		v = v<<7 | uint64(b[i]&0x7f)
		if b[i] < 0x80 {
			return v, i + 1
		}
	}
	if len(b) < 9 {
		return 0, 0
	}
	return v<<8 | uint64(b[8]), 9
}

// Kind is the storage class of a value (fileformat2.html, "Record Format").
type Kind uint8

const (
	Null Kind = iota
	Integer
	Float
	Text
	Blob
)

// Value is one column of a record. Bytes, of a Text or Blob, is loaded
// only when asked for (Len is always set), and points into the walk's
// buffers: it is valid until the callback that got it returns.
type Value struct {
	Kind  Kind
	Int   int64
	Float float64
	Len   int64
	Bytes []byte
}

// serialKind is the kind and size in the record's body of serial type t.
func serialKind(t uint64) (Kind, int64) {
	switch {
	case t == 0:
		return Null, 0
	case t <= 4:
		return Integer, int64(t)
	case t == 5:
		return Integer, 6
	case t == 6:
		return Integer, 8
	case t == 7:
		return Float, 8
	case t == 8, t == 9:
		return Integer, 0
	case t < 12:
		return Null, -1 // reserved for internal use: never in a file
	case t%2 == 0:
		return Blob, int64((t - 12) / 2)
	}
	return Text, int64((t - 13) / 2)
}

// number decodes an Integer or Float of serial type t from its body bytes.
func number(t uint64, b []byte) Value {
	switch t {
	case 7:
		return Value{Kind: Float, Float: math.Float64frombits(binary.BigEndian.Uint64(b))}
	case 8:
		return Value{Kind: Integer}
	case 9:
		return Value{Kind: Integer, Int: 1}
	}
	// A big-endian two's complement integer of 1, 2, 3, 4, 6 or 8 bytes.
	v := int64(int8(b[0]))
	for _, c := range b[1:] {
		v = v<<8 | int64(c)
	}
	return Value{Kind: Integer, Int: v}
}

// Record is the payload of one cell: a header of serial types, one a
// column, then their values. Columns are decoded on demand, and the part
// of a payload that spilled onto overflow pages is read only when a
// column asked for lies there.
type Record struct {
	w *walk
	// Rowid is a table row's rowid (0 in an index).
	Rowid int64
	// local is the part of the payload on the cell's page, size the
	// whole payload, overflow the first overflow page (0: none).
	local    []byte
	size     int64
	overflow uint32
	// types and ends are each column's serial type and where its value
	// ends in the payload; body is where the first value starts.
	types []uint64
	ends  []int64
	body  int64
}

// maxHeader is the largest record header read: SQLite's tables have at
// most 32767 columns (SQLITE_MAX_COLUMN), of serial types of at most 9
// bytes each.
const maxHeader = 32767*9 + 9

// parse reads the record's header.
func (r *Record) parse() error {
	hdr, n := varint(r.local)
	if n == 0 || hdr < uint64(n) || hdr > maxHeader || int64(hdr) > r.size {
		return damaged("a record's header of %d bytes in a payload of %d", hdr, r.size)
	}
	b, err := r.prefix(int64(hdr))
	if err != nil {
		return err
	}
	r.types, r.ends = r.types[:0], r.ends[:0]
	end := int64(hdr)
	for i := n; i < int(hdr); {
		t, m := varint(b[i:hdr])
		if m == 0 {
			return damaged("a record's header ends inside a serial type")
		}
		_, size := serialKind(t)
		if size < 0 {
			return damaged("a record holds serial type %d", t)
		}
		if size > r.size-end {
			return damaged("a record's values of more than its payload's %d bytes", r.size)
		}
		end += size
		r.types, r.ends = append(r.types, t), append(r.ends, end)
		i += m
	}
	r.body = int64(hdr)
	return nil
}

// Columns is how many columns the record holds: a row written before an
// ALTER TABLE ADD COLUMN holds fewer than its table has.
func (r *Record) Columns() int { return len(r.types) }

// Column is the record's column i, its bytes loaded when load is true; a
// column the record does not hold is NULL, as SQLite reads it.
func (r *Record) Column(i int, load bool) (Value, error) {
	if i < 0 || i >= len(r.types) {
		return Value{}, nil
	}
	t := r.types[i]
	kind, size := serialKind(t)
	start := r.ends[i] - size
	if kind == Text || kind == Blob {
		v := Value{Kind: kind, Len: size}
		if load {
			b, err := r.prefix(r.ends[i])
			if err != nil {
				return Value{}, err
			}
			v.Bytes = b[start:r.ends[i]:r.ends[i]]
		}
		return v, nil
	}
	if kind == Null {
		return Value{}, nil
	}
	b, err := r.prefix(r.ends[i])
	if err != nil {
		return Value{}, err
	}
	return number(t, b[start:r.ends[i]]), nil
}

// Kind is the kind of the record's column i and, of TEXT or BLOB, its
// length: Column's without a load or a Value, for the columns of every row
// of a table whose bytes are not read.
func (r *Record) Kind(i int) (kind Kind, n int64) {
	if i < 0 || i >= len(r.types) {
		return Null, 0
	}
	kind, n = serialKind(r.types[i])
	if kind != Text && kind != Blob {
		n = 0
	}
	return kind, n
}

// Bytes is the record's column i when it holds TEXT or BLOB, loaded, and
// its kind (Null for a column the record does not hold): Column's for the
// names read of every entry of an index, with no Value made (a Value a
// row was two fifths of such a walk). bytes is nil for other kinds.
func (r *Record) Bytes(i int) (b []byte, kind Kind, err error) {
	if i < 0 || i >= len(r.types) {
		return nil, Null, nil
	}
	t := r.types[i]
	kind, size := serialKind(t)
	if kind != Text && kind != Blob {
		return nil, kind, nil
	}
	p, err := r.prefix(r.ends[i])
	if err != nil {
		return nil, kind, err
	}
	return p[r.ends[i]-size : r.ends[i] : r.ends[i]], kind, nil
}

// Int is the record's column i as SQL reads an INTEGER column, NULL as 0;
// ok is false when it holds a value of another kind. It is Column's for
// the columns read of every row of a table: no Value is made.
func (r *Record) Int(i int) (v int64, ok bool, err error) {
	if i < 0 || i >= len(r.types) {
		return 0, true, nil
	}
	switch t := r.types[i]; {
	case t == 0:
		return 0, true, nil
	case t <= 6:
		b, err := r.prefix(r.ends[i])
		if err != nil {
			return 0, false, err
		}
		_, size := serialKind(t)
		return number(t, b[r.ends[i]-size:r.ends[i]]).Int, true, nil
	case t == 8, t == 9:
		return int64(t - 8), true, nil
	}
	return 0, false, nil
}

// prefix is the payload's first n bytes (n <= size), read on from the
// overflow pages into the walk's scratch buffer when they are not all on
// the cell's page.
func (r *Record) prefix(n int64) ([]byte, error) {
	if n <= int64(len(r.local)) {
		return r.local, nil
	}
	return r.w.gather(r, n)
}

// before says whether the record's first column sorts before from, a
// TEXT, in SQLite's order of values (sqlite3MemCompare): NULL, then the
// numbers, then TEXT by its bytes (the BINARY collation), then BLOBs.
func (r *Record) before(from []byte) (bool, error) {
	v, err := r.Column(0, true)
	if err != nil {
		return false, err
	}
	switch v.Kind {
	case Text:
		return bytes.Compare(v.Bytes, from) < 0, nil
	case Blob:
		return false, nil
	}
	return true, nil
}

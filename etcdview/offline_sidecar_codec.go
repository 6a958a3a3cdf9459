package etcdview

import (
	"bufio"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"math"
)

// The sidecar's format, version 1, after the header (sidecarHeader):
//
//	uvarint keys, uvarint revisions
//	per key, sorted: uvarint bytes shared with the key before, uvarint
//	  length of the rest, the rest, uvarint its revision count
//	per revision, by key then oldest first: uvarint main, uvarint sub,
//	  byte tombstone (0 or 1), uvarint create, uvarint version, uvarint lease
//	CRC-32C of everything before it, header included, 4 bytes little-endian
//
// Keys under /registry share long prefixes, which the front coding drops:
// the 1M-key bench file's index takes a third of its keys' bytes.
const sidecarMagic = "etcdscope key index\n\x01"

var crc32c = crc32.MakeTable(crc32.Castagnoli)

// sidecarHeader is the magic with the format's version, then the identity
// of the data file the index was built from.
func sidecarHeader(id fileIdentity) []byte {
	b := []byte(sidecarMagic)
	b = binary.LittleEndian.AppendUint64(b, uint64(id.size))
	b = binary.LittleEndian.AppendUint64(b, uint64(id.mtime))
	return append(b, id.head[:]...)
}

func encodeIndex(w io.Writer, header []byte, x *keyIndex) error {
	sum := crc32.New(crc32c)
	bw := bufio.NewWriterSize(io.MultiWriter(w, sum), 1<<20)
	var buf []byte
	put := func(vs ...uint64) {
		for _, v := range vs {
			buf = binary.AppendUvarint(buf, v)
		}
	}
	flush := func() {
		bw.Write(buf)
		buf = buf[:0]
	}
	bw.Write(header)
	put(uint64(x.len()), uint64(len(x.revs)))
	prev := ""
	for i := range x.len() {
		k := x.key(i)
		shared := commonPrefix(prev, k)
		put(uint64(shared), uint64(len(k)-shared))
		buf = append(buf, k[shared:]...)
		put(uint64(len(x.revisions(i))))
		flush()
		prev = k
	}
	for _, r := range x.revs {
		put(uint64(r.main), uint64(r.sub))
		tomb := byte(0)
		if r.tombstone {
			tomb = 1
		}
		buf = append(buf, tomb)
		put(uint64(r.create), uint64(r.ver), uint64(r.lease))
		if len(buf) > 4<<10 {
			flush()
		}
	}
	flush()
	if err := bw.Flush(); err != nil {
		return err
	}
	_, err := w.Write(binary.LittleEndian.AppendUint32(nil, sum.Sum32()))
	return err
}

func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

var errCorruptSidecar = errors.New("corrupt index")

// decodeIndex reads the index after header, checking it whole: the
// checksum, then that every count, length and order holds, so that a
// damaged file is refused rather than read out of bounds or searched out
// of order.
func decodeIndex(header, rest []byte) (keyIndex, error) {
	if len(rest) < 4 {
		return keyIndex{}, errCorruptSidecar
	}
	body, trailer := rest[:len(rest)-4], rest[len(rest)-4:]
	sum := crc32.Update(crc32.Checksum(header, crc32c), crc32c, body)
	if sum != binary.LittleEndian.Uint32(trailer) {
		return keyIndex{}, errCorruptSidecar
	}
	d := &sidecarDecoder{b: body}
	nKeys, nRevs := d.uvarint(), d.uvarint()
	// Every key takes 3 bytes at least, every revision 6: counts past
	// that are damage, not a reason to allocate.
	if d.err != nil || nKeys > uint64(len(body)/3) || nRevs > uint64(min(len(body)/6, math.MaxInt32)) {
		return keyIndex{}, errCorruptSidecar
	}
	x := keyIndex{entries: make([]keyEntry, nKeys), revs: make([]revision, 0, nRevs)}
	if err := d.keys(&x); err != nil {
		return keyIndex{}, err
	}
	if err := d.revisions(&x); err != nil || len(d.b) > 0 {
		return keyIndex{}, errCorruptSidecar
	}
	return x, nil
}

type sidecarDecoder struct {
	b   []byte
	err error
}

func (d *sidecarDecoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errCorruptSidecar
		return 0
	}
	d.b = d.b[n:]
	return v
}

// keys reads the keys and their revision counts into x, each key after
// the one before.
func (d *sidecarDecoder) keys(x *keyIndex) error {
	var prev string
	var key []byte
	revs := 0
	for i := range x.entries {
		shared, n := d.uvarint(), d.uvarint()
		if d.err != nil || shared > uint64(len(prev)) || n > uint64(len(d.b)) {
			return errCorruptSidecar
		}
		key = append(append(key[:0], prev[:shared]...), d.b[:n]...)
		d.b = d.b[n:]
		if i > 0 && string(key) <= prev {
			return errCorruptSidecar
		}
		r := x.arena.add(key)
		prev = x.arena.get(r)
		c := d.uvarint()
		if d.err != nil || c == 0 || c > uint64(cap(x.revs)-revs) {
			return errCorruptSidecar
		}
		revs += int(c)
		x.entries[i] = keyEntry{key: r, revEnd: int32(revs)}
	}
	if revs != cap(x.revs) {
		return errCorruptSidecar
	}
	return nil
}

// revisions reads each key's revisions, which must come oldest first.
func (d *sidecarDecoder) revisions(x *keyIndex) error {
	for _, e := range x.entries {
		for j := range int(e.revEnd) - len(x.revs) {
			r := revision{main: int64(d.uvarint()), sub: int64(d.uvarint())}
			if len(d.b) == 0 || d.b[0] > 1 {
				return errCorruptSidecar
			}
			r.tombstone, d.b = d.b[0] == 1, d.b[1:]
			r.create, r.ver, r.lease = int64(d.uvarint()), int64(d.uvarint()), int64(d.uvarint())
			if d.err != nil {
				return d.err
			}
			if prev := len(x.revs) - 1; j > 0 && (x.revs[prev].main > r.main || x.revs[prev].main == r.main && x.revs[prev].sub >= r.sub) {
				return errCorruptSidecar
			}
			x.revs = append(x.revs, r)
		}
	}
	return nil
}

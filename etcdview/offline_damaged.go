package etcdview

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
	"runtime/debug"

	bolt "go.etcd.io/bbolt"
)

// What --db wants, said after what it was given instead.
const wantDataFile = "not an etcd data file (member/snap/db or a snapshot)"

// checkFile says, before bbolt opens and maps path, whether it can be an
// etcd data file, and returns its size. bbolt would block opening a FIFO,
// write meta pages into an empty file (a read-only one fails with "bad file
// descriptor"), and map a file cut short past its end, where the first read
// of a missing page faults.
func checkFile(path string) (int64, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, fmt.Errorf("open etcd data file: %w", err)
	}
	if what := notRegular(fi.Mode()); what != "" {
		return 0, fmt.Errorf("--db %s is %s, %s", path, what, wantDataFile)
	}
	switch size := fi.Size(); {
	case size == 0:
		return 0, fmt.Errorf("--db %s is empty, %s", path, wantDataFile)
	case size < minBoltSize:
		return 0, fmt.Errorf("--db %s is %d bytes, too short for a bbolt file (%s)", path, size, wantDataFile)
	}
	fh, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("open etcd data file: %w", err)
	}
	defer fh.Close()
	m, err := readMeta(fh, fi.Size())
	if err != nil {
		return 0, fmt.Errorf("--db %s: %w", path, err)
	}
	if need := m.highWater(); need > fi.Size() {
		return 0, fmt.Errorf("--db %s is cut short: the file is %d bytes, its header says %d (a copy that did not finish?)", path, fi.Size(), need)
	}
	return fi.Size(), nil
}

// notRegular names what a file of mode m is when it is not a regular file.
func notRegular(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return ""
	case m.IsDir():
		return "a directory"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO (named pipe)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "not a regular file"
}

// bbolt's on-disk format (go.etcd.io/bbolt/internal/common): every page
// starts with a 16-byte header (id, flags, count, overflow); pages 0 and 1
// are meta pages, each holding magic, version, page size, flags, the root
// bucket (root page, sequence), the freelist page, pgid (the high water
// mark: pages in use end before it), txid, and an FNV-64a checksum of the
// meta before it. bbolt writes them in the machine's byte order, little
// endian on every platform etcd supports.
const (
	boltMagic      = 0xED0CDAED
	boltVersion    = 2
	pageHeaderSize = 16
	metaSize       = 64
	checksumAt     = 56 // offset of the checksum in the meta
	// minBoltSize is two meta pages of bbolt's smallest page size (1 KiB,
	// the first getPageSizeFromSecondMeta tries).
	minBoltSize = 2 * 1024
)

// boltMeta is what a meta page promises about the file.
type boltMeta struct {
	pageSize uint32
	pgid     uint64
	txid     uint64
}

func (m boltMeta) highWater() int64 { return int64(m.pgid) * int64(m.pageSize) }

var (
	errNotBolt      = errors.New("no bbolt header: " + wantDataFile)
	errBoltVersion  = errors.New("a bbolt file of another format version")
	errMetaChecksum = errors.New("meta page fails its checksum")
)

// metaAt reads the meta page at offset off.
func metaAt(r io.ReaderAt, off int64) (boltMeta, error) {
	var b [pageHeaderSize + metaSize]byte
	if _, err := r.ReadAt(b[:], off); err != nil {
		return boltMeta{}, errMetaChecksum
	}
	m := b[pageHeaderSize:]
	le := binary.LittleEndian
	switch {
	case le.Uint32(m[0:]) != boltMagic:
		return boltMeta{}, errNotBolt
	case le.Uint32(m[4:]) != boltVersion:
		return boltMeta{}, errBoltVersion
	}
	h := fnv.New64a()
	h.Write(m[:checksumAt])
	if h.Sum64() != le.Uint64(m[checksumAt:]) {
		return boltMeta{}, errMetaChecksum
	}
	return boltMeta{pageSize: le.Uint32(m[8:]), pgid: le.Uint64(m[40:]), txid: le.Uint64(m[48:])}, nil
}

// readMeta is the meta page bbolt would use: of the two, the valid one with
// the higher txid (DB.meta). As bbolt's DB.getPageSize, it takes the page
// size, which says where the second meta page is, from the first, or else
// looks for the second at each page size from 1 KiB to 16 MiB.
func readMeta(r io.ReaderAt, size int64) (boltMeta, error) {
	m0, err0 := metaAt(r, 0)
	offsets := []int64{int64(m0.pageSize)}
	if err0 != nil {
		offsets = nil
		for i := range 15 {
			if off := int64(1024) << i; off < size-1024 {
				offsets = append(offsets, off)
			}
		}
	}
	err1 := errMetaChecksum
	var m1 boltMeta
	for _, off := range offsets {
		if m1, err1 = metaAt(r, off); err1 == nil {
			break
		}
	}
	switch {
	case err0 == nil && (err1 != nil || m0.txid >= m1.txid):
		return m0, nil
	case err1 == nil:
		return m1, nil
	case errors.Is(err0, errNotBolt), errors.Is(err0, errBoltVersion):
		return boltMeta{}, err0
	}
	return boltMeta{}, errors.New("damaged: neither meta page passes its checksum")
}

// view runs fn in a read transaction of the file. bbolt trusts the pages it
// maps: on a damaged file its assertions panic ("Page expected to be: 17,
// but self identifies as 0"), and a page pointer past the end of the file
// faults (SIGBUS, SIGSEGV), which SetPanicOnFault makes a panic of this
// goroutine. Either ends the read with an error; bbolt's View rolls the
// transaction back on the way out.
func (f *File) view(fn func(tx *bolt.Tx) error) error {
	return guardDamage(f.path, func() error { return f.db.View(fn) })
}

// guardDamage runs fn, turning a panic or fault in it into an error saying
// the file at path is damaged.
func guardDamage(path string, fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = &damagedError{path, fmt.Sprint(r)}
		}
	}()
	return fn()
}

// damagedError is a read that bbolt panicked or faulted in.
type damagedError struct{ path, what string }

func (e *damagedError) Error() string {
	return fmt.Sprintf("data file %s is damaged: %s", e.path, e.what)
}

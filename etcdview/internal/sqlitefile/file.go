// Package sqlitefile reads the b-trees of an SQLite database file straight
// from its pages (https://www.sqlite.org/fileformat2.html), read-only and
// without SQLite: a walk of a table in rowid order or of an index in key
// order, for the few reads of kine's file that a SQL engine in pure Go makes
// ten times slower than SQLite itself (modernc.org/sqlite steps about 1 µs a
// row). It knows nothing of SQL: its caller finds the b-tree it wants in
// the schema and checks that its columns are the ones it expects.
//
// Everything in the file is untrusted: every offset and count is checked
// against the page it is on, a walk visits no more pages than the file has
// and goes no deeper than SQLite does, and what does not fit is an error
// that says what is damaged, never a panic or a loop.
package sqlitefile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Header fields (fileformat2.html, "The Database Header"), big endian.
const (
	headerSize = 100
	magic      = "SQLite format 3\x00"
)

// ErrDamaged is what every error that says the file is not what SQLite
// writes is (errors.Is): its text says what is wrong where.
var ErrDamaged = errors.New("damaged")

type damagedError struct{ msg string }

func (e damagedError) Error() string        { return e.msg }
func (e damagedError) Is(target error) bool { return target == ErrDamaged }

func damaged(format string, args ...any) error {
	return damagedError{fmt.Sprintf(format, args...)}
}

// File is an SQLite database file, read page by page. Its methods may be
// called from many goroutines at once: each walk has buffers of its own.
type File struct {
	r        io.ReaderAt
	pageSize int
	// usable is the page size less the bytes each page reserves at its
	// end for an extension (SQLite's usableSize).
	usable int
	pages  uint32
	// autoVacuum says the file has pointer-map pages, which no b-tree
	// may point at.
	autoVacuum bool
}

// Open reads the header of the file r, size bytes long. It refuses what
// the walks cannot read as SQLite would: a text encoding other than UTF-8
// (the caller reads such a file with SQLite), a page size or reserve that
// SQLite never writes, a header whose page count is stale (written by an
// SQLite older than 3.7.0, which left it unset) or larger than the file.
func Open(r io.ReaderAt, size int64) (*File, error) {
	b := make([]byte, headerSize)
	if _, err := r.ReadAt(b, 0); err != nil {
		return nil, fmt.Errorf("read the SQLite header: %w", err)
	}
	if string(b[:len(magic)]) != magic {
		return nil, errors.New("no SQLite header")
	}
	be := binary.BigEndian
	f := &File{r: r, pageSize: int(be.Uint16(b[16:]))}
	if f.pageSize == 1 {
		f.pageSize = 65536
	}
	if f.pageSize < 512 || f.pageSize&(f.pageSize-1) != 0 {
		return nil, damaged("its header gives a page size of %d bytes", f.pageSize)
	}
	// SQLite needs at least 480 usable bytes a page (sqlite3BtreeSetPageSize).
	if f.usable = f.pageSize - int(b[20]); f.usable < 480 {
		return nil, damaged("its header reserves %d bytes of each %d-byte page", b[20], f.pageSize)
	}
	// The payload fractions are fixed at 64, 32 and 32.
	if b[21] != 64 || b[22] != 32 || b[23] != 32 {
		return nil, damaged("its header's payload fractions are %d, %d and %d", b[21], b[22], b[23])
	}
	if enc := be.Uint32(b[56:]); enc != 1 {
		return nil, fmt.Errorf("%w: text encoding %d, not UTF-8", ErrUnsupported, enc)
	}
	if be.Uint32(b[24:]) != be.Uint32(b[92:]) {
		return nil, fmt.Errorf("%w: its header's page count is stale", ErrUnsupported)
	}
	f.pages = be.Uint32(b[28:])
	if f.pages == 0 || int64(f.pages)*int64(f.pageSize) > size {
		return nil, damaged("its header says %d pages of %d bytes, the file is %d bytes", f.pages, f.pageSize, size)
	}
	f.autoVacuum = be.Uint32(b[52:]) != 0
	return f, nil
}

// ErrUnsupported is wrapped by the errors of a file that is whole but that
// this package does not read (the caller reads it with SQLite instead).
var ErrUnsupported = errors.New("not read by the page reader")

// PageSize is the size of each page, in bytes.
func (f *File) PageSize() int { return f.pageSize }

// checkPage says whether n is a page a b-tree or an overflow chain may
// point at: one of the file's, and not a pointer-map page of an
// auto-vacuum file, the first at page 2 and then one every usable/5 + 1
// pages (ptrmapPageno).
func (f *File) checkPage(n uint32) error {
	if n < 1 || n > f.pages {
		return damaged("page %d is not one of its %d pages", n, f.pages)
	}
	if f.autoVacuum && n >= 2 && (n-2)%uint32(f.usable/5+1) == 0 {
		return damaged("page %d is a pointer-map page", n)
	}
	return nil
}

// readPages reads pages nums into buf, page i at buf[i*pageSize:], a run
// of consecutive page numbers in one read: a b-tree written in key order
// lies mostly in runs, and a read a page is most of the walk's time.
func (f *File) readPages(nums []uint32, buf []byte) error {
	for i := 0; i < len(nums); {
		j := i + 1
		for j < len(nums) && nums[j] == nums[j-1]+1 {
			j++
		}
		off := int64(nums[i]-1) * int64(f.pageSize)
		if _, err := f.r.ReadAt(buf[i*f.pageSize:j*f.pageSize], off); err != nil {
			return fmt.Errorf("read pages %d to %d: %w", nums[i], nums[j-1], err)
		}
		i = j
	}
	return nil
}

// readStretch reads the pages from page first on into buf, whole pages.
func (f *File) readStretch(first uint32, buf []byte) error {
	if _, err := f.r.ReadAt(buf, int64(first-1)*int64(f.pageSize)); err != nil {
		return fmt.Errorf("read pages %d to %d: %w", first, int(first)+len(buf)/f.pageSize-1, err)
	}
	return nil
}

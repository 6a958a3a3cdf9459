package etcdview

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// SQLite's file header (https://www.sqlite.org/fileformat2.html, "The
// Database Header"): 100 bytes at the start of the file, big endian: the
// magic string, the page size at 16 (1 for 65536), the file change counter
// at 24, the size in pages at 28, valid only when the change counter
// matches the version-valid-for number at 92 (an older SQLite may have
// written the file without updating it).
const (
	sqliteMagic      = "SQLite format 3\x00"
	sqliteHeaderSize = 100
)

// sqliteHeader is what a file's header promises about it.
type sqliteHeader struct {
	pageSize int64
	pages    int64 // 0 when the header does not say
	fileSize int64 // the file's length, from the file system
}

// isSQLite says whether the first bytes of a file are SQLite's magic.
func isSQLite(head []byte) bool { return string(head) == sqliteMagic }

// parseSQLiteHeader reads the first sqliteHeaderSize bytes of a file.
func parseSQLiteHeader(b []byte) (sqliteHeader, error) {
	if len(b) < sqliteHeaderSize || !isSQLite(b[:len(sqliteMagic)]) {
		return sqliteHeader{}, errors.New("no SQLite header")
	}
	be := binary.BigEndian
	h := sqliteHeader{pageSize: int64(be.Uint16(b[16:]))}
	if h.pageSize == 1 {
		h.pageSize = 65536
	}
	if h.pageSize < 512 || h.pageSize&(h.pageSize-1) != 0 {
		return sqliteHeader{}, fmt.Errorf("damaged: its header gives a page size of %d bytes", h.pageSize)
	}
	if be.Uint32(b[24:]) == be.Uint32(b[92:]) {
		h.pages = int64(be.Uint32(b[28:]))
	}
	return h, nil
}

// checkSQLiteFile says, before SQLite opens path, whether it is whole:
// SQLite reads a file cut short as if its missing pages were zeros, which
// it then reports as a malformed image at the first read that needs them.
func checkSQLiteFile(path string) (sqliteHeader, error) {
	fh, err := os.Open(path)
	if err != nil {
		return sqliteHeader{}, fmt.Errorf("open kine file: %w", err)
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return sqliteHeader{}, fmt.Errorf("open kine file: %w", err)
	}
	if what := notRegular(fi.Mode()); what != "" {
		return sqliteHeader{}, fmt.Errorf("--db %s is %s, not k3s' state.db", path, what)
	}
	b := make([]byte, sqliteHeaderSize)
	if _, err := io.ReadFull(fh, b); err != nil {
		return sqliteHeader{}, fmt.Errorf("--db %s is %d bytes, too short for an SQLite file", path, fi.Size())
	}
	h, err := parseSQLiteHeader(b)
	if err != nil {
		return sqliteHeader{}, fmt.Errorf("--db %s: %w", path, err)
	}
	h.fileSize = fi.Size()
	if need := h.pages * h.pageSize; need > h.fileSize {
		return sqliteHeader{}, fmt.Errorf("--db %s is cut short: the file is %d bytes, its header says %d (a copy that did not finish?)", path, h.fileSize, need)
	}
	return h, nil
}

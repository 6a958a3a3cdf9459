package etcdview

import (
	"context"
	"io"
	"os"

	"github.com/etcdscope/etcdscope/etcdview/internal/pgsql"
)

// Offline is a Source read from a file, which never changes while it is
// read: an etcd data file (File) or kine's SQLite file (KineFile).
type Offline interface {
	Source
	// Scan reads every revision the file holds below a prefix (see
	// File.Scan).
	Scan(ctx context.Context, prefix string, opts ScanOptions, fn func([]ScanRecord) error) (ScanResult, error)
	Close() error
	// offline keeps Live, which has a Scan and a Close, from being one.
	offline()
}

func (*File) offline()     {}
func (*KineFile) offline() {}

var (
	_ Offline = (*File)(nil)
	_ Offline = (*KineFile)(nil)
)

// OpenOffline opens the file at path read-only as what its first bytes say
// it is: kine's SQLite file ("SQLite format 3\0"), or else an etcd data
// file, with o (bbolt's magic is 16 bytes further, in its first meta page);
// a postgres:// URL is a recording in PostgreSQL (OpenKinePG).
func OpenOffline(path string, o FileOptions) (Offline, error) {
	if pgsql.IsURL(path) {
		return OpenKinePG(path)
	}
	if isSQLite(fileHead(path)) {
		k, err := OpenKineFile(path)
		if err != nil {
			return nil, err
		}
		return k, nil
	}
	f, err := OpenFileWith(path, o)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// fileHead is the first bytes of the regular file at path where SQLite's
// magic would be, or nil: a FIFO is not opened, as opening one blocks
// until a writer comes. The openers say what is wrong with what it is not.
func fileHead(path string) []byte {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	fh, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer fh.Close()
	b := make([]byte, len(sqliteMagic))
	if _, err := io.ReadFull(fh, b); err != nil {
		return nil
	}
	return b
}

package etcdview

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dustin/go-humanize"
	"github.com/etcdscope/etcdscope/etcdview/internal/pgsql"
	"github.com/etcdscope/etcdscope/etcdview/internal/sqlitefile"
	_ "modernc.org/sqlite" // registers the driver "sqlite"
)

// KineFile is the Source of the SQLite file kine keeps k3s' cluster state in
// (/var/lib/rancher/k3s/server/db/state.db), read offline, as File reads an
// etcd data file.
//
// kine's one table is a log of revisions: each row is one revision of one
// key, its id the revision; created marks a creation, deleted a deletion,
// prev_revision points at the key's row before, and an update or deletion
// row carries that row's value again in old_value, for the watch's
// previous value. The row named compact_rev_key holds the compaction
// revision in prev_revision; kine's compaction deletes the rows its later
// rows replaced, so that the store as of the compaction revision and after
// is whole, and before it rows may be gone.
type KineFile struct {
	reads
	revBounds
	path string
	size int64
	db   *sql.DB
	// pageSize, pages and freePages are SQLite's page counts, for the
	// file's Layout: kine reports its DB size as the pages in use.
	pageSize, pages, freePages int64
	// walBytes is the size of the write-ahead log beside the file when it
	// was opened, and walRead whether its writes are read (see
	// OpenKineFile).
	walBytes int64
	walRead  bool
	// paged reads kine's table and indexes from the file's pages, for the
	// reads of every row; nil when they are read with SQL (openPages).
	paged *kinePages

	// The key index is built on the first read that needs it: du and a
	// replay read the rows in revision order without it.
	indexOnce sync.Once
	index     keyIndex
	indexErr  error
	indexed   atomic.Bool // the index is built, without error
	// dead are the ids of the deletions, once read (deadIDs).
	deadMu   sync.Mutex
	dead     []int64
	deadRead bool

	recOnce sync.Once
	rec     recording // what a recording holds beside kine's table (kinedb_times.go)

	// pg is the cluster's recording in PostgreSQL it reads (kinepg.go);
	// nil for a SQLite file.
	pg *pgsql.Target
}

// OpenKineFile opens kine's SQLite file read-only, so that nothing of it or
// beside it is ever written, even while k3s runs.
//
// k3s runs kine with a write-ahead log (state.db-wal): its newest writes
// are there until a checkpoint copies them into the file (every 1000
// pages, and when it compacts), and the log's index (state.db-shm) says
// which pages of the log are current. When both are there, the file is
// read with them, as SQLite reads a database it may not write to
// (readonly_shm: the index mapped read-only, and no read mark of its own
// written in it; a read-only file never checkpoints the log). Otherwise
// it is read immutable: without locks, without the log, as of the last
// checkpoint, which Status then says.
func OpenKineFile(path string) (*KineFile, error) {
	hdr, err := checkSQLiteFile(path)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open kine file %s: %w", path, err)
	}
	f := &KineFile{path: path, size: hdr.fileSize, pageSize: hdr.pageSize}
	query := "mode=ro&immutable=1"
	wal, walErr := os.Stat(abs + "-wal")
	_, shmErr := os.Stat(abs + "-shm")
	if walErr == nil {
		f.walBytes = wal.Size()
		// SQLite creates a log that is not there when it opens one.
		if f.walRead = f.walBytes > 0 && shmErr == nil; f.walRead {
			query = "mode=ro&readonly_shm=1"
		}
	}
	// Without the file: scheme SQLite takes the whole DSN for a path and
	// opens the file read-write.
	dsn := (&url.URL{Scheme: "file", OmitHost: true, Path: abs, RawQuery: query}).String()
	if f.db, err = sql.Open("sqlite", dsn); err != nil {
		return nil, fmt.Errorf("open kine file %s: %w", path, err)
	}
	f.reads = reads{f}
	ctx := context.Background()
	if err := f.load(ctx); err != nil {
		f.db.Close()
		return nil, kineError(path, err)
	}
	f.paged = openPages(ctx, f.db, abs, f.walRead)
	return f, nil
}

// Close closes the file.
func (f *KineFile) Close() error { return errors.Join(f.db.Close(), f.paged.close()) }

// load checks that the file holds kine's table, and reads its revision,
// compaction and page counts.
func (f *KineFile) load(ctx context.Context) error {
	_, err := f.db.ExecContext(ctx, `SELECT id, name, created, deleted, create_revision, prev_revision, lease, value, old_value FROM kine LIMIT 0`)
	if err != nil && strings.Contains(err.Error(), "no such") {
		return fmt.Errorf("%w: %v", errNotKine, err)
	}
	if err != nil {
		return err
	}
	var rev, compacted sql.NullInt64
	err = f.db.QueryRowContext(ctx, `SELECT (SELECT MAX(id) FROM kine), (SELECT MAX(prev_revision) FROM kine WHERE name = 'compact_rev_key')`).Scan(&rev, &compacted)
	if err != nil {
		return err
	}
	f.rev, f.compacted, f.kine = rev.Int64, compacted.Int64, true
	f.revBounds.recording = f.recording().is
	if f.pg != nil {
		return nil
	}
	return f.db.QueryRowContext(ctx, `SELECT page_count, freelist_count FROM pragma_page_count(), pragma_freelist_count()`).Scan(&f.pages, &f.freePages)
}

var errNotKine = errors.New("an SQLite file without kine's table: not k3s' state.db")

// kineError says err of the file at path in one line: what is not kine's
// file, or what SQLite found damaged.
func kineError(path string, err error) error {
	switch msg := err.Error(); {
	case errors.Is(err, sqlitefile.ErrDamaged):
		return fmt.Errorf("kine file %s is damaged: %v", path, err)
	case errors.Is(err, errNotKine):
		return fmt.Errorf("--db %s is %w", path, errNotKine)
	case strings.Contains(msg, "malformed"), strings.Contains(msg, "not a database"), strings.Contains(msg, "disk I/O error"):
		return fmt.Errorf("kine file %s is damaged: %v", path, err)
	}
	return fmt.Errorf("read kine file %s: %w", path, err)
}

// kineInternal says whether a row's name is one of kine's own, not a key
// it serves: the compaction revision (and kube-apiserver's compact_rev_key,
// kept as compact_rev_key_apiserver), the rows that fill the gaps a failed
// insert leaves in the ids (gap-N), and the key kine writes at start to
// check its health.
func kineInternal(name []byte) bool {
	return bytes.HasPrefix(name, []byte("compact_rev_key")) || bytes.HasPrefix(name, []byte("gap-")) || string(name) == "/registry/health"
}

// Description names the file and says how fresh what it reads is: with
// its write-ahead log, or as of its last checkpoint, with writes left
// unread. The explorer's header and status say it.
func (f *KineFile) Description() string {
	if f.pg != nil {
		return f.pgDescription()
	}
	desc := fmt.Sprintf("%s %s (%s)", f.kind(), f.path, humanize.IBytes(uint64(f.size))) + f.gapsNote()
	switch {
	case f.walRead:
		desc += fmt.Sprintf(" and its write-ahead log (%s), as of revision %d: kine may be running and writing after it",
			humanize.IBytes(uint64(f.walBytes)), f.rev)
	case f.walBytes > 0:
		base := filepath.Base(f.path)
		desc += fmt.Sprintf(", as of its last checkpoint: %s of newer writes in %s-wal not read (no %s-shm to read them with)",
			humanize.IBytes(uint64(f.walBytes)), base, base)
	}
	return desc
}

// kind names the file: a recording (etcdscope record's), or k3s' kine file.
func (f *KineFile) kind() string {
	if f.recording().is {
		return "recording"
	}
	return "kine file"
}

// Status describes the file as the one member whose data it is.
func (f *KineFile) Status(ctx context.Context) (Cluster, error) {
	if f.pg != nil {
		return f.pgStatus(), nil
	}
	return Cluster{
		Kine:            true,
		Recording:       f.recording().is,
		Description:     f.Description(),
		Revision:        f.rev,
		CompactRevision: f.compacted,
		Members: []Member{{
			Name:     f.kind(),
			Endpoint: f.path,
			DBSize:   f.pages * f.pageSize,
			DBInUse:  (f.pages - f.freePages) * f.pageSize,
			Revision: f.rev,
		}},
	}, nil
}

// layout is the file's pages as a Layout: SQLite keeps no per-table page
// counts but in its dbstat table, whose read is a walk of every page.
func (f *KineFile) layout() *Layout {
	if f.pg != nil {
		return nil
	}
	return &Layout{PageSize: int(f.pageSize), Size: f.pages * f.pageSize, FileSize: f.size,
		FreePages: f.freePages, InUse: (f.pages - f.freePages) * f.pageSize}
}

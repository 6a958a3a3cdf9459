package record

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/dustin/go-humanize"
)

// retainEvery is how often a recording with a bound checks it, when
// Options.RetainEvery does not say.
const retainEvery = 10 * time.Second

// trimStep is how many ids one transaction of a trim spans: the file is
// consistent after each (the start moved up to it), and a transaction's
// pages in the write-ahead log stay a few MB.
const trimStep = 20000

// retain drops the oldest revisions past the bounds of opts: those that
// arrived before Keep, then as many more as keep the pages in use within
// MaxSize. It fails when no more can go and the file is still over
// MaxSize: its snapshot alone is larger.
func (r *run) retain(ctx context.Context) error {
	if r.opts.Keep <= 0 && r.opts.MaxSize <= 0 {
		return nil
	}
	now := r.opts.Now()
	r.retained = now
	start, err := r.f.start(ctx)
	if err != nil {
		return err
	}
	if r.opts.Keep > 0 {
		var first sql.NullInt64
		err := r.f.db.QueryRowContext(ctx, `SELECT MIN(id) FROM etcdscope_revisions WHERE unix_nano >= ?`, now.Add(-r.opts.Keep).UnixNano()).Scan(&first)
		if err != nil {
			return err
		}
		// None arrived since: every revision is older, but the newest.
		cut := r.f.last
		if first.Valid {
			cut = first.Int64 - 1
		}
		if start, err = r.f.trim(ctx, start, cut); err != nil {
			return err
		}
	}
	for r.opts.MaxSize > 0 {
		used, err := r.f.used(ctx)
		if err != nil || used <= r.opts.MaxSize {
			return err
		}
		if start >= r.f.last {
			return fmt.Errorf("--max-size %s is smaller than the recording's snapshot of %q alone (%s): give a larger one",
				humanize.IBytes(uint64(r.opts.MaxSize)), r.f.prefix, humanize.IBytes(uint64(used)))
		}
		// The rows go in proportion to the excess, at least a sixteenth
		// of them a round: the snapshot's rows stay, so the excess shrinks
		// slower than the rows.
		span := r.f.last - start
		step := max(span*(used-r.opts.MaxSize)/used, span/16, 1)
		if start, err = r.f.trim(ctx, start, min(start+step, r.f.last)); err != nil {
			return err
		}
	}
	return nil
}

// start is the id the recording is whole from: kine's compaction revision
// (see markStart).
func (f *File) start(ctx context.Context) (int64, error) {
	var start sql.NullInt64
	err := f.db.QueryRowContext(ctx, `SELECT MAX(prev_revision) FROM kine WHERE name = 'compact_rev_key'`).Scan(&start)
	return start.Int64, err
}

// used is the bytes of the file's pages in use: SQLite reuses the free
// ones before it grows the file.
func (f *File) used(ctx context.Context) (int64, error) {
	var n int64
	err := f.db.QueryRowContext(ctx, `SELECT (page_count - freelist_count) * page_size FROM pragma_page_count(), pragma_freelist_count(), pragma_page_size()`).Scan(&n)
	return n, err
}

// trim moves the recording's start from id start to cut, trimStep ids a
// transaction, and returns where it stands. Each row after the old start
// and up to the new one replaced the row it names as its key's before
// (prev_revision): that row goes, as kine's compaction deletes what later
// rows replaced; a deletion goes too, its key not live at the new start
// (nor in etcdscope_keys, when it was the key's last row).
// What stays up to the new start is the last row of every key live there:
// the store as of it, whole. The times before it go but the last one
// (the arrival of the revisions after it, up to the next), and so do the
// gaps before it.
func (f *File) trim(ctx context.Context, start, cut int64) (int64, error) {
	for start < cut {
		next := min(cut, start+trimStep)
		if err := f.trimTo(ctx, start, next); err != nil {
			return start, fmt.Errorf("drop the revisions of %s before %d: %w", f.path, next, err)
		}
		start = next
	}
	return start, nil
}

func (f *File) trimTo(ctx context.Context, start, next int64) error {
	tx, err := f.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, s := range []struct {
		q    string
		args []any
	}{
		{`DELETE FROM etcdscope_keys WHERE (name, id) IN (SELECT name, id FROM kine WHERE id > ? AND id <= ? AND deleted != 0)`,
			[]any{start, next}},
		{`DELETE FROM kine WHERE id IN (SELECT prev_revision FROM kine WHERE id > ? AND id <= ? AND prev_revision > 0)
			OR (id > ? AND id <= ? AND deleted != 0)`, []any{start, next, start, next}},
		{`DELETE FROM etcdscope_revisions WHERE id < (SELECT MAX(id) FROM etcdscope_revisions WHERE id <= ? AND unix_nano IS NOT NULL)
			AND NOT EXISTS (SELECT 1 FROM kine WHERE kine.id = etcdscope_revisions.id)`, []any{next}},
		{`DELETE FROM etcdscope_gaps WHERE to_revision <= COALESCE((SELECT revision FROM etcdscope_revisions WHERE id = ?), ?)`, []any{next, next}},
		{`UPDATE kine SET prev_revision = ? WHERE name = 'compact_rev_key'`, []any{next}},
	} {
		if _, err := tx.ExecContext(ctx, s.q, s.args...); err != nil {
			return err
		}
	}
	return tx.Commit()
}

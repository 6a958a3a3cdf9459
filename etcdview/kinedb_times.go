package etcdview

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// RecordedTimes is a source that knows when its revisions happened: a
// recording (etcdscope record), which wrote down the time each revision
// arrived, in a table of its own beside kine's (etcdscope_revisions: a
// row's id, etcd's revision of it, and the time, NULL for the rows of a
// snapshot, which happened before the recording; a row that arrived with
// the one before it has none of its own). A window --since then
// starts at a recorded time, not at one estimated from the times the
// objects hold.
type RecordedTimes interface {
	// NewestTime is when the newest revision read arrived; false when the
	// source records no time.
	NewestTime(ctx context.Context) (time.Time, bool, error)
	// RevisionSince is the first revision that arrived at or after t;
	// false when none did.
	RevisionSince(ctx context.Context, t time.Time) (int64, bool, error)
	// TimeOf is when revision rev arrived, or the newest revision before
	// it that the source has a time of; false when none.
	TimeOf(ctx context.Context, rev int64) (time.Time, bool, error)
}

var _ RecordedTimes = (*KineFile)(nil)

// recording is what the tables of a recording beside kine's say, read once,
// when the file is opened: a recording read while it is written is read as
// of then.
type recording struct {
	is   bool
	gaps string // for Description
}

// recording reads whether the file is a recording (k3s' state.db has no
// times) and its gaps.
func (f *KineFile) recording() recording {
	f.recOnce.Do(func() {
		ctx := context.Background()
		var n int
		q := `SELECT COUNT(*) FROM sqlite_schema WHERE type = 'table' AND name IN ('etcdscope_revisions', 'etcdscope_gaps')`
		if f.pg != nil {
			q = pgRecordingSQL
		}
		err := f.db.QueryRowContext(ctx, q).Scan(&n)
		if f.rec.is = err == nil && n == 2; !f.rec.is {
			return
		}
		gaps, err := f.RecordingGaps(ctx)
		if err != nil {
			f.rec.gaps = ", its gaps unread: " + err.Error()
			return
		}
		f.rec.gaps = describeGaps(gaps)
	})
	return f.rec
}

// gapsNote says a recording's gaps in a phrase of the file's description.
func (f *KineFile) gapsNote() string { return f.recording().gaps }

// prevFloor is the oldest previous revision whose value a replay gives
// with an event. kine's watch gives none below its compaction revision
// (SQLLog.After), where etcd's compaction would have removed it; a
// recording's compaction revision is its start, and the row before each
// change is in the file (the snapshot's, or the change's before).
func (f *KineFile) prevFloor() int64 {
	if f.recording().is {
		return 0
	}
	return f.compacted
}

// NewestTime is the arrival time of the newest revision up to the file's
// head.
func (f *KineFile) NewestTime(ctx context.Context) (time.Time, bool, error) {
	return f.TimeOf(ctx, f.rev)
}

// TimeOf is the arrival time of revision rev: that of the newest row at or
// before it that arrived through the watch.
func (f *KineFile) TimeOf(ctx context.Context, rev int64) (time.Time, bool, error) {
	if !f.recording().is {
		return time.Time{}, false, nil
	}
	var ns sql.NullInt64
	err := f.db.QueryRowContext(ctx, `SELECT unix_nano FROM etcdscope_revisions WHERE id <= ? AND unix_nano IS NOT NULL ORDER BY id DESC LIMIT 1`, rev).Scan(&ns)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, false, kineError(f.path, err)
	}
	if !ns.Valid {
		return time.Time{}, false, nil
	}
	return time.Unix(0, ns.Int64), true, nil
}

// RevisionSince reads the first revision up to the head whose time is t
// or later. Arrival times grow with the revisions, but for a clock set
// back: the first one, not a search.
func (f *KineFile) RevisionSince(ctx context.Context, t time.Time) (int64, bool, error) {
	if !f.recording().is {
		return 0, false, nil
	}
	var rev sql.NullInt64
	err := f.db.QueryRowContext(ctx, `SELECT MIN(id) FROM etcdscope_revisions WHERE unix_nano >= ? AND id <= ?`, t.UnixNano(), f.rev).Scan(&rev)
	if err != nil {
		return 0, false, kineError(f.path, err)
	}
	return rev.Int64, rev.Valid, nil
}

// RecordingGaps are the spans of revisions a recording could not replay
// (etcdscope_gaps), oldest first; none for a file that is not a
// recording.
func (f *KineFile) RecordingGaps(ctx context.Context) ([]Gap, error) {
	rows, err := f.db.QueryContext(ctx, `SELECT from_revision, to_revision, written, deleted FROM etcdscope_gaps ORDER BY from_revision`)
	if err != nil {
		if strings.Contains(err.Error(), "no such table") {
			return nil, nil
		}
		return nil, kineError(f.path, err)
	}
	defer rows.Close()
	var gaps []Gap
	for rows.Next() {
		var g Gap
		if err := rows.Scan(&g.From, &g.To, &g.Written, &g.Deleted); err != nil {
			return nil, kineError(f.path, err)
		}
		gaps = append(gaps, g)
	}
	if err := rows.Err(); err != nil {
		return nil, kineError(f.path, err)
	}
	return gaps, nil
}

func describeGaps(gaps []Gap) string {
	switch len(gaps) {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf(", a recording with a gap: revisions %d to %d were not recorded", gaps[0].From, gaps[0].To)
	}
	return fmt.Sprintf(", a recording with %d gaps, the last revisions %d to %d", len(gaps), gaps[len(gaps)-1].From, gaps[len(gaps)-1].To)
}

package etcdview

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/etcdscope/etcdscope/etcdview/internal/sqlitefile"
)

// Scan reads every revision the file holds below prefix, up to opts.Rev, in
// one walk of kine's table from the newest row back, as File's Scan walks
// its bucket: the first row met of a key is its revision as of opts.Rev
// (Current, unless a deletion), and every row is Retained. A record's Size
// is the row's name and value: the bytes of the revision, as an etcd's
// KeyValue holds them. The copy of the previous value an update or
// deletion row carries (old_value) is not counted again: it is the
// previous revision's value, counted with that revision (or gone with it,
// when compaction deleted its row, and then not in the file's history).
// A current record's Version is counted from the rows (see kineWalk). The
// key index is not needed, nor built.
func (f *KineFile) Scan(ctx context.Context, prefix string, opts ScanOptions, fn func([]ScanRecord) error) (ScanResult, error) {
	rev, err := f.checkRev(opts.Rev)
	if err != nil {
		return ScanResult{}, err
	}
	res := ScanResult{Revision: rev, CompactRevision: f.compacted, History: true, Layout: f.layout()}
	report := func(ScanProgress) {}
	if opts.Progress != nil {
		report = opts.Progress
	}
	key, end := prefixRange(prefix)
	if err := f.walkBack(ctx, rev, key, end, fn, report); err != nil {
		return res, fmt.Errorf("scan %s of %s: %w", describeRange(key, end), f.path, err)
	}
	return res, nil
}

// walkBack hands fn the records of [key, end) at or before rev, newest
// first, a batch at a time. SQLite gives each value's length from the
// row's header, without reading the value. The table is read in spans of
// ids, kineReaders at once on connections of their own, and handed on in
// order: SQLite's page reads and decoding are most of a scan's time, and
// a span of ids is a seek on the table's rowid.
func (f *KineFile) walkBack(ctx context.Context, rev int64, key, end string, fn func([]ScanRecord) error, report func(ScanProgress)) error {
	var oldest sql.NullInt64
	if err := f.db.QueryRowContext(ctx, `SELECT MIN(id) FROM kine`).Scan(&oldest); err != nil {
		return kineError(f.path, err)
	}
	span := kineSpan
	if f.walRead {
		// Each connection reads the log as of its own first read, and a
		// running kine writes on: one query is one snapshot.
		span = rev - oldest.Int64 + 1
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	free := make(spanPool, 2*kineReaders+2)
	spans := f.readSpans(ctx, rev, oldest.Int64, span, key, end, free)
	w := newKineWalk(newBackWalk(ctx, rev, oldest.Int64, fn, report))
	for sp := range spans {
		got := <-sp
		if got.err != nil {
			return got.err
		}
		for _, r := range got.rows {
			if err := w.add(r.rec, r.prev); err != nil {
				return err
			}
		}
		free.put(got.rows)
	}
	return w.end()
}

// kineSpan is how many ids one read of walkBack spans (a variable for
// tests), and kineReaders how many spans are read at once (and at most as
// many more wait to be handed on): a few hundred KB of records, where the
// whole table may be GBs, and small enough that the memory a walk touches
// stays in the processor's caches and in the pages the Go heap holds
// already (spans of 8192 rows took a thousand more page faults).
var kineSpan int64 = 1024

const kineReaders = 2

// spanRows are the records of one span of ids, newest first, or why they
// could not be read.
type spanRows struct {
	rows []spanRow
	err  error
}

// spanRow is a record and the row's prev_revision: the id of its key's
// row before it (kineWalk).
type spanRow struct {
	rec  ScanRecord
	prev int64
}

// spanPool holds the rows of spans handed on, for the spans read next:
// a walk has a few spans in hand at a time, and new ones for each span
// were a third of the memory a scan took, its page faults with it.
type spanPool chan []spanRow

// get is rows with room for n, empty.
func (p spanPool) get(n int64) []spanRow {
	select {
	case rows := <-p:
		return rows[:0]
	default:
		return make([]spanRow, 0, n)
	}
}

func (p spanPool) put(rows []spanRow) {
	select {
	case p <- rows:
	default:
	}
}

// readSpans reads the spans of ids from rev down to oldest, span ids each,
// and sends, in order, a channel per span that gets its rows once read.
func (f *KineFile) readSpans(ctx context.Context, rev, oldest, span int64, key, end string, free spanPool) <-chan chan spanRows {
	out := make(chan chan spanRows, kineReaders)
	type job struct {
		hi   int64
		slot chan spanRows
	}
	todo := make(chan job)
	go func() {
		defer close(out)
		defer close(todo)
		for hi := rev; hi >= oldest; hi -= span {
			j := job{hi, make(chan spanRows, 1)}
			select {
			case out <- j.slot:
			case <-ctx.Done():
				return
			}
			select {
			case todo <- j:
			case <-ctx.Done():
				return
			}
		}
	}()
	for range kineReaders {
		go func() {
			var wk *sqlitefile.Walker
			if f.paged != nil {
				wk = f.paged.file.Walker()
			}
			for j := range todo {
				j.slot <- f.readSpan(ctx, wk, j.hi, j.hi-span, key, end, free)
			}
		}()
	}
	return out
}

// readSpan reads the records of [key, end) whose ids are in (lo, hi],
// from the file's pages with wk where it can (kinePages), else with SQL.
func (f *KineFile) readSpan(ctx context.Context, wk *sqlitefile.Walker, hi, lo int64, key, end string, free spanPool) (got spanRows) {
	// A span's ids are rows but for gaps: the slice is not grown again.
	got.rows = free.get(min(hi-lo, kineSpan))
	if f.paged != nil {
		err := f.paged.span(ctx, wk, hi, lo, key, end, &got)
		if !errors.Is(err, errNotPaged) {
			if err != nil {
				return spanRows{err: kineError(f.path, err)}
			}
			return got
		}
		got.rows = got.rows[:0]
	}
	rows, err := f.db.QueryContext(ctx, `SELECT id, name, created, deleted, create_revision, prev_revision, lease, octet_length(value) FROM kine WHERE id <= ? AND id > ? ORDER BY id DESC`, hi, lo)
	if err != nil {
		return spanRows{err: kineError(f.path, err)}
	}
	defer rows.Close()
	for rows.Next() {
		var r kineRow
		var size any
		if err := rows.Scan(&r.id, &r.name, &r.created, &r.deleted, &r.createRev, &r.prevRev, &r.lease, &size); err != nil {
			return spanRows{err: kineError(f.path, err)}
		}
		row, name, err := r.spanRow(&size)
		if err != nil {
			return spanRows{err: err}
		}
		if !inRange(row.rec.Key, key, end) || kineInternal(name) {
			continue
		}
		got.rows = append(got.rows, row)
	}
	if err := rows.Err(); err != nil {
		return spanRows{err: kineError(f.path, err)}
	}
	return got
}

// spanRow is the row, whose value is size bytes long, as a retained
// revision, and its name.
func (r *kineRow) spanRow(size *any) (spanRow, []byte, error) {
	var c columns
	name := c.bytes("name", r.name)
	kv, err := r.kv(string(name), false)
	rec := ScanRecord{Key: kv.Key, Size: int64(len(name)) + c.int("octet_length(value)", *size), CreateRevision: kv.CreateRevision,
		ModRevision: kv.ModRevision, Lease: kv.Lease, Tombstone: c.int("deleted", r.deleted) != 0, Retained: true}
	row := spanRow{rec: rec, prev: c.int("prev_revision", r.prevRev)}
	if err == nil {
		err = c.err
	}
	if err != nil {
		return row, nil, fmt.Errorf("row %d: %w", kv.ModRevision, err)
	}
	return row, name, nil
}

// Watch replays the changes below prefix the file holds from opts.Rev on, in
// revision order, then closes the channel, as File's does: one walk of the
// table in id order. Each row carries what the event needs: the value
// before an update or deletion is the row's old_value, as kine's own watch
// sends it, or, where a recording leaves it NULL, the value of the row it
// names as the one before (prev_revision).
func (f *KineFile) Watch(ctx context.Context, prefix string, opts WatchOptions) <-chan Batch {
	return replayFile(ctx, f.path, f.revBounds, prefix, opts, func(from int64, key, end string, send func(Batch) bool) error {
		rows, err := f.db.QueryContext(ctx, `SELECT id, name, created, deleted, create_revision, prev_revision, lease, value,
			COALESCE(old_value, (SELECT value FROM kine AS p WHERE p.id = kine.prev_revision)) FROM kine WHERE id >= ? ORDER BY id`, from)
		if err != nil {
			return kineError(f.path, err)
		}
		defer rows.Close()
		for rows.Next() {
			var r kineRow
			if err := rows.Scan(&r.id, &r.name, &r.created, &r.deleted, &r.createRev, &r.prevRev, &r.lease, &r.value, &r.oldValue); err != nil {
				return kineError(f.path, err)
			}
			ev, err := r.event(f.prevFloor())
			if err != nil {
				return err
			}
			if !inRange(ev.KV.Key, key, end) || kineInternal([]byte(ev.KV.Key)) {
				continue
			}
			if !send(Batch{Revision: ev.KV.ModRevision, Events: []Event{ev}}) {
				return nil
			}
		}
		if err := rows.Err(); err != nil {
			return kineError(f.path, err)
		}
		return nil
	})
}

// event is the change the row made. The key before it is in the row: its
// previous revision, the previous value in old_value, the same create
// revision and, as kine's watch gives it (sqllog.scan), the row's lease.
// A creation has none, and, as kine's watch drops it (SQLLog.After), nor
// has a change whose previous revision is below the compaction: etcd
// would no longer hold it.
func (r *kineRow) event(compacted int64) (Event, error) {
	var c columns
	name := c.bytes("name", r.name)
	kv, err := r.kv(string(name), true)
	ev := Event{Type: Modified, KV: kv}
	prev := c.int("prev_revision", r.prevRev)
	switch {
	case c.int("deleted", r.deleted) != 0:
		ev.Type, ev.KV = Deleted, KV{Key: kv.Key, ModRevision: kv.ModRevision}
	case c.int("created", r.created) != 0:
		ev.Type = Added
	}
	if c.int("created", r.created) == 0 && prev > 0 && prev >= compacted {
		ev.Prev = &KV{Key: kv.Key, Value: c.bytes("old_value", r.oldValue), CreateRevision: kv.CreateRevision,
			ModRevision: prev, Lease: kv.Lease}
	}
	if err == nil {
		err = c.err
	}
	if err != nil {
		return ev, fmt.Errorf("row %d: %w", kv.ModRevision, err)
	}
	return ev, nil
}

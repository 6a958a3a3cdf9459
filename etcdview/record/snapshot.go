package record

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/etcdscope/etcdscope/etcdview"
)

// Gap is revisions a recording could not replay: etcd had compacted them
// before the recorder read them (it did not run, or its watch was cut for
// longer than etcd keeps history). The file holds the prefix as of To, from
// a new snapshot: the keys written in the gap as last written, and the keys
// it deleted as deleted after To; their changes in between are lost.
type Gap struct {
	From, To         int64 // etcd revisions, both included
	Written, Deleted int
}

// snapshot reads the prefix at the newest revision S and writes what
// differs from the file, in one transaction: the whole of it in a new
// file, and after a gap the keys written since the file's head and the
// keys gone since. The file then is whole up to S. It returns S and, when
// the file had a head, the gap.
func (f *File) snapshot(ctx context.Context, src etcdview.Source, now time.Time) (int64, *Gap, error) {
	t, err := f.begin(ctx)
	if err != nil {
		return 0, nil, err
	}
	defer t.rollback()
	m := merge{t: t, live: liveKeys{tx: t.tx, prefix: f.prefix}}
	var rev int64
	err = etcdview.Pages(src, f.prefix, 0, etcdview.Paging{Values: true})(ctx, func(p etcdview.Page) error {
		rev = p.Revision
		for _, kv := range p.Keys {
			if err := m.key(ctx, kv); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		err = m.rest(ctx)
	}
	if err != nil {
		return 0, nil, fmt.Errorf("snapshot of %q: %w", f.prefix, err)
	}
	if rev < f.head {
		return 0, nil, fmt.Errorf("etcd is at revision %d, before the recording's %d: another etcd, or one restored from a backup; record it to another file", rev, f.head)
	}
	if err := t.deletions(ctx, m.gone, f.head, rev); err != nil {
		return 0, nil, err
	}
	// The rows a taken id put off: after every row of the snapshot.
	for _, r := range m.later {
		if err := t.appendAt(ctx, r, rev); err != nil {
			return 0, nil, err
		}
	}
	var gap *Gap
	if f.head == 0 {
		err = t.markStart(ctx, rev)
	} else {
		gap = &Gap{From: f.head + 1, To: rev, Written: m.written, Deleted: len(m.gone)}
		_, err = t.tx.ExecContext(ctx, `INSERT INTO etcdscope_gaps (from_revision, to_revision, unix_nano, written, deleted) VALUES (?, ?, ?, ?, ?)`,
			gap.From, gap.To, now.UnixNano(), gap.Written, gap.Deleted)
	}
	if err != nil {
		return 0, nil, err
	}
	if err := t.commit(ctx, rev); err != nil {
		return 0, nil, err
	}
	return rev, gap, nil
}

// deletions writes the deletions of keys gone in the gap after the file's
// head, whose revisions are lost: at ids of the gap's revisions no row
// holds (the revisions of the writes the gap lost, each a key's), from its
// end down, so that the ids after the gap stay etcd's revisions; after
// every row when there are not as many (txns).
func (t *tx) deletions(ctx context.Context, keys []string, head, rev int64) error {
	if len(keys) == 0 {
		return nil
	}
	lo, hi := head+t.shift, rev+t.shift
	rows, err := t.tx.QueryContext(ctx, `SELECT id FROM kine WHERE id > ? AND id <= ?`, lo, hi)
	if err != nil {
		return err
	}
	taken := map[int64]bool{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		taken[id] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	id := hi
	for _, key := range keys {
		for id > lo && taken[id] {
			id--
		}
		r := row{rev: rev, key: key, deleted: true}
		if id <= lo {
			if err := t.appendRow(ctx, r); err != nil {
				return err
			}
			continue
		}
		if err := t.insert(ctx, id, r); err != nil {
			return err
		}
		id--
	}
	return nil
}

// markStart writes kine's compaction row: the file is whole from the
// snapshot's last id on, and holds only the snapshot's rows before. Its
// own id is below every row, where no revision will ever be written.
func (t *tx) markStart(ctx context.Context, rev int64) error {
	var lowest sql.NullInt64
	if err := t.tx.QueryRowContext(ctx, `SELECT MIN(id) FROM kine`).Scan(&lowest); err != nil {
		return err
	}
	id := rev
	if lowest.Valid {
		id = lowest.Int64 - 1
	}
	start := max(rev+t.shift, t.last)
	_, err := t.tx.ExecContext(ctx, `INSERT INTO kine (id, name, created, deleted, create_revision, prev_revision, lease, value, old_value)
		VALUES (?, 'compact_rev_key', 0, 0, 0, ?, 0, '', '')`, id, start)
	return err
}

// merge walks etcd's keys and the file's, both in key order, as a merge
// join: nothing but a page of each is held.
type merge struct {
	t       *tx
	live    liveKeys
	written int
	later   []row    // rows whose id was taken
	gone    []string // keys the file holds that etcd no longer does
}

// key writes kv unless the file holds it as of its revision already.
func (m *merge) key(ctx context.Context, kv etcdview.KV) error {
	name := storedName(kv.Key)
	for {
		lk, ok, err := m.live.peek(ctx)
		if err != nil {
			return err
		}
		if !ok || lk.name >= name {
			break
		}
		m.gone = append(m.gone, lk.key())
		m.live.next()
	}
	if lk, ok, _ := m.live.peek(ctx); ok && lk.name == name {
		m.live.next()
		if lk.rev == kv.ModRevision {
			return nil
		}
	}
	m.written++
	r := row{rev: kv.ModRevision, key: kv.Key, created: kv.CreateRevision == kv.ModRevision, createRev: kv.CreateRevision,
		lease: kv.Lease, value: kv.Value}
	err := m.t.placeRow(ctx, r)
	if errors.Is(err, errTaken) {
		m.later = append(m.later, r)
		return nil
	}
	return err
}

// rest counts the file's keys after etcd's last as gone.
func (m *merge) rest(ctx context.Context) error {
	for {
		lk, ok, err := m.live.peek(ctx)
		if err != nil || !ok {
			return err
		}
		m.gone = append(m.gone, lk.key())
		m.live.next()
	}
}

// liveKeys pages through the keys the file holds alive below the prefix,
// in key order, each with etcd's revision of its last row.
type liveKeys struct {
	tx     *sql.Tx
	prefix string
	after  *string // the last name read; nil before the first page
	page   []liveKey
	done   bool
}

type liveKey struct {
	name string
	rev  int64
}

// key is the etcd key of the row name.
func (k liveKey) key() string {
	if k.name == "compact_rev_key_apiserver" {
		return "compact_rev_key"
	}
	return k.name
}

const livePage = 1000

func (l *liveKeys) peek(ctx context.Context) (liveKey, bool, error) {
	for len(l.page) == 0 && !l.done {
		if err := l.read(ctx); err != nil {
			return liveKey{}, false, err
		}
	}
	if len(l.page) == 0 {
		return liveKey{}, false, nil
	}
	return l.page[0], true, nil
}

func (l *liveKeys) next() { l.page = l.page[1:] }

// read reads the next page: the last row of each name, from
// etcdscope_keys, then that row by its id (SQL that PostgreSQL runs too).
func (l *liveKeys) read(ctx context.Context) error {
	lo, hi := l.prefix, ""
	if l.prefix != "" {
		hi = prefixEnd(l.prefix)
	}
	cond := "name >= ?"
	if l.after != nil {
		lo, cond = *l.after, "name > ?"
	}
	args := []any{lo}
	if hi != "" {
		cond += " AND name < ?"
		args = append(args, hi)
	}
	q := `SELECT k.name, k.deleted, COALESCE(r.revision, k.id) FROM
		(SELECT id FROM etcdscope_keys WHERE ` + cond + ` ORDER BY name LIMIT ?) AS e
		JOIN kine AS k ON k.id = e.id LEFT JOIN etcdscope_revisions AS r ON r.id = k.id ORDER BY k.name`
	rows, err := l.tx.QueryContext(ctx, q, append(args, livePage)...)
	if err != nil {
		return err
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var k liveKey
		var deleted sql.NullBool
		if err := rows.Scan(&k.name, &deleted, &k.rev); err != nil {
			return err
		}
		n++
		l.after = &k.name
		if !deleted.Bool {
			l.page = append(l.page, k)
		}
	}
	l.done = n < livePage
	return rows.Err()
}

// prefixEnd is the first name after every name that starts with prefix.
func prefixEnd(prefix string) string {
	b := []byte(prefix)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			return string(b[:i+1])
		}
	}
	return ""
}

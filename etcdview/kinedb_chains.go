package etcdview

import (
	"context"
	"math"
	"slices"

	"github.com/etcdscope/etcdscope/etcdview/internal/sqlitefile"
)

// chains are the rows of a recording's table (package record), which has
// no index on names: each row's id and the id of its key's row before
// (prev_revision), in id order, read in one walk of the table with the
// deletions, where SQL would sort every row by name. Every key's rows are
// then the chain from its last row, which etcdscope_keys gives in name
// order, back through the rows before it: the recorder writes each row
// of a key after the last one, and its retention drops the oldest of a
// chain.
type chains struct {
	ids, prevs []int64
	named      int     // rows of a name the key index keeps
	dead       []int64 // the ids of the deletions, in order, as deletions reads them
}

// tableChains walks the table in id order. A row of another type than
// the recorder writes is errNotPaged: SQL reads the file.
func (p *kinePages) tableChains(ctx context.Context) (*chains, error) {
	t := &chains{}
	var c canceled
	err := p.file.Table(p.table, math.MinInt64, math.MaxInt64, false, func(r *sqlitefile.Record) error {
		if err := c.check(ctx); err != nil {
			return err
		}
		// An INTEGER PRIMARY KEY is the rowid, and its column NULL.
		if id, _ := r.Kind(colID); id != sqlitefile.Null {
			return errNotPaged
		}
		del, delOK, err := r.Int(colDeleted)
		if err != nil {
			return err
		}
		prev, prevOK, err := r.Int(colPrevRev)
		if err != nil {
			return err
		}
		name, kind, err := r.Bytes(colName)
		if err != nil {
			return err
		}
		if !delOK || !prevOK || kind != sqlitefile.Text {
			return errNotPaged
		}
		if del != 0 {
			t.dead = append(t.dead, r.Rowid)
		}
		if !kineInternal(name) {
			t.named++
		}
		t.ids = append(t.ids, r.Rowid)
		t.prevs = append(t.prevs, prev)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// inNameOrder hands fn every row of a name, in the order of SQL's `ORDER
// BY name, id`: etcdscope_keys' names in order, each with the chain of
// its rows, oldest first. errNotPaged when the chains do not hold every
// row (a file another writer wrote to: kine serving it).
func (t *chains) inNameOrder(ctx context.Context, p *kinePages, fn func(name []byte, id int64) error) error {
	var (
		c     canceled
		chain []int64
		added int
	)
	err := p.file.Index(p.latest, func(r *sqlitefile.Record) error {
		if err := c.check(ctx); err != nil {
			return err
		}
		name, kind, err := r.Bytes(0)
		if err != nil {
			return err
		}
		last, ok, err := r.Int(1)
		switch {
		case err != nil:
			return err
		case kind != sqlitefile.Text || !ok:
			return errNotPaged
		case kineInternal(name):
			return nil
		}
		chain = chain[:0]
		for id := last; id > 0 && len(chain) < len(t.ids); {
			i, found := slices.BinarySearch(t.ids, id)
			if !found {
				break // dropped by the retention, with the rows before it
			}
			chain = append(chain, id)
			id = t.prevs[i]
		}
		added += len(chain)
		for i := len(chain) - 1; i >= 0; i-- {
			if i > 0 && chain[i-1] <= chain[i] {
				return errNotPaged // not a chain back in time
			}
			if err := fn(name, chain[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil && added != t.named {
		err = errNotPaged
	}
	return err
}

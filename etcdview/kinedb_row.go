package etcdview

import "fmt"

// kineRow is one row of kine's table as SQLite gives it. Its columns are
// read as any, not into typed variables, so that a column of another type
// than kine writes (SQLite's columns take any type) is an error that names
// the row and the column, not one of the whole query.
type kineRow struct {
	id, name, created, deleted, createRev, prevRev, lease, value, oldValue any
}

// dest is where a read of kvs puts the row's columns.
func (r *kineRow) dest(withValue bool) []any {
	d := []any{&r.id, &r.created, &r.createRev, &r.lease}
	if withValue {
		d = append(d, &r.value)
	}
	return d
}

// kv is the row as etcd's KeyValue, as kine answers it
// (sqllog.scan): a creation's create revision is its own id, and kine
// keeps no version. Its value when withValue.
func (r *kineRow) kv(key string, withValue bool) (KV, error) {
	var c columns
	kv := KV{Key: key, ModRevision: c.int("id", r.id), CreateRevision: c.int("create_revision", r.createRev),
		Lease: c.int("lease", r.lease)}
	if withValue {
		kv.Value = c.bytes("value", r.value)
	}
	if c.int("created", r.created) != 0 {
		kv.CreateRevision = kv.ModRevision
	}
	return kv, c.err
}

// columns converts a row's columns, keeping the first error.
type columns struct{ err error }

// int is an INTEGER column; NULL is 0.
func (c *columns) int(name string, v any) int64 {
	switch v := v.(type) {
	case int64:
		return v
	case nil:
		return 0
	}
	c.fail(name, v)
	return 0
}

// bytes is a BLOB column (kine binds []byte) or a TEXT one; NULL is empty.
func (c *columns) bytes(name string, v any) []byte {
	switch v := v.(type) {
	case []byte:
		return v
	case string:
		return []byte(v)
	case nil:
		return []byte{}
	}
	c.fail(name, v)
	return nil
}

func (c *columns) fail(name string, v any) {
	if c.err == nil {
		c.err = fmt.Errorf("kine's column %s holds %T %v, not what kine writes", name, v, v)
	}
}

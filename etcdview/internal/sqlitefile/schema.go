package sqlitefile

import "math"

// Object is one row of the schema table (sqlite_schema, the table whose
// root is page 1): a table, index, view or trigger, and the b-tree that
// holds it. Its SQL is not read: the caller asks SQLite what its columns
// are.
type Object struct {
	Type, Name, Table string
	// Root is the b-tree's root page; 0 for a view or trigger.
	Root uint32
}

// Schema reads the schema table.
func (f *File) Schema() ([]Object, error) {
	var objs []Object
	err := f.Table(1, math.MinInt64, math.MaxInt64, false, func(r *Record) error {
		var o Object
		var cols [4]Value
		for i := range cols {
			v, err := r.Column(i, true)
			if err != nil {
				return err
			}
			cols[i] = v
		}
		o.Type, o.Name, o.Table = string(cols[0].Bytes), string(cols[1].Bytes), string(cols[2].Bytes)
		if cols[3].Kind == Integer && cols[3].Int > 0 && cols[3].Int <= math.MaxUint32 {
			o.Root = uint32(cols[3].Int)
		}
		objs = append(objs, o)
		return nil
	})
	return objs, err
}

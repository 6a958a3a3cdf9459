package tree

import (
	"fmt"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/decode/table"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/etcdview/changes"
	"github.com/etcdscope/etcdscope/ui/common"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// rowCacheSize bounds the decoded rows the pane keeps, over every level:
// an LRU of (key, mod_revision), some 5,000 rows of a few hundred bytes,
// a hundred screens of a tall terminal.
const rowCacheSize = 5000

// rowKey names one value: the cells of a key's row depend on its
// mod_revision only (AGE aside, computed when drawn).
type rowKey struct {
	key string
	mod int64
}

// objectRow is one object's row as kubectl's table has it: the cells of
// the resource's default columns (priority 0), NAME first and REVISION
// last; or, when the value does not make a row, why.
type objectRow struct {
	cells   []string
	created time.Time // metadata.creationTimestamp, for AGE
	problem string
}

// readRow is a row read for a key of the level.
type readRow struct {
	key, name string
	mod       int64
	row       objectRow
}

// RowsMsg carries the rows of a window of a leaf level, and the times
// their objects record. Rows are facts of (key, mod_revision): whatever
// load of the level asked, they are kept.
type RowsMsg struct {
	prefix  string
	rev     int64    // the revision read at, the level's
	asked   []string // every key asked for, read or not
	rows    []readRow
	headers []string // the columns' names, as kubectl prints them
	extra   []bool   // the columns -o wide adds
	age     int      // the index of AGE in headers, -1 without one
	points  []changes.Point
	err     error
}

// run is a stretch of consecutive keys of a level: one range reads it.
type run struct {
	after string // the key before the first, "" from the level's start
	keys  []string
}

// readRows reads the runs of the level below prefix as of rev, values and
// all, one range each, and makes their rows with res. It runs off the
// Update loop: decoding and the printers cost a few µs a row.
func readRows(c common.Common, res *table.Resource, prefix string, rev int64, runs []run) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := c.Context()
		defer cancel()
		msg := RowsMsg{prefix: prefix, rev: rev, age: -1}
		dec := c.Decoder
		dec.JSONOnly = true
		for _, r := range runs {
			msg.asked = append(msg.asked, r.keys...)
		}
		for _, r := range runs {
			p, err := c.Src.List(ctx, prefix, rev, etcdview.PageToken{After: r.after, Limit: len(r.keys), Values: true})
			if err != nil {
				msg.err = fmt.Errorf("read %s at revision %d: %w", decode.EscapeKey(r.keys[0]), rev, err)
				return msg
			}
			for _, kv := range p.Keys {
				o := dec.DecodeAt(kv.Key, kv.Value, kv.ModRevision)
				msg.points = append(msg.points, changes.Recorded(o, kv.ModRevision, kv.CreateRevision)...)
				msg.rows = append(msg.rows, readRow{key: kv.Key, name: kv.Key[len(prefix):], mod: kv.ModRevision, row: rowOf(res, o, kv.ModRevision)})
			}
		}
		if cols := res.Columns(false); cols != nil {
			msg.headers, msg.extra, msg.age = headers(cols)
		}
		return msg
	}
}

// rowOf is o's row in res's table; a value that makes none says why.
func rowOf(res *table.Resource, o decode.Object, mod int64) objectRow {
	if o.Object == nil {
		return objectRow{problem: "does not decode: " + o.Label()}
	}
	var created time.Time
	if m, err := meta.Accessor(o.Object); err == nil {
		created = m.GetCreationTimestamp().Time
	}
	obj, err := res.Object(o.Object, mod)
	if err != nil {
		return objectRow{problem: err.Error()}
	}
	t, _, err := res.Table([]table.Object{obj}, false)
	if err != nil {
		return objectRow{problem: err.Error()}
	}
	if len(t.Rows) != 1 {
		return objectRow{problem: fmt.Sprintf("the printer made %d rows of one object", len(t.Rows))}
	}
	row := objectRow{created: created}
	for _, cell := range t.Rows[0].Cells {
		row.cells = append(row.cells, cellText(cell))
	}
	return row
}

// cellText is a cell as cli-runtime's table printer prints it: a string
// as is, nothing for nil, any other value with fmt.Sprint.
func cellText(cell any) string {
	switch v := cell.(type) {
	case nil:
		return ""
	case string:
		return v
	}
	return fmt.Sprint(cell)
}

// ageDescription is how kube-apiserver's printers, and apiextensions'
// for a custom resource, describe AGE: the creationTimestamp's doc.
var ageDescription = metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]

// headers are the names of the columns, upper-cased as kubectl prints
// them; extra marks those only -o wide prints (priority above 0); age is
// the index of AGE among them (-1 without one).
func headers(cols []metav1.TableColumnDefinition) (names []string, extra []bool, age int) {
	age = -1
	for j, c := range cols {
		if c.Name == "Age" && c.Description == ageDescription {
			age = j
		}
		names, extra = append(names, strings.ToUpper(c.Name)), append(extra, c.Priority != 0)
	}
	return names, extra, age
}

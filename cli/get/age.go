package get

import (
	"fmt"
	"sync"
	"time"

	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/etcdview/changes"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
)

// ageClock counts a table's AGE to the time of the revision --rev lists,
// as the TUI's :rev does (ui/tree's ageAt): kube-apiserver's printers count
// it to now, which as of an old revision ages every object by the time
// since. etcd stores no time: the revision's is estimated from the times
// the listed objects record (changes.TimeMap), and the table says so on
// stderr. The nil clock, at the head, leaves the printers' AGE as it is.
type ageClock struct {
	rev   int64
	mu    sync.Mutex // the chunks of a listing are decoded at once
	times changes.TimeMap
}

// newAgeClock is the clock of a listing as of rev; nil at the head.
func newAgeClock(rev int64) *ageClock {
	if rev == 0 {
		return nil
	}
	return &ageClock{rev: rev}
}

// observe records what o, kv's object, says of time, and returns its
// creation time, the AGE of its row counts from.
func (c *ageClock) observe(o decode.Object, kv etcdview.KV) time.Time {
	if c == nil {
		return time.Time{}
	}
	points := changes.Recorded(o, kv.ModRevision, kv.CreateRevision)
	c.mu.Lock()
	defer c.mu.Unlock()
	var created time.Time
	for _, p := range points {
		c.times.Add(p)
		if p.What == changes.FromCreation {
			created = p.Time
		}
	}
	return created
}

// ageDescription is how kube-apiserver's printers, and apiextensions' for
// a custom resource, describe AGE: the creationTimestamp's doc.
var ageDescription = metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]

// recount sets the AGE cells of rows, created[i] being rows[i]'s object's
// creation time, to the revision's estimated time, and returns the line
// that says which time that is; "" when the table has no AGE.
func (c *ageClock) recount(cols []metav1.TableColumnDefinition, rows []metav1.TableRow, created []time.Time) string {
	age := -1
	for j, col := range cols {
		if col.Name == "Age" && col.Description == ageDescription {
			age = j
		}
	}
	if c == nil || age < 0 || len(rows) == 0 {
		return ""
	}
	e := c.times.At(c.rev)
	for i, row := range rows {
		if age >= len(row.Cells) {
			continue
		}
		if e.Bound == changes.Unknown || created[i].IsZero() {
			row.Cells[age] = "<unknown>"
		} else {
			row.Cells[age] = duration.HumanDuration(e.Time.Sub(created[i]))
		}
	}
	if e.Bound == changes.Unknown {
		return fmt.Sprintf("AGE as of revision %d: its time is unknown, no object listed records one", c.rev)
	}
	return fmt.Sprintf("AGE as of revision %d, at %s (estimated from the times the objects listed record)", c.rev, e)
}

package changes

import (
	"context"
	"fmt"
	"time"

	"github.com/etcdscope/etcdscope/etcdview"
)

// FromRecording is a Point of a recording: the time its revision arrived.
const FromRecording = "recorded arrival"

// recordedSince sets w.From to the first revision a recording recorded at
// or after r.Now - r.Since (the newest recorded time when r.Now is zero),
// and says whether src records times: a recording's times are those its
// revisions arrived at, where the objects' own are estimates.
func (w *Window) recordedSince(ctx context.Context, src etcdview.Source, r Range) (bool, error) {
	rt, ok := src.(etcdview.RecordedTimes)
	if !ok {
		return false, nil
	}
	newest, ok, err := rt.NewestTime(ctx)
	if err != nil || !ok {
		return false, err
	}
	now, what := r.Now, "now"
	if now.IsZero() {
		now, what = newest, "the newest recorded time"
	}
	t := now.Add(-r.Since)
	from, ok, err := rt.RevisionSince(ctx, t)
	if err != nil {
		return true, err
	}
	if !ok {
		// Nothing arrived since: an empty window after the head.
		from = w.To + 1
	}
	w.From = from
	// The window's ends at the times they arrived: the revisions between
	// are placed by revision, as between the times objects record.
	w.Recorded = true
	for _, rev := range []int64{from, w.To} {
		at, ok, err := rt.TimeOf(ctx, rev)
		if err != nil {
			return true, err
		}
		if ok {
			w.Times.Add(Point{Revision: rev, Time: at, What: FromRecording})
		}
		w.Recorded = w.Recorded && ok
	}
	w.Since = fmt.Sprintf("since %s, %s before %s (%s), as the recording recorded the revisions' arrival",
		t.UTC().Format(time.RFC3339), r.Since, what, now.UTC().Format(time.RFC3339))
	return true, nil
}

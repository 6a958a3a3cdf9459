package ui

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/etcdview/record"
	"github.com/etcdscope/etcdscope/ui/uitest"
)

// recordedAt is when the first change of recordedFixture arrived.
var recordedAt = time.Date(2026, 12, 2, 3, 10, 0, 0, time.UTC)

// recordedGaps are the seconds after recordedAt at which each change of
// recordedFixture arrived: two inside a minute, a quiet minute and a half,
// then three more.
var recordedGaps = []int{0, 20, 40, 130, 150, 190}

// recorded is a recording made by etcdscope record of the fixture store,
// then a change of web-0's image at each of recordedGaps, each arriving
// at its time by the recorder's clock.
type recorded struct {
	path  string
	start int64   // the snapshot's revision
	revs  []int64 // the changes', in order
}

func recordedFixture(t *testing.T) recorded {
	t.Helper()
	src := uitest.Fixture()
	var clock atomic.Int64
	clock.Store(recordedAt.Add(-time.Hour).UnixNano())
	rec := recorded{path: filepath.Join(t.TempDir(), "rec.db"), start: src.Revision()}
	f, err := record.Open(rec.path, "/registry/")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- f.Run(ctx, src, record.Options{Now: func() time.Time { return time.Unix(0, clock.Load()) }})
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		f.Close()
	}()
	waitRecordedHead(t, rec.path, rec.start)
	for i, sec := range recordedGaps {
		clock.Store(recordedAt.Add(time.Duration(sec) * time.Second).UnixNano())
		rev := src.PutObject(uitest.Pod("default", "web-0", fmt.Sprintf("nginx:1.%d", 30+i), true))
		waitRecordedHead(t, rec.path, rev)
		rec.revs = append(rec.revs, rev)
	}
	return rec
}

// waitRecordedHead waits until the recording, read as --db reads it, is
// whole up to rev.
func waitRecordedHead(t *testing.T, path string, rev int64) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for {
		if f, err := etcdview.OpenKineFile(path); err == nil {
			st, err := f.Status(t.Context())
			f.Close()
			if err == nil && st.Revision >= rev {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the recording does not reach revision %d within %s", rev, waitFor)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// startRecording opens the recording as --db does, in the UI, on the UTC
// clock, and waits for its time line.
func startRecording(t *testing.T, rec recorded, w, h int) *teatest.TestModel {
	t.Helper()
	f, err := etcdview.OpenKineFile(rec.path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	tm := startOn(t, w, h, Options{Source: f, Description: "recording rec.db", Location: time.UTC})
	waitScreen(t, tm, "pods/", "replay 03:10:00", fmt.Sprintf("rev %d at 2026-12-02 03:13:10", rec.revs[len(rec.revs)-1]))
	return tm
}

// at is the time line's position as the header says it.
func at(rev int64, sec int) string {
	return fmt.Sprintf("rev %d at %s", rev, recordedAt.Add(time.Duration(sec)*time.Second).Format(time.DateTime))
}

func TestGoldenRecordingTimeLine(t *testing.T) {
	rec := recordedFixture(t)
	for _, size := range [][2]int{{100, 30}, {160, 45}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			tm := startRecording(t, rec, size[0], size[1])
			command(tm, "at 03:11")
			waitScreen(t, tm, at(rec.revs[2], 40), "@rev")
			golden.RequireEqual(t, []byte(finalView(t, tm)))
		})
	}
}

// [ and ] move to the revision before or after, one the recording holds,
// and stop at its start and its end with a flash; { and } move by a
// minute of the recorded times. Every screen then reads as of there.
func TestTimeLineKeysStepARevisionOrAMinute(t *testing.T) {
	rec := recordedFixture(t)
	tm := startRecording(t, rec, 160, 45)
	last := len(rec.revs) - 1
	for i := last - 1; i >= 0; i-- {
		typeText(tm, "[")
		waitScreen(t, tm, at(rec.revs[i], recordedGaps[i]), fmt.Sprintf("@rev %d", rec.revs[i]))
	}
	typeText(tm, "[")
	waitScreen(t, tm, fmt.Sprintf("rev %d, before the first recorded time", rec.start))
	typeText(tm, "[")
	waitScreen(t, tm, "at the start of the recording")
	for i := range rec.revs {
		typeText(tm, "]")
		waitScreen(t, tm, at(rec.revs[i], recordedGaps[i]))
	}
	typeText(tm, "]")
	waitScreen(t, tm, fmt.Sprintf("at the end of the recording: revision %d", rec.revs[last]))
	// From 03:13:10: a minute back is 03:12:10, when the revision of
	// 03:12:10 (130 s) was the newest; another minute back is 03:11:10,
	// as of 03:10:40's.
	typeText(tm, "{")
	waitScreen(t, tm, at(rec.revs[3], 130))
	typeText(tm, "{")
	waitScreen(t, tm, at(rec.revs[2], 40))
	// A minute forward is the first revision a minute or more later:
	// 03:11:40 has none, 03:12:10's is the next.
	typeText(tm, "}")
	waitScreen(t, tm, at(rec.revs[3], 130))
	// The tree reads as of there: web-0 has the image of that change.
	command(tm, "key /registry/pods/default/web-0")
	waitScreen(t, tm, "nginx:1.33")
}

func TestAtOutsideTheRecordingFlashesItsSpan(t *testing.T) {
	rec := recordedFixture(t)
	tm := startRecording(t, rec, 160, 45)
	command(tm, "at 04:00")
	waitScreen(t, tm, "04:00 is outside the recording, which spans 2026-12-02 03:10:00 to 2026-12-02 03:13:10")
	command(tm, "at 2026-12-01T03:11:00")
	waitScreen(t, tm, "2026-12-01T03:11:00 is outside the recording")
	command(tm, "at yesterday")
	waitScreen(t, tm, "yesterday: a time is 03:12")
	command(tm, "at 2026-12-02T03:12:20")
	waitScreen(t, tm, at(rec.revs[3], 130))
}

// On a source that records no times, the time line's keys change nothing
// and say why.
func TestTimeLineKeysOnALiveSourceSayWhy(t *testing.T) {
	tm, _ := newTest(t, 160, 45)
	waitScreen(t, tm, "pods/", "etcd-0 ★")
	typeText(tm, "]")
	waitScreen(t, tm, "move through a recording")
	typeText(tm, "2>")
	waitScreen(t, tm, "this source is no recording")
	m := finalModel(t, tm)
	if m.browse.rev != 0 || m.rec != nil {
		t.Errorf("after ] on a live source: browsing rev %d, time line %v; want the newest, none", m.browse.rev, m.rec)
	}
}

// Screen 2 replays the recording from the position: at full speed every
// change after it, in order, and the time line ends at the last.
func TestReplayAtFullSpeedDeliversEveryEventInOrder(t *testing.T) {
	rec := recordedFixture(t)
	tm := startRecording(t, rec, 160, 45)
	command(tm, fmt.Sprintf("rev %d", rec.revs[0]))
	waitScreen(t, tm, at(rec.revs[0], 0))
	typeText(tm, "2>>")
	waitScreen(t, tm, "replay at max speed")
	typeText(tm, " ")
	last := rec.revs[len(rec.revs)-1]
	waitScreen(t, tm, fmt.Sprintf("end of the recording, at revision %d", last), "■ end", at(last, 190))
	m := finalModel(t, tm)
	got := playedRevs(m)
	if want := rec.revs[1:]; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the replay's rows are revisions %v, want %v", got, want)
	}
	if m.browse.rev != last {
		t.Errorf("browse reads as of revision %d where the replay ended, want %d", m.browse.rev, last)
	}
}

// At 10× the replay waits a tenth of each recorded gap, on the UI's timer;
// space pauses it, and resumes.
func TestReplayKeepsTheRecordedGapsAndPauses(t *testing.T) {
	rec := recordedFixture(t)
	f, err := etcdview.OpenKineFile(rec.path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	clock, waits := new(uitest.Clock), make(chan time.Duration, 64)
	tick := func(d time.Duration, fn func(time.Time) tea.Msg) tea.Cmd {
		start := clock.Tick(d, fn)
		return func() tea.Msg {
			start()
			if d != flashFor {
				waits <- d
			}
			return nil
		}
	}
	tm := startOn(t, 160, 45, Options{Source: f, Location: time.UTC, Tick: tick})
	waitScreen(t, tm, "pods/", "replay 03:10:00")
	command(tm, fmt.Sprintf("rev %d", rec.revs[2]))
	waitScreen(t, tm, at(rec.revs[2], 40))
	typeText(tm, "2> ")
	waitScreen(t, tm, "▶ 10×", fmt.Sprintf("replay from revision %d at 10× speed", rec.revs[2]))
	// 90 s recorded to the next change, 20 s to the one after.
	waitWait(t, waits, 9*time.Second)
	tm.Send(clock.Advance(9 * time.Second)())
	waitScreen(t, tm, at(rec.revs[3], 130), fmt.Sprintf("%d", rec.revs[3]))
	waitWait(t, waits, 2*time.Second)
	typeText(tm, " ")
	waitScreen(t, tm, "⏸ 10×")
	tm.Send(clock.Advance(2 * time.Second)())
	typeText(tm, " ")
	waitScreen(t, tm, "▶ 10×", at(rec.revs[4], 150))
	m := finalModel(t, tm)
	got := playedRevs(m)
	if want := rec.revs[3:5]; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the replay's rows are revisions %v, want %v", got, want)
	}
}

// waitWait waits until the UI starts a timer of d.
func waitWait(t *testing.T, waits <-chan time.Duration, d time.Duration) {
	t.Helper()
	deadline := time.After(waitFor)
	for {
		select {
		case got := <-waits:
			if got == d {
				return
			}
		case <-deadline:
			t.Fatalf("the replay started no timer of %s within %s", d, waitFor)
		}
	}
}

// playedRevs are the revisions of the tail's event rows, in order.
func playedRevs(m *Model) []int64 {
	var revs []int64
	r := m.tail.Ring()
	for seq := r.First(); seq < r.Total(); seq++ {
		if row := r.At(seq); row.Type != "" {
			revs = append(revs, row.Rev)
		}
	}
	return revs
}

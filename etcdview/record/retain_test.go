package record

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/etcdview/pgtest"
)

// TestKeepDropsWhatArrivedBeforeAndStartsWithEveryKey: with --keep 1h, the
// revisions that arrived two hours before go; the recording starts after
// them, every key live there with its value as of then, and nothing
// before it; a key deleted before it is gone, from the table of each
// key's last row too. In a file and in PostgreSQL alike.
func TestKeepDropsWhatArrivedBeforeAndStartsWithEveryKey(t *testing.T) {
	t.Run("file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "rec.db")
		testKeep(t, path, func() *etcdview.KineFile { return openRecording(t, path) })
	})
	t.Run("postgres", func(t *testing.T) {
		url := pgtest.Start(t).URL("postgres", "east")
		testKeep(t, url, func() *etcdview.KineFile { return openPGRecording(t, url) })
	})
}

func testKeep(t *testing.T, path string, open func() *etcdview.KineFile) {
	l, cli := startEtcd(t)
	put(t, cli, "/k/a", "a-0")
	put(t, cli, "/k/b", "b-0")
	var clock atomic.Int64
	clock.Store(time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC).UnixNano())
	now := func() time.Time { return time.Unix(0, clock.Load()) }
	rec := startRecorderWith(t, l, path, "/k/", Options{Now: now, Keep: time.Hour, RetainEvery: time.Nanosecond})
	waitRecorded(t, path, "/k/b", "b-0")
	put(t, cli, "/k/a", "a-1")
	put(t, cli, "/k/d", "d-0")
	if _, err := cli.Delete(t.Context(), "/k/d"); err != nil {
		t.Fatal(err)
	}
	a2 := put(t, cli, "/k/a", "a-2")
	waitRecorded(t, path, "/k/a", "a-2")
	clock.Add(int64(2 * time.Hour))
	c := put(t, cli, "/k/c", "c-0")
	waitRecorded(t, path, "/k/c", "c-0")
	if err := rec.stop(); err != nil {
		t.Fatal(err)
	}
	// /k/d's rows went, its deletion the last: it is no key of the file.
	checkLastRows(t, path)
	f := open()
	st, err := f.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if start := st.CompactRevision; start != c-1 {
		t.Fatalf("the recording starts at %d, want %d: the revision before the first that arrived within the hour", start, c-1)
	}
	if got, want := history(t, f, "/k/a"), []string{fmt.Sprintf("%d:a-2", a2)}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("history /k/a: %v, want %v", got, want)
	}
	for key, want := range map[string]string{"/k/a": "a-2", "/k/b": "b-0", "/k/c": "", "/k/d": ""} {
		kv, err := f.Get(t.Context(), key, c-1)
		switch {
		case want == "" && !errors.Is(err, etcdview.ErrNotFound):
			t.Errorf("get %s at the start: %v, want not found", key, err)
		case want != "" && (err != nil || string(kv.Value) != want):
			t.Errorf("get %s at the start: %v %v, want %s", key, kv, err, want)
		}
	}
	want := fmt.Sprintf("revision %d is not in the recording: the oldest revision it holds is %d", c-2, c-1)
	if _, err := f.Get(t.Context(), "/k/a", c-2); !errors.Is(err, etcdview.ErrCompacted) || !strings.Contains(fmt.Sprint(err), want) {
		t.Errorf("get before the start: %v, want compacted: %q", err, want)
	}
}

// TestMaxSizeKeepsTheFileFromGrowing: with a bound on its size, a
// recording's file stops growing (the trimmed rows' pages hold the new
// ones) while every key stays readable at the new start.
func TestMaxSizeKeepsTheFileFromGrowing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rec.db")
	f, err := Open(path, "")
	if err != nil {
		t.Fatal(err)
	}
	const maxSize = 2 << 20
	r := &run{f: f, opts: Options{Now: time.Now, Status: func(Status) {}, MaxSize: maxSize, RetainEvery: time.Nanosecond}, db: t.Context()}
	// The start a snapshot of nothing marks, as Run's first.
	tx, err := f.begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.markStart(t.Context(), 0); err != nil {
		t.Fatal(err)
	}
	if err := tx.commit(t.Context(), 0); err != nil {
		t.Fatal(err)
	}
	value := []byte(strings.Repeat("v", 1000))
	rev := int64(0)
	write := func(n int) {
		for range n / 100 {
			var evs []etcdview.Event
			for range 100 {
				rev++
				kv := etcdview.KV{Key: fmt.Sprintf("/k/%03d", rev%200), Value: value, ModRevision: rev, CreateRevision: 1}
				ev := etcdview.Event{Type: etcdview.Modified, KV: kv}
				if rev <= 200 {
					ev.Type, ev.KV.CreateRevision = etcdview.Added, rev
				}
				evs = append(evs, ev)
			}
			if err := r.write([]etcdview.Batch{{Events: evs, Revision: rev}}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := f.db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
			t.Fatal(err)
		}
	}
	size := func() int64 {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	write(10_000)
	first := size()
	write(30_000)
	if last := size(); last > first || last > maxSize+maxSize/4 {
		t.Errorf("the file grew from %d to %d bytes past 10k and 40k writes, its bound %d", first, last, maxSize)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	k := openRecording(t, path)
	st, err := k.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if st.CompactRevision < 30_000 || st.Revision != rev {
		t.Errorf("the recording holds %d to %d, want a start past 30000 and its head %d", st.CompactRevision, st.Revision, rev)
	}
	var keys int
	err = etcdview.Pages(k, "/k/", st.CompactRevision, etcdview.Paging{Values: true})(t.Context(), func(p etcdview.Page) error {
		keys += len(p.Keys)
		return nil
	})
	if err != nil || keys != 200 {
		t.Errorf("ls at the start: %d keys (%v), want all 200", keys, err)
	}
}

// --max-size bounds a file's pages: in PostgreSQL, which keeps a table's
// size after its rows go, it is refused in one line before anything is
// written.
func TestMaxSizeInPostgresIsRefused(t *testing.T) {
	l, _, _, f := openPGBeside(t, "")
	err := f.Run(t.Context(), l, Options{MaxSize: 2 << 30})
	if err == nil || !strings.Contains(err.Error(), "--max-size bounds a recording in a file") || strings.Contains(err.Error(), "\n") {
		t.Errorf("--max-size in PostgreSQL: %v, want one line refusing it", err)
	}
	if f.Head() != 0 {
		t.Errorf("the refused recording is whole up to %d, want nothing written", f.Head())
	}
}

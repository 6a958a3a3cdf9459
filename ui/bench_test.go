package ui

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/ui/common"
	"github.com/etcdscope/etcdscope/ui/tail"

	"github.com/etcdscope/etcdscope/ui/uitest"
)

var keyJ = tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{'j'}}

// sized is the app on src, 100x30, before any read, its timers on a clock
// that never moves.
func sized(src etcdview.Source, buffer int) *Model {
	m := New(context.Background(), Options{Source: src, TailBuffer: buffer, Tick: new(uitest.Clock).Tick})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	return m
}

// events are n synthetic pod events of about 1 KiB each, in batches of 1000.
func events(n int) []tail.BatchesMsg {
	value := make([]byte, 1024)
	var out []tail.BatchesMsg
	var b etcdview.Batch
	for i := range n {
		kv := etcdview.KV{Key: fmt.Sprintf("/registry/pods/ns-%d/pod-%d", i%50, i), Value: value, ModRevision: int64(i + 2)}
		b.Events = append(b.Events, etcdview.Event{Type: etcdview.Modified, KV: kv, Prev: &etcdview.KV{Key: kv.Key, Value: value, ModRevision: int64(i + 1)}})
		if len(b.Events) == 1000 {
			b.Revision = kv.ModRevision
			out = append(out, tail.BatchesMsg{Batches: []etcdview.Batch{b}})
			b = etcdview.Batch{}
		}
	}
	return out
}

// BenchmarkKeyPressBrowse100k is one j (Update and View) in a level of
// 100k keys.
func BenchmarkKeyPressBrowse100k(b *testing.B) {
	src := uitest.New()
	for i := range 100_000 {
		src.Put(fmt.Sprintf("/registry/pods/default/pod-%06d", i), []byte("x"))
	}
	m := sized(src, 100)
	m.Update(m.browse.tree.GoTo("/registry/pods/default/")())
	if v := m.View(); !strings.Contains(v, "100000 keys") {
		b.Fatalf("the level did not open:\n%s", v)
	}
	b.ResetTimer()
	for b.Loop() {
		m.Update(keyJ)
		_ = m.View()
	}
}

// BenchmarkKeyPressTailFull is one j (Update and View) on a tail whose ring
// of 100k rows is full.
func BenchmarkKeyPressTailFull(b *testing.B) {
	m := sized(uitest.New(), 100_000)
	for _, msg := range events(100_000) {
		m.Update(msg)
	}
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{'2'}})
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{'g'}})
	b.ResetTimer()
	for b.Loop() {
		m.Update(keyJ)
		_ = m.View()
	}
}

// BenchmarkTailIngest50k is a burst of 50k events reaching the tail.
func BenchmarkTailIngest50k(b *testing.B) {
	burst := events(50_000)
	b.ResetTimer()
	for b.Loop() {
		m := sized(uitest.New(), 100_000)
		for _, msg := range burst {
			m.Update(msg)
		}
		_ = m.View()
	}
}

// TestTailMemoryBounded fills a 100k ring three times over with 1 KiB
// values: what stays is the rows' metadata, well under 200 MB.
func TestTailMemoryBounded(t *testing.T) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	m := sized(uitest.New(), 100_000)
	for range 3 {
		for _, msg := range events(100_000) {
			m.Update(msg)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	grown := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("a full 100k tail holds %d MiB", grown>>20)
	if grown > 200<<20 {
		t.Errorf("a full 100k tail holds %d MiB, want well under 200", grown>>20)
	}
	if r := m.tail.Ring(); r.Len() != 100_000 || r.Dropped() != 200_000 {
		t.Errorf("ring holds %d, dropped %d; want 100000 and 200000", r.Len(), r.Dropped())
	}
	runtime.KeepAlive(m)
}

// BenchmarkKeyPressObject1500KiB is one j (Update and View) in the object
// pane on a ConfigMap of 1.5 MiB of data, on one line or in lines of 64
// bytes, beside a 1 MiB annotation; MiB-held is what the open value costs
// the UI after a collection.
func BenchmarkKeyPressObject1500KiB(b *testing.B) {
	for _, lineLen := range []int{0, 64} {
		b.Run(fmt.Sprintf("lines-of-%d", lineLen), func(b *testing.B) {
			src := uitest.New()
			src.PutBig(1536<<10, lineLen)
			var before, after runtime.MemStats
			heldAfterGC(&before)
			m := sized(src, 100)
			_, open := m.Update(common.OpenObjectMsg{Key: uitest.BigKey, Focus: true})
			m.Update(open())
			heldAfterGC(&after)
			if v := m.View(); !strings.Contains(v, uitest.BigKey+"  rev") {
				b.Fatalf("the value did not open:\n%s", v)
			}
			for b.Loop() {
				m.Update(keyJ)
				_ = m.View()
			}
			b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/(1<<20), "MiB-held")
		})
	}
}

// heldAfterGC reads the heap once what is unreachable is gone: a second
// collection empties the sync.Pool victim caches the first one fills.
func heldAfterGC(ms *runtime.MemStats) {
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(ms)
}

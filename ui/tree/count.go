package tree

import (
	"fmt"
	"slices"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/ui/common"
)

// countLanes is how many Count reads the pane keeps in flight, over every
// level: etcd walks its index over each directory it counts, on a core of
// its own, and more than a few only queue there (as etcdview.CountChildren).
const countLanes = 4

// CountMsg carries the number of keys below one entry of a level (or below
// the level itself, when it is paged), read for the level's load gen.
type CountMsg struct {
	gen   int
	level string // the level's prefix
	of    string // the prefix counted
	n     int64
	took  time.Duration
	err   error
}

// counts is the progress of reading the counts of one load of a level:
// Children leaves a large directory CountUnknown, and the pane fills it in
// with Count, a few at a time, while the names are already on screen.
type counts struct {
	gen      int             // the load; answers for another are dropped
	inflight map[string]bool // prefixes being counted
	// stale are the directories showing the count of the read before a
	// reload, until a fresh one arrives: a reload does not flicker to "…".
	stale  map[string]bool
	failed bool          // a count failed: the rest wait for the next read
	took   time.Duration // the counts' read times, summed
}

func countKeys(c common.Common, gen int, level, of string, rev int64) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := c.Context()
		defer cancel()
		start := time.Now()
		n, err := c.Src.Count(ctx, of, rev)
		if err != nil {
			err = fmt.Errorf("count %s at revision %d: %w", of, rev, err)
		}
		return CountMsg{gen: gen, level: level, of: of, n: n, took: time.Since(start), err: err}
	}
}

// pending says whether counts of the level are still to be read.
func (l *level) pending() bool { return l.uncounted > 0 || len(l.counts.stale) > 0 }

// counting says whether the pane is filling in the level's counts.
func (l *level) counting() bool { return !l.counts.failed && l.pending() }

// nextToCount is the next prefix to count: the level itself when it is
// paged, else a directory in view first, then the others.
func (l *level) nextToCount() (string, bool) {
	if l.paged {
		return l.prefix, l.uncounted > 0 && !l.counts.inflight[l.prefix]
	}
	if !l.pending() {
		return "", false
	}
	wanted := func(ch etcdview.Child) bool {
		return ch.Dir && (ch.Count == etcdview.CountUnknown || l.counts.stale[ch.Prefix]) && !l.counts.inflight[ch.Prefix]
	}
	n := l.rows()
	for k := range n {
		if ch := l.child((l.cursor.Offset + k) % n); wanted(ch) {
			return ch.Prefix, true
		}
	}
	if i := slices.IndexFunc(l.children, wanted); i >= 0 { // hidden by the filter
		return l.children[i].Prefix, true
	}
	return "", false
}

// setCount records n keys below prefix of.
func (l *level) setCount(of string, n int64) {
	delete(l.counts.stale, of)
	if l.paged {
		l.count, l.uncounted = n, 0
		return
	}
	if i := slices.IndexFunc(l.children, func(ch etcdview.Child) bool { return ch.Prefix == of }); i >= 0 {
		l.children[i].Count = n
		l.tally()
	}
}

// keepCounts gives the directories ld left uncounted the count they had in
// old, and returns them: they are stale until counted again.
func keepCounts(ld *loaded, old []etcdview.Child) map[string]bool {
	if ld.paged {
		return nil // keys, no directories; its own count came with the reload
	}
	had := make(map[string]int64, len(old))
	for _, ch := range old {
		if ch.Dir && ch.Count != etcdview.CountUnknown {
			had[ch.Prefix] = ch.Count
		}
	}
	stale := map[string]bool{}
	for i, ch := range ld.children {
		if n, ok := had[ch.Prefix]; ok && ch.Count == etcdview.CountUnknown {
			ld.children[i].Count = n
			stale[ch.Prefix] = true
		}
	}
	ld.tally()
	return stale
}

// countMore starts counts of the open level until countLanes are in flight.
// Only the open level is counted: a level below which the user went on waits
// with its counts so far, and goes on when it is open again.
func (m *Model) countMore() tea.Cmd {
	l := m.top()
	if l == nil || l.counts.failed {
		return nil
	}
	var cmds []tea.Cmd
	for m.countsInFlight < countLanes {
		of, ok := l.nextToCount()
		if !ok {
			break
		}
		if l.counts.inflight == nil {
			l.counts.inflight = map[string]bool{}
		}
		l.counts.inflight[of] = true
		m.countsInFlight++
		cmds = append(cmds, countKeys(m.common, l.counts.gen, l.prefix, of, l.rev))
	}
	return tea.Batch(cmds...)
}

func (m *Model) onCount(msg CountMsg) tea.Cmd {
	m.countsInFlight--
	i := slices.IndexFunc(m.levels, func(l *level) bool { return l.prefix == msg.level && l.counts.gen == msg.gen })
	if i < 0 {
		return m.countMore()
	}
	l := m.levels[i]
	delete(l.counts.inflight, msg.of)
	l.counts.took += msg.took
	if msg.err != nil {
		if l.counts.failed {
			return m.countMore()
		}
		l.counts.failed = true
		return tea.Batch(common.FlashErr(msg.err), m.countMore())
	}
	l.setCount(msg.of, msg.n)
	if l == m.top() && !l.pending() {
		// The automatic reload is paced on the whole read, counts included.
		m.took += l.counts.took
		m.loadedAt = time.Now()
	}
	return m.countMore()
}

package history

import (
	"context"
	"errors"
	"fmt"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/ui/common"
)

// ProgressMsg says how far the replay for the earlier incarnations has
// come.
type ProgressMsg struct {
	gen     int
	p       etcdview.ReplayProgress
	elapsed time.Duration
}

// loadEarlier reads every incarnation of the key etcd holds, with the
// cursor on revision selected once they are in. On a live etcd that is a
// replay of its whole history: it reports its progress until it ends or
// stopEarlier stops it, and has no timeout but that.
func (m *Model) loadEarlier(selected int64) tea.Cmd {
	ctx, cancel := context.WithCancel(m.common.Ctx)
	progress := make(chan ProgressMsg, 1)
	m.stopReplay, m.progress, m.progressCh = cancel, &ProgressMsg{gen: m.gen}, progress
	gen, key, c := m.gen, m.key, m.common
	start := time.Now()
	read := func() tea.Msg {
		defer cancel()
		defer close(progress)
		h, err := c.Src.History(ctx, key, etcdview.HistoryOptions{AllIncarnations: true, Progress: func(p etcdview.ReplayProgress) {
			latest(progress, ProgressMsg{gen: gen, p: p, elapsed: time.Since(start)})
		}})
		return loaded(gen, c, key, h, err, selected, true)
	}
	return tea.Batch(read, awaitProgress(progress))
}

// latest puts msg on ch in place of the one the reader has not taken yet:
// the reader wants where the replay is now, not every step. Only the
// replay's goroutine sends, so the send never waits.
func latest(ch chan ProgressMsg, msg ProgressMsg) {
	select {
	case <-ch:
	default:
	}
	ch <- msg
}

func awaitProgress(ch <-chan ProgressMsg) tea.Cmd {
	return func() tea.Msg {
		if msg, ok := <-ch; ok {
			return msg
		}
		return nil
	}
}

// onProgress shows the replay's progress and waits for more.
func (m *Model) onProgress(msg ProgressMsg) tea.Cmd {
	if msg.gen != m.gen || m.progress == nil {
		return nil
	}
	m.progress = &msg
	return awaitProgress(m.progressCh)
}

// stopEarlier stops the replay, if one runs.
func (m *Model) stopEarlier() {
	if m.stopReplay != nil {
		m.stopReplay()
	}
	m.stopReplay, m.progress, m.progressCh = nil, nil, nil
}

// earlierFailed is what a replay that ended without the history says.
func earlierFailed(err error) tea.Cmd {
	if errors.Is(err, context.Canceled) {
		return common.Flash("stopped reading the earlier incarnations")
	}
	return common.FlashErr(err)
}

// earlierStatus is the title's part about the earlier incarnations: the
// replay's progress while it runs, what is known of them when they were
// not read, or "" when the history is complete.
func (m *Model) earlierStatus() string {
	readKey := m.keys.Earlier.Help().Key
	switch p := m.progress; {
	case p != nil && p.p.Head == 0:
		return "replaying etcd's history… (esc stops)"
	case p != nil:
		return fmt.Sprintf("%s, %.1fs (esc stops)", p.p, p.elapsed.Seconds())
	case m.h.Complete():
		return ""
	case m.h.Earlier == etcdview.EarlierUnread:
		return fmt.Sprintf("an earlier incarnation existed at revision %d: %s reads it", m.h.EarlierSeenAt, readKey)
	}
	return "earlier incarnations not read: " + readKey + " reads them"
}

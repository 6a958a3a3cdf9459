package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/ui"
	"github.com/etcdscope/etcdscope/ui/tail"
)

// tuiReport is what the TUI child process prints: the first screen's time
// and the process's peak RSS after browsing with a full tail.
type tuiReport struct {
	FirstScreen float64 // seconds from Init to the /registry level drawn
	PeakRSSMiB  float64
}

// tuiFigures runs the TUI model in a process of its own (so that its peak
// RSS is the UI's, not this harness's), runs times, and keeps the medians.
func tuiFigures(e env, registryKeys float64) []row {
	const screenFig, screenGoal = "first screen of the TUI (start to tree drawn, connect excluded)", "ratio ≤ 0.05"
	const rssFig, rssGoal = "peak RSS browsing with a 100k-event tail", "≤ 200 MB"
	var screens, rss []float64
	for range e.runs {
		out, err := exec.Command(e.self, "-tui-child", e.endpoint).Output()
		var r tuiReport
		if err == nil {
			err = json.Unmarshal(out, &r)
		}
		if err != nil {
			return []row{failed(screenFig, screenGoal, err), failed(rssFig, rssGoal, err)}
		}
		screens, rss = append(screens, r.FirstScreen), append(rss, r.PeakRSSMiB)
	}
	rows := []row{}
	if registryKeys > 0 {
		rows = append(rows, ratioRow(screenFig, median(screens), registryKeys, 0.05, "etcdctl --keys-only /registry"))
	} else {
		rows = append(rows, row{figure: screenFig, ours: ms(median(screens)), goal: screenGoal})
	}
	peak := median(rss)
	return append(rows, row{figure: rssFig, ours: fmt.Sprintf("%.0f MiB", peak), goal: rssGoal,
		met: peak*(1<<20) <= 200e6, measured: true})
}

// tuiChild is the child process: connect, then time the first screen; then
// open levels down to one namespace's pods and feed a 100k-event tail of
// 1 KiB values, and report the peak RSS.
func tuiChild(endpoint string) error {
	ctx := context.Background()
	src, err := etcdview.Connect(ctx, etcdview.Config{Endpoints: []string{endpoint}})
	if err != nil {
		return err
	}
	defer src.Close()
	m := ui.New(ctx, ui.Options{Source: src, TailBuffer: 100_000})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	msgs := make(chan tea.Msg, 1024)
	start := time.Now()
	run(msgs, m.Init())
	if err := driveUntil(m, msgs, func(v string) bool { return strings.Contains(v, "namespaces/") }); err != nil {
		return err
	}
	first := time.Since(start)

	// Browse: into the first directory of /registry and on down.
	for range 3 {
		run(msgs, update(m, tea.KeyMsg{Type: tea.KeyEnter}))
		drainFor(m, msgs, 2*time.Second)
	}
	syntheticTail(100_000, func(b tail.BatchesMsg) { run(msgs, update(m, b)) })
	drainFor(m, msgs, time.Second)
	_ = m.View()

	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(tuiReport{FirstScreen: first.Seconds(), PeakRSSMiB: float64(ru.Maxrss) / 1024})
}

func update(m tea.Model, msg tea.Msg) tea.Cmd {
	_, cmd := m.Update(msg)
	return cmd
}

// run runs cmd (and each command of a batch) on its own goroutine, as
// bubbletea does, sending what it returns to msgs.
func run(msgs chan<- tea.Msg, cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	go func() {
		msg := cmd()
		if batch, ok := msg.(tea.BatchMsg); ok {
			for _, c := range batch {
				run(msgs, c)
			}
			return
		}
		if msg != nil {
			msgs <- msg
		}
	}()
}

// driveUntil feeds messages to m until its view satisfies done.
func driveUntil(m tea.Model, msgs chan tea.Msg, done func(string) bool) error {
	timeout := time.After(2 * time.Minute)
	for {
		select {
		case msg := <-msgs:
			run(msgs, update(m, msg))
			if done(m.View()) {
				return nil
			}
		case <-timeout:
			return fmt.Errorf("the TUI drew no /registry level within 2 minutes")
		}
	}
}

// drainFor feeds messages to m for d.
func drainFor(m tea.Model, msgs chan tea.Msg, d time.Duration) {
	end := time.After(d)
	for {
		select {
		case msg := <-msgs:
			run(msgs, update(m, msg))
		case <-end:
			return
		}
	}
}

// syntheticTail sends n pod updates with 1 KiB values of their own, 1000
// to a batch, as the watch delivers them on a busy cluster; a batch is
// built only when the previous one was handed over, so that the harness
// holds no more than the UI does.
func syntheticTail(n int, send func(tail.BatchesMsg)) {
	var b etcdview.Batch
	for i := range n {
		kv := etcdview.KV{Key: fmt.Sprintf("/registry/pods/team-%03d/pod-%d", i%500, i), Value: make([]byte, 1024), ModRevision: int64(i + 2)}
		prev := &etcdview.KV{Key: kv.Key, Value: make([]byte, 1024), ModRevision: int64(i + 1)}
		b.Events = append(b.Events, etcdview.Event{Type: etcdview.Modified, KV: kv, Prev: prev})
		if len(b.Events) == 1000 {
			b.Revision = kv.ModRevision
			send(tail.BatchesMsg{Batches: []etcdview.Batch{b}})
			b = etcdview.Batch{}
		}
	}
}

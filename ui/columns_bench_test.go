package ui

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/etcdscope/etcdscope/ui/uitest"
)

// podLevel is the app, 100x30, on a level of n pods with kubectl's
// columns, its first page open and the rows of its first screen read.
func podLevel(b *testing.B, n int) (*Model, func(tea.Cmd)) {
	src := uitest.New()
	for i := range n {
		src.PutObject(uitest.Pod("default", fmt.Sprintf("pod-%06d", i), "nginx:1.28", i%3 != 0))
	}
	m := sized(src, 100)
	drive := func(cmd tea.Cmd) {
		uitest.Drive(b, func(msg tea.Msg) tea.Cmd { _, c := m.Update(msg); return c }, cmd)
	}
	drive(m.browse.tree.GoTo("/registry/pods/default/"))
	if v := m.View(); !strings.Contains(v, fmt.Sprintf("%d keys", n)) || !strings.Contains(v, "Running") {
		b.Fatalf("the level did not open with its columns:\n%s", v)
	}
	return m, drive
}

// wrapAt is where the benchmarks' cursor goes back to the top: within the
// first page, so that no press waits for a page of keys.
const wrapAt = 450

// BenchmarkKeyPressColumns100k is one j (Update and View) on a level of
// 100k pods drawn with their columns, every row it reaches read and
// decoded before: the cost of drawing the table.
func BenchmarkKeyPressColumns100k(b *testing.B) {
	m, drive := podLevel(b, 100_000)
	for range wrapAt + 30 {
		_, cmd := m.Update(keyJ)
		drive(cmd)
	}
	if v := m.View(); undecoded.MatchString(v) || !strings.Contains(v, "pod-000479") {
		b.Fatalf("rows in view are not decoded:\n%s", v)
	}
	m.Update(keyG)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if i%wrapAt == wrapAt-1 {
			m.Update(keyG)
		}
		m.Update(keyJ)
		_ = m.View()
	}
}

// BenchmarkKeyPressColumnsUndecoded100k is one j on the same level where
// the press brings rows not read yet into view: the reads it starts are
// commands the loop never waits for, and the rows show "…".
func BenchmarkKeyPressColumnsUndecoded100k(b *testing.B) {
	m, _ := podLevel(b, 100_000)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if i%wrapAt == wrapAt-1 {
			m.Update(keyG)
		}
		m.Update(keyJ) // its reads are dropped: never run, never waited for
		_ = m.View()
	}
	b.StopTimer()
	m.Update(keyG)
	for range wrapAt - 1 {
		m.Update(keyJ)
	}
	if v := m.View(); !undecoded.MatchString(v) {
		b.Fatalf("the presses reached no row left to read:\n%s", v)
	}
}

var keyG = tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{'g'}}

// undecoded matches a row in view whose value is not read yet.
var undecoded = regexp.MustCompile(`pod-\d+\s+…`)

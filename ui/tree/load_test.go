package tree

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/ui/common"
	"github.com/etcdscope/etcdscope/ui/uitest"
)

// failingBelow fails every read of a level below prefix once fail is set.
type failingBelow struct {
	*uitest.Source
	mu     sync.Mutex
	prefix string
}

func (f *failingBelow) fail(prefix string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.prefix = prefix
}

func (f *failingBelow) err(prefix string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.prefix != "" && strings.HasPrefix(prefix, f.prefix) {
		return errors.New("etcdserver: permission denied")
	}
	return nil
}

func (f *failingBelow) Children(ctx context.Context, prefix string, rev int64) (etcdview.Level, error) {
	if err := f.err(prefix); err != nil {
		return etcdview.Level{}, err
	}
	return f.Source.Children(ctx, prefix, rev)
}

func (f *failingBelow) List(ctx context.Context, prefix string, rev int64, page etcdview.PageToken) (etcdview.Page, error) {
	if err := f.err(prefix); err != nil {
		return etcdview.Page{}, err
	}
	return f.Source.List(ctx, prefix, rev, page)
}

func openFailing(t *testing.T) (*harness, *failingBelow) {
	t.Helper()
	src := &failingBelow{Source: uitest.Fixture()}
	c := uitest.Common(src.Source)
	c.Src = src
	return newHarness(t, c, false), src
}

// errorFlashes are the error texts the tree sent to the status line.
func (h *harness) errorFlashes() []string {
	var out []string
	for _, msg := range h.msgs {
		if f, ok := msg.(common.FlashMsg); ok && f.Err {
			out = append(out, f.Text)
		}
	}
	return out
}

func TestFailedOpenLeavesTheLevelOnScreenAndSaysWhy(t *testing.T) {
	tests := []struct {
		name string
		do   func(h *harness)
	}{
		{"enter on a directory", func(h *harness) { h.press("/", "p", "o", "d", "s", "enter", "enter") }},
		{"a jump to a path", func(h *harness) { h.drive(h.GoTo("/registry/pods/default/web-0")) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h, src := openFailing(t)
			before := h.View()
			src.fail("/registry/pods/")
			tc.do(h)
			if h.Prefix() != Root || len(h.levels) != 1 {
				t.Errorf("the open level is %q of %d levels, want the root alone", h.Prefix(), len(h.levels))
			}
			got := h.View()
			if !strings.Contains(got, "/registry/  10 keys") || !strings.Contains(got, "pods/") || strings.Contains(got, "loading") {
				t.Errorf("the root is not on screen as it was:\n%s\nbefore:\n%s", got, before)
			}
			if f := h.errorFlashes(); len(f) != 1 || !strings.Contains(f[0], "/registry/pods/") || !strings.Contains(f[0], "permission denied") {
				t.Errorf("status line errors %q, want the failed read of /registry/pods/", f)
			}
		})
	}
}

func TestFailedReloadKeepsTheLevelAndSaysWhy(t *testing.T) {
	h, src := openFailing(t)
	h.press("j", "j")
	selected, _ := h.Selected()
	src.fail(Root)
	h.press("ctrl+r")
	if f := h.errorFlashes(); len(f) != 1 || !strings.Contains(f[0], "read /registry/: etcdserver: permission denied") {
		t.Errorf("status line errors %q, want the failed reload", f)
	}
	if now, _ := h.Selected(); now.Prefix != selected.Prefix || !strings.Contains(h.View(), "/registry/  10 keys") {
		t.Errorf("the level changed on a failed reload (cursor on %s, was %s):\n%s", now.Prefix, selected.Prefix, h.View())
	}
	src.fail("")
	h.press("ctrl+r")
	if f := h.errorFlashes(); len(f) != 1 {
		t.Errorf("a reload that worked flashed %q", f[1:])
	}
}

func TestRootThatFailsToOpenShowsTheError(t *testing.T) {
	src := &failingBelow{Source: uitest.Fixture()}
	src.fail(Root)
	c := uitest.Common(src.Source)
	c.Src = src
	h := newHarness(t, c, false)
	if got := h.View(); !strings.Contains(got, "permission denied") {
		t.Errorf("no error in the pane:\n%s", got)
	}
}

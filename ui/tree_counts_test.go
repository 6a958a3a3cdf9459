package ui

import (
	"context"
	"fmt"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/teatest"
	"github.com/etcdscope/etcdscope/ui/uitest"
)

// gatedCounts holds every Count until the test lets one finish, and keeps
// the most that were under way at once.
type gatedCounts struct {
	*uitest.Source
	started chan string   // the prefix of each Count as it starts
	finish  chan struct{} // lets one Count finish

	mu             sync.Mutex
	inflight, most int
}

func (g *gatedCounts) Count(ctx context.Context, prefix string, rev int64) (int64, error) {
	g.mu.Lock()
	g.inflight++
	g.most = max(g.most, g.inflight)
	g.mu.Unlock()
	g.started <- prefix
	<-g.finish
	g.mu.Lock()
	g.inflight--
	g.mu.Unlock()
	return g.Source.Count(ctx, prefix, rev)
}

func (g *gatedCounts) expectStart(t *testing.T) {
	t.Helper()
	select {
	case <-g.started:
	case <-time.After(waitFor):
		t.Fatalf("no count started within %v", waitFor)
	}
}

// TestTreeCountsArriveAFewAtATimeWhileBrowsing runs the app as bubbletea
// does, every command on a goroutine of its own: names show before their
// counts, the tree opens a level while counts are under way, and no more
// than 4 Count reads are ever in flight.
func TestTreeCountsArriveAFewAtATimeWhileBrowsing(t *testing.T) {
	const namespaces, lanes = 40, 4
	src := uitest.New()
	src.UncountedAbove = 2
	for i := range namespaces {
		for _, name := range []string{"a", "b", "c"} {
			src.Put(fmt.Sprintf("/registry/pods/ns-%02d/%s", i, name), []byte("x"))
		}
	}
	g := &gatedCounts{Source: src, started: make(chan string, 2*namespaces), finish: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	m := New(ctx, Options{Source: g, TailBuffer: 100, RefreshInterval: time.Hour})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(100, 30))

	waitScreen(t, tm, "/registry/  counting…", "pods/")
	g.expectStart(t) // the root's count of pods/, held
	command(tm, "key /registry/pods/")
	waitScreen(t, tm, "/registry/pods/  counting…", "ns-00/")
	for range lanes - 1 {
		g.expectStart(t)
	}
	total := namespaces + 1
	for done := 1; done <= total; done++ {
		g.finish <- struct{}{}
		if lanes+done <= total {
			g.expectStart(t)
		}
	}
	waitScreen(t, tm, fmt.Sprintf("/registry/pods/  %d keys", 3*namespaces))
	if got := finalView(t, tm); !regexp.MustCompile(`ns-00/ +3`).MatchString(got) {
		t.Errorf("the counts are not shown:\n%s", got)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.most != lanes {
		t.Errorf("at most %d counts were in flight, want %d", g.most, lanes)
	}
}

package ui

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/ui/uitest"
)

// watchedSource is a uitest.Source that keeps the context of every Watch,
// to tell whether the app cancelled the reads on it.
type watchedSource struct {
	*uitest.Source
	mu   sync.Mutex
	ctxs []context.Context
}

func (s *watchedSource) Watch(ctx context.Context, prefix string, opts etcdview.WatchOptions) <-chan etcdview.Batch {
	s.mu.Lock()
	s.ctxs = append(s.ctxs, ctx)
	s.mu.Unlock()
	return s.Source.Watch(ctx, prefix, opts)
}

// watching is how many of its watches are not cancelled.
func (s *watchedSource) watching() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.ctxs {
		if c.Err() == nil {
			n++
		}
	}
	return n
}

// waitWatched waits until the tail watches s, so that a write the test
// makes next reaches it: the tail watches from the next revision on.
func waitWatched(t *testing.T, s *watchedSource) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for s.watching() == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("nothing watched the source within %v", waitFor)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitScreenWithout is waitScreen for want, failing if the screen showed
// not on the way.
func waitScreenWithout(t *testing.T, tm *teatest.TestModel, want, not string) {
	t.Helper()
	var seen []byte
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		seen = append(seen, b...)
		return bytes.Contains(seen, []byte(want))
	}, teatest.WithDuration(waitFor), teatest.WithCheckInterval(10*time.Millisecond))
	if bytes.Contains(seen, []byte(not)) {
		t.Errorf("the screen showed %q before %q", not, want)
	}
}

// fakeCluster is one cluster fakeClusters offers.
type fakeCluster struct {
	name, what string
	src        *watchedSource
	// openErr fails Open; gate, when set, holds Open until it closes.
	openErr error
	gate    chan struct{}
	// closes counts the closeFns run; closed closes at the first, and
	// watchingAtClose is how many of src's watches were live then.
	closes          int
	closed          chan struct{}
	watchingAtClose int
}

// fakeClusters is Options.Clusters over in-memory sources, the one shown
// marked current as cli marks it.
type fakeClusters struct {
	mu       sync.Mutex
	clusters []*fakeCluster
	current  string
}

func (f *fakeClusters) List(context.Context) ([]NamedCluster, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []NamedCluster
	for _, c := range f.clusters {
		out = append(out, NamedCluster{Name: c.name, What: c.what, Current: c.name == f.current})
	}
	return out, nil
}

func (f *fakeClusters) Open(ctx context.Context, name string) (Options, func(), error) {
	c := f.find(name)
	if c.gate != nil {
		select {
		case <-c.gate:
		case <-ctx.Done():
			return Options{}, nil, ctx.Err()
		}
	}
	if c.openErr != nil {
		return Options{}, nil, c.openErr
	}
	f.mu.Lock()
	f.current = name
	c.closed = make(chan struct{})
	f.mu.Unlock()
	return Options{Source: c.src, Description: c.what}, func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		c.closes++
		if c.closes == 1 {
			c.watchingAtClose = c.src.watching()
			close(c.closed)
		}
	}, nil
}

func (f *fakeClusters) find(name string) *fakeCluster {
	for _, c := range f.clusters {
		if c.name == name {
			return c
		}
	}
	panic("no fake cluster " + name)
}

// closesOf is how many times name's closeFn ran.
func (f *fakeClusters) closesOf(name string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.find(name).closes
}

// waitClosed waits for name's closeFn, opened since, to run.
func (f *fakeClusters) waitClosed(t *testing.T, name string) {
	t.Helper()
	f.mu.Lock()
	closed := f.find(name).closed
	f.mu.Unlock()
	select {
	case <-closed:
	case <-time.After(waitFor):
		t.Fatalf("%s was not closed within %v", name, waitFor)
	}
}

// betaSource is a store that holds none of the fixture's keys: only a
// CSINode, whose level is "csinodes/".
func betaSource() *watchedSource {
	s := uitest.New()
	s.Put("/registry/csinodes/beta-node", []byte("csinode of beta"))
	return &watchedSource{Source: s}
}

// twoClusters is alpha, the fixture, shown first as the caller opened it,
// and beta, a kubeadm node's etcd.
func twoClusters() (*fakeClusters, *watchedSource) {
	alpha := &watchedSource{Source: uitest.Fixture()}
	return &fakeClusters{current: "alpha", clusters: []*fakeCluster{
		{name: "alpha", what: "fixture store", src: alpha},
		{name: "beta", what: "etcd of this kubeadm node, from /etc/kubernetes/manifests/kube-apiserver.yaml", src: betaSource()},
	}}, alpha
}

// startClusters starts the UI on alpha, offering f's clusters.
func startClusters(t *testing.T, f *fakeClusters, alpha etcdview.Source) *teatest.TestModel {
	t.Helper()
	tm := startOn(t, 120, 30, Options{Source: alpha, Description: "fixture store", Clusters: f})
	waitScreen(t, tm, "pods/", "etcd-0 ★")
	return tm
}

// finalModel quits and returns the app as it ended, for end.
func finalModel(t *testing.T, tm *teatest.TestModel) *Model {
	t.Helper()
	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	return tm.FinalModel(t, teatest.WithFinalTimeout(waitFor)).(*Model)
}

func TestGoldenCtxListsTheClusters(t *testing.T) {
	f, alpha := twoClusters()
	tm := startClusters(t, f, alpha)
	command(tm, "ctx")
	waitScreen(t, tm, "CURRENT", "kube-apiserver.yaml", "enter switch to the cluster")
	golden.RequireEqual(t, []byte(finalView(t, tm)))
}

// TestCtxEnterSwitchesWithoutRestarting picks beta in the list: while Open
// runs the screen says so, then every pane reads beta (the tree, the tail,
// the header; a write to alpha no longer shows), alpha's watch is
// cancelled and alpha, the caller's, is not closed. Switching back closes beta, once, after its watch was cancelled;
// the end of the program closes alpha as Open gave it.
func TestCtxEnterSwitchesWithoutRestarting(t *testing.T) {
	f, alpha := twoClusters()
	beta := f.find("beta")
	beta.gate = make(chan struct{})
	tm := startClusters(t, f, alpha)
	command(tm, "ctx")
	waitScreen(t, tm, "kube-apiserver.yaml")
	typeText(tm, "j")
	press(tm, tea.KeyEnter)
	waitScreen(t, tm, "switching to beta…")
	close(beta.gate)
	waitScreen(t, tm, "switched to beta", "csinodes/", "etcd of this kubeadm node")
	if n := alpha.watching(); n != 0 {
		t.Errorf("after the switch, %d of alpha's watches go on", n)
	}
	waitWatched(t, beta.src)
	typeText(tm, "2")
	waitScreen(t, tm, "waiting for events")
	alpha.PutObject(uitest.Pod("default", "alpha-only", "nginx:1.29", true))
	beta.src.Put("/registry/csinodes/beta-node-2", []byte("csinode"))
	waitScreenWithout(t, tm, "beta-node-2", "alpha-only")

	command(tm, "ctx alpha")
	f.waitClosed(t, "beta")
	waitScreen(t, tm, "switched to alpha", "pods/")
	m := finalModel(t, tm)
	if strings.Contains(m.View(), "csinodes/") {
		t.Errorf("back on alpha, the tree shows beta's keys:\n%s", m.View())
	}
	if n := f.closesOf("beta"); n != 1 || beta.watchingAtClose != 0 {
		t.Errorf("beta was closed %d times, with %d watches live; want once, after they were cancelled", n, beta.watchingAtClose)
	}
	if n := f.closesOf("alpha"); n != 0 {
		t.Errorf("alpha, opened by the caller, was closed %d times before the end", n)
	}
	m.end()
	if n := f.closesOf("alpha"); n != 1 {
		t.Errorf("at the end, alpha as Open gave it was closed %d times, want once", n)
	}
}

func TestCtxNameSwitchesDirectly(t *testing.T) {
	f, alpha := twoClusters()
	tm := startClusters(t, f, alpha)
	command(tm, "context beta")
	waitScreen(t, tm, "switched to beta", "csinodes/")
	m := finalModel(t, tm)
	// Open gave no tail size: the user's (100 here) carries over.
	if got := m.View(); !strings.Contains(got, "[1 browse]") || !strings.Contains(got, "etcd of this kubeadm node") || !strings.Contains(got, "tail 0/100 kept") {
		t.Errorf("after :context beta, not beta's browse screen with the tail's size:\n%s", got)
	}
	m.end()
	if n := f.closesOf("beta"); n != 1 {
		t.Errorf("beta was closed %d times at the end, want once", n)
	}
}

func TestCtxRefusesWhatItCannotSwitchTo(t *testing.T) {
	tests := []struct {
		name, line string
		openErr    error
		want       string
	}{
		{"unknown name", "ctx gamma", nil, `✗ no cluster named "gamma"; :ctx lists alpha, beta`},
		{"the cluster shown", "ctx alpha", nil, "• alpha is the cluster shown"},
		{"open fails", "ctx beta", errors.New("open /etc/kubernetes/pki/etcd/ca.crt: permission denied (run with sudo)"),
			"✗ cannot switch to beta: open /etc/kubernetes/pki/etcd/ca.crt: permission denied (run with sudo)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, alpha := twoClusters()
			f.find("beta").openErr = tc.openErr
			tm := startClusters(t, f, alpha)
			waitWatched(t, alpha)
			command(tm, tc.line)
			waitScreen(t, tm, tc.want)
			// alpha goes on as it was: its tree, its tail's watch.
			typeText(tm, "2")
			waitScreen(t, tm, "waiting for events")
			alpha.PutObject(uitest.Pod("default", "still-alpha", "nginx:1.29", true))
			waitScreen(t, tm, "still-alpha")
			if got := finalView(t, tm); !strings.Contains(got, "fixture store") {
				t.Errorf("the header no longer names alpha:\n%s", got)
			}
		})
	}
}

func TestCtxWithoutClustersSaysWhereToNameThem(t *testing.T) {
	m := appOn(uitest.Fixture())
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 30})
	update := updateOf(m)
	uitest.Press(t, update, ":")
	uitest.Type(t, update, "ctx")
	uitest.Press(t, update, "enter")
	want := "✗ no other cluster to switch to: name clusters in ${XDG_CONFIG_HOME:-~/.config}/etcdscope/config.yaml"
	if got := m.View(); !strings.Contains(got, want) || !strings.Contains(got, "[1 browse]") {
		t.Errorf(":ctx with no clusters does not say %q over browse:\n%s", want, got)
	}
}

// TestMessagesOfTheClusterSwitchedAwayFromAreDropped: alpha's answers that
// arrive after the switch to beta, one read before it and one that the
// switch cancelled, change nothing on beta's screen.
func TestMessagesOfTheClusterSwitchedAwayFromAreDropped(t *testing.T) {
	f, alpha := twoClusters()
	m := New(context.Background(), Options{Source: alpha, Clusters: f, Tick: new(uitest.Clock).Tick})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	answered := tagged(m.epoch, m.browse.tree.Init())()
	cancelled := tagged(m.epoch, m.browse.tree.Init())
	m.Update(clusterOpenedMsg{name: "beta", opts: Options{Source: f.find("beta").src}})
	feed(t, m, m.browse.tree.Init()())
	feed(t, m, answered)
	feed(t, m, cancelled())
	got := m.View()
	if !strings.Contains(got, "csinodes/") || strings.Contains(got, "pods/") || strings.Contains(got, "canceled") {
		t.Errorf("alpha's answers after the switch to beta changed the screen:\n%s", got)
	}
}

// TestCtxShowsClusterNamesInert lists, flashes and switches to a cluster
// whose name and place hold uitest.Hostile, as a config file can, and
// flashes an Open error that quotes a file's contents: the screen holds
// nothing a terminal acts on, and shows them escaped.
func TestCtxShowsClusterNamesInert(t *testing.T) {
	h := uitest.Hostile
	tests := []struct {
		name    string
		run     func(t *testing.T, tm *teatest.TestModel)
		openErr error
		want    string
	}{
		{"list", func(_ *testing.T, tm *teatest.TestModel) { command(tm, "ctx") }, nil, `from /etc/\x1b]0;pwned\x07`},
		{"unknown name", func(_ *testing.T, tm *teatest.TestModel) { command(tm, "ctx nosuch") }, nil, `:ctx lists alpha, beta, evil\x1b]0;pwned\x07`},
		{"switched", func(t *testing.T, tm *teatest.TestModel) {
			command(tm, "ctx")
			waitScreen(t, tm, "CURRENT")
			typeText(tm, "jj")
			press(tm, tea.KeyEnter)
		}, nil, `switched to evil\x1b]0;pwned\x07`},
		{"open fails", func(_ *testing.T, tm *teatest.TestModel) { command(tm, "ctx beta") },
			errors.New("read /etc/" + h), `cannot switch to beta: read /etc/\x1b]0;pwned\x07`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, alpha := twoClusters()
			f.clusters = append(f.clusters, &fakeCluster{name: "evil" + h, what: "from /etc/" + h, src: betaSource()})
			f.find("beta").openErr = tc.openErr
			tm := startClusters(t, f, alpha)
			tc.run(t, tm)
			waitScreen(t, tm, tc.want)
			got := finalView(t, tm)
			if bad := uitest.Active(got); len(bad) > 0 {
				t.Errorf("the screen holds what a terminal acts on: %s\n%s", strings.Join(bad, "; "), got)
			}
			if !strings.Contains(got, tc.want) {
				t.Errorf("the screen does not show %q:\n%s", tc.want, got)
			}
		})
	}
}

// TestOwnerClosesWhatOpenGaveOnce: each closeFn runs once, the current
// one's at the next switch, the rest at the end, one opened after the end
// at once; the cluster the caller gave (none pending at the first switch)
// is not the owner's.
func TestOwnerClosesWhatOpenGaveOnce(t *testing.T) {
	var mu sync.Mutex
	closed := map[string]int{}
	closer := func(name string) func() {
		return func() {
			mu.Lock()
			defer mu.Unlock()
			closed[name]++
		}
	}
	var o owner
	o.pend(closer("a"))
	o.switched() // from the caller's cluster to a
	o.pend(closer("b"))
	o.switched() // from a to b
	o.pend(closer("c"))
	o.end() // b shown, c opened as the program ended
	if o.pend(closer("d")) {
		t.Errorf("a cluster opened after the end was taken")
	}
	o.end()
	want := map[string]int{"a": 1, "b": 1, "c": 1, "d": 1}
	mu.Lock()
	defer mu.Unlock()
	for name, n := range want {
		if closed[name] != n {
			t.Errorf("%s closed %d times, want %d (all: %v)", name, closed[name], n, closed)
		}
	}
}

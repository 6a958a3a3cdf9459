package ui

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/etcdscope/etcdscope/ui/contexts"
)

// noClusters is what :ctx says when the caller offers no clusters.
const noClusters = "no other cluster to switch to: name clusters in ${XDG_CONFIG_HOME:-~/.config}/etcdscope/config.yaml"

// clustersListedMsg carries Clusters.List, read for the list (want "") or
// for a switch to want.
type clustersListedMsg struct {
	want string
	list []NamedCluster
	err  error
}

// clusterOpenedMsg carries Clusters.Open of name; its closeFn is in the
// app's owner.
type clusterOpenedMsg struct {
	name string
	opts Options
	err  error
}

// epochMsg is a message made by a command of the cluster shown at epoch:
// one of a cluster the explorer switched away from (a read that ends, the
// old watch's last batch, a timer) is dropped, not taken by the new panes.
type epochMsg struct {
	epoch int
	msg   tea.Msg
}

// teaPkg is bubbletea's package: its own messages (tea.Quit's, a batch's)
// must reach its loop as they are.
var teaPkg = reflect.TypeFor[tea.QuitMsg]().PkgPath()

// tagged is cmd whose messages carry epoch, the batches it yields too.
func tagged(epoch int, cmd tea.Cmd) tea.Cmd {
	if cmd == nil {
		return nil
	}
	return func() tea.Msg {
		switch msg := cmd().(type) {
		case nil:
			return nil
		case tea.BatchMsg:
			out := make(tea.BatchMsg, len(msg))
			for i, c := range msg {
				out[i] = tagged(epoch, c)
			}
			return out
		default:
			if reflect.TypeOf(msg).PkgPath() == teaPkg {
				return msg
			}
			return epochMsg{epoch, msg}
		}
	}
}

// owner holds the closeFns Clusters.Open gave the app, each called exactly
// once and only after the reads on its cluster were cancelled: when the
// explorer switches away from it, or when the program ends (end). The
// cluster the caller passed to New is the caller's to close.
type owner struct {
	mu sync.Mutex
	// current closes the cluster shown; nil while it is the caller's.
	current func()
	// pending closes one opened and not yet shown: the program may end
	// before Update takes it.
	pending func()
	ended   bool
	closing sync.WaitGroup
}

// pend keeps closeFn until the switch to its cluster; false once the
// program ended, when it has closed it. That close runs here, on Open's
// goroutine, not counted in closing: end may be waiting on it already.
func (o *owner) pend(closeFn func()) bool {
	o.mu.Lock()
	ended := o.ended
	if !ended {
		o.pending = closeFn
	}
	o.mu.Unlock()
	if ended && closeFn != nil {
		closeFn()
	}
	return !ended
}

// switched makes the pending cluster the current one, and closes the one
// it replaces, off the Update goroutine: a source may take a while to
// close (a bundled cluster stops its members).
func (o *owner) switched() {
	o.mu.Lock()
	defer o.mu.Unlock()
	prev := o.current
	o.current, o.pending = o.pending, nil
	o.run(prev)
}

// end closes what Open gave and waits for every close to return.
func (o *owner) end() {
	o.mu.Lock()
	o.ended = true
	o.run(o.current)
	o.run(o.pending)
	o.current, o.pending = nil, nil
	o.mu.Unlock()
	o.closing.Wait()
}

func (o *owner) run(closeFn func()) {
	if closeFn == nil {
		return
	}
	o.closing.Add(1)
	go func() {
		defer o.closing.Done()
		closeFn()
	}()
}

// end cancels the reads of the cluster shown, then closes what Open gave:
// Run calls it once the program has ended.
func (m *Model) end() {
	m.cancel()
	m.owner.end()
}

// carry fills, where o leaves them unset, what the explorer keeps across a
// switch from prev: the user's settings, not the cluster's.
func (o Options) carry(prev Options) Options {
	if o.TailBuffer <= 0 {
		o.TailBuffer = prev.TailBuffer
	}
	if o.Timeout == 0 {
		o.Timeout = prev.Timeout
	}
	if o.RefreshInterval == 0 {
		o.RefreshInterval = prev.RefreshInterval
	}
	if o.Tick == nil {
		o.Tick = prev.Tick
	}
	if o.Now == nil {
		o.Now = prev.Now
	}
	if o.Clusters == nil {
		o.Clusters = prev.Clusters
	}
	if o.Location == nil {
		o.Location = prev.Location
	}
	return o
}

// ctxCommand is :ctx: with no name the list of clusters, with one a switch
// to it.
func (m *Model) ctxCommand(name string) tea.Cmd {
	clusters := m.opts.Clusters
	if clusters == nil {
		return m.setFlash(noClusters, true)
	}
	if name == "" {
		m.helpShown, m.clustersShown = false, true
		m.clusters.Loading()
	}
	c := m.common
	return func() tea.Msg {
		ctx, cancel := c.Context()
		defer cancel()
		list, err := clusters.List(ctx)
		return clustersListedMsg{want: name, list: list, err: err}
	}
}

// onClusters takes the messages of :ctx; ok is false for any other.
func (m *Model) onClusters(msg tea.Msg) (cmd tea.Cmd, ok bool) {
	switch msg := msg.(type) {
	case clustersListedMsg:
		return m.onListed(msg), true
	case contexts.SwitchMsg:
		m.clustersShown = false
		return m.pick(m.listed, msg.Name), true
	case contexts.CloseMsg:
		m.clustersShown = false
		return nil, true
	case clusterOpenedMsg:
		return m.switchTo(msg), true
	case tea.MouseMsg:
		if m.clustersShown {
			return m.clusters.Update(msg), true
		}
	}
	return nil, false
}

func (m *Model) onListed(msg clustersListedMsg) tea.Cmd {
	if msg.err != nil {
		if msg.want == "" {
			m.clustersShown = false
		}
		return m.setFlash("cannot list the clusters: "+msg.err.Error(), true)
	}
	if msg.want != "" {
		return m.pick(msg.list, msg.want)
	}
	m.listed = msg.list
	rows := make([]contexts.Cluster, len(msg.list))
	for i, c := range msg.list {
		rows[i] = contexts.Cluster{Name: c.Name, What: c.What, Current: c.Current}
	}
	m.clusters.Set(rows)
	return nil
}

// pick switches to the cluster of list named name, unless it is the one
// shown or a switch is under way.
func (m *Model) pick(list []NamedCluster, name string) tea.Cmd {
	i := slices.IndexFunc(list, func(c NamedCluster) bool { return c.Name == name })
	switch {
	case i < 0:
		names := make([]string, len(list))
		for i, c := range list {
			names[i] = c.Name
		}
		return m.setFlash(fmt.Sprintf("no cluster named %q; :ctx lists %s", name, strings.Join(names, ", ")), true)
	case list[i].Current:
		return m.setFlash(name+" is the cluster shown", false)
	case m.switching != "":
		return m.setFlash("still switching to "+m.switching+"…", true)
	}
	return m.openCluster(name)
}

// openCluster opens name off the Update goroutine, as it may dial for
// seconds; the flash line says so meanwhile.
func (m *Model) openCluster(name string) tea.Cmd {
	m.switching = name
	clusters, ctx, o := m.opts.Clusters, m.parent, m.owner
	return tea.Batch(m.setFlash("switching to "+name+"…", false), func() tea.Msg {
		opts, closeFn, err := clusters.Open(ctx, name)
		if err == nil && opts.Source == nil {
			err = errors.New("it gave no source to read")
			if closeFn != nil {
				closeFn()
			}
		}
		if err != nil {
			return clusterOpenedMsg{name: name, err: err}
		}
		if !o.pend(closeFn) {
			return nil
		}
		return clusterOpenedMsg{name: name, opts: opts}
	})
}

// switchTo replaces the app by one on the cluster opened, in the terminal's
// size, on its browse screen. The old cluster's reads and watch are
// cancelled before its closeFn runs; an error leaves it as it was.
func (m *Model) switchTo(msg clusterOpenedMsg) tea.Cmd {
	m.switching = ""
	if msg.err != nil {
		return m.setFlash(fmt.Sprintf("cannot switch to %s: %v", msg.name, msg.err), true)
	}
	opts := msg.opts.carry(m.opts)
	m.cancel()
	m.owner.switched()
	m.epoch++
	m.shown = msg.name
	m.build(opts)
	flash := "switched to " + msg.name
	if m.recordsAnother() {
		flash += fmt.Sprintf("; record %s goes on recording %s", m.recorder.File, m.recorder.Cluster)
	}
	return tea.Batch(m.init(), m.setFlash(flash, false))
}

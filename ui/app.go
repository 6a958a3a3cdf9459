// Package ui is the terminal UI, seven screens listed once, in the table
// of screens (screens.go): browse the /registry tree beside the object
// pane (or an object's owners and dependents in their place), tail the
// watch stream, walk an object's history, watch the members, follow
// writes down the write path, see what fills etcd (space) and what changed
// in a window of revisions (timeline). Each pane is a package of its own;
// the app sizes them, routes messages to them and performs the intents
// they return. :ctx lists the clusters Options.Clusters offers, and
// switches the whole app to another one without restarting (switch.go).
package ui

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/decode/table"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/ui/changes"
	"github.com/etcdscope/etcdscope/ui/cluster"
	"github.com/etcdscope/etcdscope/ui/common"
	"github.com/etcdscope/etcdscope/ui/contexts"
	"github.com/etcdscope/etcdscope/ui/history"
	"github.com/etcdscope/etcdscope/ui/manifest"
	"github.com/etcdscope/etcdscope/ui/space"
	"github.com/etcdscope/etcdscope/ui/tail"
	"github.com/etcdscope/etcdscope/ui/tree"
	"github.com/etcdscope/etcdscope/ui/writepath"
)

// Members stops and restarts members of the bundled cluster.
// *embedded.Cluster does it by index; the caller adapts it by name.
type Members interface {
	StopMember(name string) error
	RestartMember(ctx context.Context, name string) error
}

// Options configure the UI.
type Options struct {
	Source etcdview.Source
	// Description names the source in the header: "bundled 3-member
	// cluster", "etcd at ...", "data file ...".
	Description string
	// Export are the shell assignments that point etcdctl at the source
	// (ETCDCTL_ENDPOINTS=...), shown on the cluster screen as an export
	// line to copy; nil shows none.
	Export []string
	// Members is nil outside bundled mode; MembersOff then says why k and
	// r do nothing.
	Members    Members
	MembersOff string
	// TailBuffer is the tail's ring size; 0 means DefaultTailBuffer.
	TailBuffer int
	// Timeout bounds each read; 0 means etcdview.DefaultCommandTimeout.
	Timeout time.Duration
	Decoder decode.Decoder
	// RefreshInterval is how often the members' status is read; 0 means
	// every second.
	RefreshInterval time.Duration
	// WritePath feeds the write-path screen: the API server's write
	// trace, the watchers that reacted, each member's applied index. Its
	// zero value (no API server) leaves the screen with WritePath.Note.
	WritePath writepath.Feed
	// Tick makes the UI's timers; nil is tea.Tick (see common.Common).
	Tick common.Tick
	// Errors are failures of what runs beside the source, the bundled
	// control plane and demo: each shows in the flash line as an error.
	Errors <-chan error
	// ControlPlaneReady closes when the bundled control plane answers
	// /readyz; the header says whether it has. Nil when none runs.
	ControlPlaneReady <-chan struct{}
	// Resolve finds the resource of a leaf level of the tree, for its
	// columns; nil knows the built-in resources only (cli passes one that
	// reads CRDs too).
	Resolve table.Resolver
	// Now is the UI's clock: the tree's AGE counts to it, the header's
	// event rate is measured on it; nil is time.Now.
	Now func() time.Time
	// Rev opens the explorer as of this revision, as :rev does; 0 is the
	// newest.
	Rev int64
	// Clusters are what :ctx lists and switches to; nil offers none.
	Clusters Clusters
	// Recording is the recorder the explorer runs (--record); nil when
	// none. New's alone: it records the first cluster across switches.
	Recording *Recording
	// Location is the zone a recording's times are shown and typed in
	// (:at); nil is time.Local, the user's clock.
	Location *time.Location
}

// DefaultTailBuffer is the tail's ring size when Options gives none.
const DefaultTailBuffer = 10000

// flashFor is how long a flash message stays.
const flashFor = 6 * time.Second

// Model is the root model.
type Model struct {
	common common.Common
	opts   Options
	keys   KeyMap

	// screens is the table of screens (screens.go); screen is the one in
	// front. The fields below hold the same panes typed, for what the app
	// asks of one of them: the tail's ring, a history to open. A screen
	// the app asks nothing of has no field (write path).
	screens []screen
	screen  Screen

	browse   *browse
	tail     *tail.Model
	history  *history.Model
	cluster  *cluster.Model
	timeline *changes.Model
	space    *space.Model

	// rec is the time line of a recording; nil on any other source.
	rec *recording
	// recorder is the explorer's recorder (Options.Recording of the first
	// cluster), kept across switches; nil when none runs. shown is the
	// name of the cluster shown once :ctx switched, "" before.
	recorder *recorder
	shown    string

	flash    string
	flashErr bool
	// controlPlaneReady is set once Options.ControlPlaneReady closed.
	controlPlaneReady bool
	flashGen          int
	flashSeq          uint64 // common.FlashMsg.Seq's when the flash line last changed

	commanding bool
	input      textinput.Model
	helpShown  bool // the help screen is up
	help       help.Model

	rate rateMeter
	// treeSeen is the tail's event count when the tree last reloaded.
	treeSeen uint64

	// parent is the UI's context; the reads of the cluster shown run on
	// a child of it (common.Ctx), which cancel ends when the explorer
	// switches away or the program ends.
	parent context.Context
	cancel context.CancelFunc
	// epoch counts the switches: each message carries the epoch of the
	// command that made it (switch.go), and Update drops earlier ones.
	epoch int
	owner *owner

	clusters      *contexts.Model // the list :ctx opens
	clustersShown bool
	// restore is the restore pane u opens over history or browse.
	restore      *manifest.Model
	restoreShown bool
	listed       []NamedCluster // what the list shows
	switching    string         // the cluster being opened

	width, height int
}

// New builds the UI on opts.Source, which the caller closes after Run;
// the UI closes only the clusters Options.Clusters opens.
func New(ctx context.Context, opts Options) *Model {
	m := &Model{parent: ctx, owner: new(owner)}
	if opts.Recording != nil {
		m.recorder = &recorder{Recording: opts.Recording}
	}
	m.build(opts)
	return m
}

// build makes m the app on opts.Source, in m's context, epoch and terminal
// size: New's, and a switch's, which replaces every pane.
func (m *Model) build(opts Options) {
	if opts.TailBuffer <= 0 {
		opts.TailBuffer = DefaultTailBuffer
	}
	ctx, cancel := context.WithCancel(m.parent)
	c := common.Common{Ctx: ctx, Src: opts.Source, Styles: common.DefaultStyles(), Timeout: opts.Timeout, Decoder: opts.Decoder, Tick: opts.Tick}
	keys := DefaultKeyMap()
	*m = Model{
		parent: m.parent, cancel: cancel, epoch: m.epoch, owner: m.owner, width: m.width, height: m.height,
		recorder: m.recorder, shown: m.shown,
		common: c, opts: opts, keys: keys, input: common.NewInput(":"), help: newHelp(c.Styles),
		browse: newBrowse(c, keys, tree.Options{Resolve: opts.Resolve, Now: opts.Now}), tail: tail.New(c, opts.TailBuffer, opts.Resolve),
		history: history.New(c), cluster: cluster.New(c, opts.RefreshInterval, opts.Export),
		timeline: changes.New(c), space: space.New(c), clusters: contexts.New(c.Styles),
		restore: manifest.New(c),
	}
	m.screens = m.newScreens()
	m.focus()
	if m.width > 0 {
		m.layout()
	}
}

// flashMsg ends flash number gen.
type clearFlashMsg struct{ gen int }

// revCheckedMsg says whether revision rev can be read, and when it
// arrived on a recording. stay keeps the screen in front (a move on the
// time line); :rev shows browse.
type revCheckedMsg struct {
	rev  int64
	at   time.Time
	stay bool
	err  error
}

// failedMsg is a failure read from Options.Errors.
type failedMsg struct{ err error }

// controlPlaneReadyMsg says Options.ControlPlaneReady closed.
type controlPlaneReadyMsg struct{}

// memberDoneMsg reports a stop or restart.
type memberDoneMsg struct {
	what, name string
	err        error
}

// Init starts the watch and what each screen starts with: the tree's root
// level, the members' status, the write path's feed.
// The recorder's end is awaited once, outside the epochs: it outlives a
// switch.
func (m *Model) Init() tea.Cmd { return tea.Batch(tagged(m.epoch, m.init()), m.awaitRecording()) }

func (m *Model) init() tea.Cmd {
	cmds := []tea.Cmd{m.tail.Start(), m.awaitFailure(), m.awaitControlPlane(), m.readRecording()}
	for _, s := range m.screens {
		if p, ok := s.pane.(initer); ok {
			cmds = append(cmds, p.Init())
		}
	}
	if m.opts.Rev > 0 {
		cmds = append(cmds, m.revCommand([]string{strconv.FormatInt(m.opts.Rev, 10)}))
	}
	return tea.Batch(cmds...)
}

// awaitControlPlane waits for Options.ControlPlaneReady.
func (m *Model) awaitControlPlane() tea.Cmd {
	ready, done := m.opts.ControlPlaneReady, m.common.Ctx.Done()
	if ready == nil {
		return nil
	}
	return func() tea.Msg {
		select {
		case <-ready:
			return controlPlaneReadyMsg{}
		case <-done:
			return nil
		}
	}
}

// awaitFailure waits for the next of Options.Errors; it ends with them,
// or with the cluster's reads.
func (m *Model) awaitFailure() tea.Cmd {
	errs, done := m.opts.Errors, m.common.Ctx.Done()
	if errs == nil {
		return nil
	}
	return func() tea.Msg {
		select {
		case err, ok := <-errs:
			if ok {
				return failedMsg{err}
			}
		case <-done:
		}
		return nil
	}
}

// Update routes: keys to the pane in front, intents to the app, answers to
// every pane (each knows its own message types). A message made for a
// cluster the explorer switched away from is dropped.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if t, ok := msg.(epochMsg); ok {
		if t.epoch != m.epoch {
			return m, nil
		}
		msg = t.msg
	}
	return m, tagged(m.epoch, m.update(msg))
}

func (m *Model) update(msg tea.Msg) tea.Cmd {
	if cmd, ok := m.onClusters(msg); ok {
		return cmd
	}
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.layout()
		return nil
	case tea.KeyMsg:
		return m.onKeys(msg)
	case tea.MouseMsg:
		if m.restoreShown {
			return m.restore.Update(msg)
		}
		return m.active().Update(msg)
	case common.RestoreMsg:
		return m.openRestore(msg)
	case manifest.CloseMsg:
		m.restoreShown = false
		m.focus()
		return nil
	case manifest.LoadedMsg:
		return m.restore.Update(msg)
	case common.FlashMsg:
		if msg.Seq != 0 && msg.Seq < m.flashSeq {
			return nil // a newer flash was asked for since
		}
		return m.showFlash(msg.Text, msg.Err, msg.Seq)
	case clearFlashMsg:
		if msg.gen == m.flashGen {
			m.flash = ""
		}
		return nil
	case common.OpenObjectMsg:
		cmd := m.browse.openObject(msg)
		if msg.Focus {
			m.show(Browse)
		}
		return cmd
	case common.OpenMemberValuesMsg:
		m.show(Browse)
		return m.browse.openValues(msg)
	case common.OpenHistoryMsg:
		m.show(History)
		return m.history.Open(msg.Key, msg.Rev)
	case common.TailPrefixMsg:
		m.show(Tail)
		return m.tail.Update(msg)
	case common.StopMemberMsg:
		return m.memberCmd("stop", msg.Name)
	case common.RestartMemberMsg:
		return m.memberCmd("restart", msg.Name)
	case memberDoneMsg:
		if msg.err != nil {
			return m.setFlash(fmt.Sprintf("%s %s: %v", msg.what, msg.name, msg.err), true)
		}
		return m.setFlash(fmt.Sprintf("%s %s: done", msg.what, msg.name), false)
	case failedMsg:
		return tea.Batch(m.setFlash(msg.err.Error(), true), m.awaitFailure())
	case controlPlaneReadyMsg:
		m.controlPlaneReady = true
		return nil
	case revCheckedMsg:
		return m.onRev(msg)
	case recordingMsg:
		return m.onRecording(msg)
	case recordEndedMsg:
		return m.onRecordEnded(msg)
	case tail.PlayedMsg:
		return m.onPlayed(msg)
	case cluster.StatusMsg:
		m.rate.observe(m.now(), m.tail.Ring().Total())
		m.space.SetStatus(msg.Cluster, msg.Err, msg.At)
		return tea.Batch(m.autoReload(msg.At), m.broadcast(msg))
	case tail.BatchesMsg:
		// The space screen's live rates come from the tail's watch: the
		// same batches, no second watch on etcd.
		m.space.Observe(msg.Batches, time.Now())
		cmd := m.broadcast(msg)
		m.rate.observe(m.now(), m.tail.Ring().Total())
		return cmd
	}
	return m.broadcast(msg)
}

// onKeys takes a key message as the terminal read it. Keys typed fast,
// pasted, or batched by a slow link arrive in one read, and bubbletea hands
// the printable runes of a read over as one message (detectOneMsg, in its
// key.go), which no binding matches. Each rune is then a key of its own,
// until a text input has the focus: it takes the rest whole, as typed text.
func (m *Model) onKeys(msg tea.KeyMsg) tea.Cmd {
	if msg.Type != tea.KeyRunes || len(msg.Runes) < 2 || msg.Alt {
		return m.onKey(msg)
	}
	var cmds []tea.Cmd
	for i, r := range msg.Runes {
		if m.typing() {
			rest := msg
			rest.Runes = msg.Runes[i:]
			return tea.Batch(append(cmds, m.onKey(rest))...)
		}
		cmds = append(cmds, m.onKey(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}}))
	}
	return tea.Batch(cmds...)
}

// typing is true while a text input has the keys: the command line or a
// pane's filter.
func (m *Model) typing() bool { return m.commanding || m.capturing() }

func (m *Model) onKey(msg tea.KeyMsg) tea.Cmd {
	switch {
	case msg.Type == tea.KeyCtrlC:
		return tea.Quit
	case m.commanding:
		return m.commandKey(msg)
	case m.helpShown:
		if key.Matches(msg, m.keys.Help, m.keys.Back, m.keys.Quit) {
			m.helpShown = false
		}
		return nil
	case m.clustersShown && m.clusters.Takes(msg):
		return m.clusters.Update(msg)
	case m.restoreShown && m.restore.Takes(msg):
		return m.restore.Update(msg)
	case m.capturing():
		return m.active().Update(msg)
	case key.Matches(msg, m.keys.Quit):
		return tea.Quit
	case key.Matches(msg, m.keys.Help):
		m.helpShown = true
		return nil
	case key.Matches(msg, m.keys.Command):
		m.commanding = true
		m.input.SetValue("")
		return m.input.Focus()
	case key.Matches(msg, m.keys.StepBack, m.keys.StepForward, m.keys.MinuteBack, m.keys.MinuteForward):
		return m.moveKey(msg)
	}
	if cmd, ok := m.screenKey(msg); ok {
		return cmd
	}
	if m.restoreShown {
		// The screen under the restore pane takes no key unseen.
		return nil
	}
	return m.active().Update(msg)
}

func (m *Model) setFlash(text string, isErr bool) tea.Cmd {
	return m.showFlash(text, isErr, common.NextFlashSeq())
}

// showFlash shows the flash numbered seq (common.FlashMsg.Seq; 0 for one
// whose order is not known, which leaves the number as it is).
func (m *Model) showFlash(text string, isErr bool, seq uint64) tea.Cmd {
	m.flash, m.flashErr = text, isErr
	m.flashSeq = max(m.flashSeq, seq)
	m.flashGen++
	gen := m.flashGen
	return m.common.After(flashFor, func(time.Time) tea.Msg { return clearFlashMsg{gen} })
}

func (m *Model) memberCmd(what, name string) tea.Cmd {
	if m.opts.Members == nil {
		return m.setFlash(m.opts.MembersOff, true)
	}
	members, ctx := m.opts.Members, m.common.Ctx
	flash := m.setFlash(fmt.Sprintf("%sing %s…", what, name), false)
	return tea.Batch(flash, func() tea.Msg {
		var err error
		if what == "stop" {
			err = members.StopMember(name)
		} else {
			err = members.RestartMember(ctx, name)
		}
		return memberDoneMsg{what: what, name: name, err: err}
	})
}

// autoReload reads the open tree level again when writes arrived since it
// was read, as k9s refreshes its views, at the pace the tree allows.
func (m *Model) autoReload(now time.Time) tea.Cmd {
	total := m.tail.Ring().Total()
	if total == m.treeSeen || !m.browse.tree.ReloadDue(now) {
		return nil
	}
	m.treeSeen = total
	return m.browse.tree.Reload()
}

func (m *Model) now() time.Time {
	if m.opts.Now != nil {
		return m.opts.Now()
	}
	return time.Now()
}

func (m *Model) onRev(msg revCheckedMsg) tea.Cmd {
	if msg.err != nil {
		return m.setFlash(fmt.Sprintf("cannot read revision %d: %v", msg.rev, msg.err), true)
	}
	cmd := tea.Batch(m.browse.setRev(msg.rev), m.setPosition(msg.rev, msg.at))
	if msg.stay {
		return cmd
	}
	m.show(Browse)
	if msg.rev == 0 {
		return tea.Batch(cmd, m.setFlash("back to the newest revision", false))
	}
	return tea.Batch(cmd, m.setFlash(fmt.Sprintf("browsing as of revision %d; :rev head returns", msg.rev), false))
}

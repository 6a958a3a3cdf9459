package ui

import (
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/etcdscope/etcdscope/ui/common"
	"github.com/etcdscope/etcdscope/ui/members"
	"github.com/etcdscope/etcdscope/ui/object"
	"github.com/etcdscope/etcdscope/ui/owners"
	"github.com/etcdscope/etcdscope/ui/tree"
)

// browse is the browse screen: the tree beside the object pane, the tree
// alone while it is wide (w), or in their place the owners view while it
// is open (O) or each member's value of a key (from check members on the
// cluster screen). Keys go to one of them; every other message to all.
type browse struct {
	styles *common.Styles
	keys   KeyMap

	tree   *tree.Model
	object *object.Model
	owners *owners.Model
	values *members.Model

	// rev is the revision browsed (:rev, --rev); 0 is the newest.
	rev         int64
	objectFocus bool // the object pane has the keys
	ownersShown bool
	valuesShown bool
	focused     bool // browse is the screen in front

	width, height int
}

func newBrowse(c common.Common, keys KeyMap, opts tree.Options) *browse {
	return &browse{styles: c.Styles, keys: keys, tree: tree.New(c, opts), object: object.New(c), owners: owners.New(c), values: members.New(c)}
}

// Init reads the tree's root level.
func (b *browse) Init() tea.Cmd { return b.tree.Init() }

// treeWidth is the tree's share of the width: 2/5, or all of it while it
// is wide (w).
func (b *browse) treeWidth() int {
	if b.tree.Wide() {
		return b.width
	}
	return max(24, b.width*2/5)
}

// SetSize shares the width between the tree and the object pane; the
// owners view has all of it.
func (b *browse) SetSize(w, h int) {
	b.width, b.height = w, h
	tw := b.treeWidth()
	b.tree.SetSize(tw, h)
	b.object.SetSize(max(w-tw-1, 1), h)
	b.owners.SetSize(w, h)
	b.values.SetSize(w, h)
}

// Focus gives the keys to the tree, the object pane or the owners view,
// whichever is in front, while on.
func (b *browse) Focus(on bool) {
	b.focused = on
	b.tree.Focus(on && !b.objectFocus)
	b.object.Focus(on && b.objectFocus)
	b.owners.Focus(on && b.ownersShown)
	b.values.Focus(on && b.valuesShown)
}

// active is the one of the three that has the keys.
func (b *browse) active() common.Component {
	if b.valuesShown {
		return b.values
	}
	if b.ownersShown {
		return b.owners
	}
	if b.objectFocus {
		return b.object
	}
	return b.tree
}

// Capturing is true while the tree's filter takes every key.
func (b *browse) Capturing() bool { return !b.objectFocus && b.tree.Capturing() }

// ShortHelp is the keys of the one in front, and tab while the object pane
// is beside the tree.
func (b *browse) ShortHelp() []key.Binding {
	bindings := b.active().ShortHelp()
	if !b.ownersShown && !b.valuesShown && !b.tree.Wide() {
		bindings = append(bindings, b.keys.Tab)
	}
	return bindings
}

// FullHelp is every binding of the three.
func (b *browse) FullHelp() [][]key.Binding {
	return append(append(b.tree.FullHelp(), b.object.FullHelp()...), b.ownersHelp().bindings...)
}

// helpSections are the tree's and the object pane's blocks of the help
// screen; the owners view's comes last, after every screen's (ownersHelp).
func (b *browse) helpSections() []helpSection {
	return []helpSection{{"browse: tree", append(b.tree.FullHelp(), []key.Binding{b.keys.Restore})}, {"browse: object", b.object.FullHelp()}}
}

func (b *browse) ownersHelp() helpSection {
	return helpSection{"browse: owners", append([][]key.Binding{{b.keys.Owners}}, b.owners.FullHelp()...)}
}

func (b *browse) View() string {
	if b.valuesShown {
		return b.values.View()
	}
	if b.ownersShown {
		return b.owners.View()
	}
	if b.tree.Wide() {
		return b.tree.View()
	}
	sep := strings.TrimSuffix(strings.Repeat(b.styles.Separator.Render("│")+"\n", b.height), "\n")
	return lipgloss.JoinHorizontal(lipgloss.Top, common.Box(b.tree.View(), b.treeWidth(), b.height), sep, b.object.View())
}

func (b *browse) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.KeyMsg:
		return b.onKey(msg)
	case tea.MouseMsg:
		return b.onMouse(msg)
	case tree.WideMsg:
		b.SetSize(b.width, b.height)
		return nil
	case owners.CloseMsg:
		b.ownersShown = false
		b.Focus(b.focused)
		return nil
	case members.CloseMsg:
		b.valuesShown = false
		b.Focus(b.focused)
		return nil
	}
	return tea.Batch(b.tree.Update(msg), b.object.Update(msg), b.owners.Update(msg), b.values.Update(msg))
}

func (b *browse) onKey(msg tea.KeyMsg) tea.Cmd {
	switch {
	case b.valuesShown || b.ownersShown || b.Capturing():
		return b.active().Update(msg)
	case key.Matches(msg, b.keys.Owners):
		return b.openOwners()
	case key.Matches(msg, b.keys.Restore):
		return b.restore()
	case !b.tree.Wide() && key.Matches(msg, b.keys.Tab):
		b.objectFocus = !b.objectFocus
		b.Focus(b.focused)
		return nil
	case b.objectFocus && key.Matches(msg, b.keys.Back):
		b.objectFocus = false
		b.Focus(b.focused)
		return nil
	case !b.objectFocus:
		if cmd, ok := b.objectView(msg); ok {
			return cmd
		}
	}
	return b.active().Update(msg)
}

func (b *browse) onMouse(msg tea.MouseMsg) tea.Cmd {
	switch {
	case b.valuesShown || b.ownersShown:
		return b.active().Update(msg)
	case msg.X < b.treeWidth():
		// The wheel scrolls the pane under the pointer.
		return b.tree.Update(msg)
	}
	return b.object.Update(msg)
}

// flashErr is a command that puts text in the app's flash line as an error.
func flashErr(text string) tea.Cmd { return common.Send(common.FlashMsg{Text: text, Err: true}) }

// objectViews are the object pane's keys that switch what it shows of the
// object, and what each says on a directory row of the tree.
var objectViews = func() []struct {
	key  key.Binding
	what string
} {
	k := object.DefaultKeyMap()
	return []struct {
		key  key.Binding
		what string
	}{
		{k.YAML, "y shows an object as YAML"},
		{k.JSON, "o shows an object as JSON"},
		{k.Raw, "b shows an object's bytes"},
		{k.Meta, "e shows a key's etcd metadata"},
		{k.ManagedFields, "m shows an object's managedFields"},
		{k.Secrets, "x reveals a Secret's data"},
	}
}()

// objectView takes one of objectViews pressed in the tree: the object
// pane, which shows the selected key, acts on it as if it had the focus;
// on a directory the flash line says why nothing changed. ok is false for
// any other key.
func (b *browse) objectView(msg tea.KeyMsg) (cmd tea.Cmd, ok bool) {
	for _, v := range objectViews {
		if !key.Matches(msg, v.key) {
			continue
		}
		// While the tree moves to a key, its selection is the old one;
		// the object pane already has the key.
		switch {
		case b.tree.Wide():
			return flashErr(v.what + " in the object pane: w brings it back"), true
		case b.tree.SelectedKey() == "" && !b.tree.Moving():
			return flashErr(v.what + ": select a key, not a directory"), true
		}
		return b.object.Update(msg), true
	}
	return nil, false
}

// openObject shows the object msg names in the object pane; with Focus
// the object pane has the keys, the tree moved to the object's level with
// its key selected, as k9s lands on a resource opened from elsewhere.
func (b *browse) openObject(msg common.OpenObjectMsg) tea.Cmd {
	rev := msg.Rev
	if rev == 0 {
		rev = b.rev
	}
	if !msg.Focus {
		return b.object.Open(msg.Key, rev)
	}
	b.objectFocus, b.ownersShown, b.valuesShown = true, false, false
	b.Focus(b.focused)
	cmds := []tea.Cmd{b.tree.SetWide(false), b.object.Open(msg.Key, rev)}
	if b.tree.SelectedKey() != msg.Key {
		cmds = append(cmds, b.tree.GoTo(msg.Key))
	}
	return tea.Batch(cmds...)
}

// goTo shows a prefix in the tree, or a key in the tree and the object
// pane, the tree having the keys.
func (b *browse) goTo(path string) tea.Cmd {
	b.objectFocus = false
	b.Focus(b.focused)
	cmds := []tea.Cmd{b.tree.GoTo(path)}
	if !strings.HasSuffix(path, "/") {
		cmds = append(cmds, b.object.Open(path, b.rev))
	}
	return tea.Batch(cmds...)
}

// setRev browses as of rev (0: the newest): the tree's level and the
// object are read again.
func (b *browse) setRev(rev int64) tea.Cmd {
	b.rev = rev
	cmds := []tea.Cmd{b.tree.SetRev(rev)}
	if k := b.object.Key(); k != "" {
		cmds = append(cmds, b.object.Open(k, rev))
	}
	return tea.Batch(cmds...)
}

// restore asks for the restore pane of the object in browse, as of the
// past revision browsed: at the newest there is nothing to bring back.
func (b *browse) restore() tea.Cmd {
	if b.rev == 0 {
		return flashErr("u restores an object as it was: :rev R first, or u on a row of its history (h)")
	}
	key := b.objectKey()
	if key == "" {
		return flashErr("u restores an object: select a key, not a directory")
	}
	return common.Send(common.RestoreMsg{Key: key, Rev: b.rev})
}

// objectKey is the key of the object in browse: the tree's selected key,
// or the object pane's when that has the focus; "" on a directory.
func (b *browse) objectKey() string {
	// While the tree moves to a key (:key, a jump from another screen),
	// its selection is the old one; the object pane already has the key.
	key := b.object.Key()
	if ch, ok := b.tree.Selected(); ok && !b.objectFocus && !b.tree.Moving() {
		key = ch.Prefix
		if ch.Dir {
			key = ""
		}
	}
	return key
}

// openValues shows each member's value of the key msg names in place of
// the tree, which moves to the key meanwhile: esc lands on it in browse.
func (b *browse) openValues(msg common.OpenMemberValuesMsg) tea.Cmd {
	b.valuesShown, b.objectFocus = true, false
	b.Focus(b.focused)
	return tea.Batch(b.values.Open(msg.Key, msg.Rev), b.goTo(msg.Key))
}

// openOwners shows the owners view for the object in browse: the tree's
// selected key, or the object pane's when that has the focus.
func (b *browse) openOwners() tea.Cmd {
	key := b.objectKey()
	if key == "" {
		return flashErr("O shows the owners of an object: select a key, not a directory")
	}
	b.ownersShown, b.valuesShown = true, false
	b.Focus(b.focused)
	return b.owners.Open(key, b.rev)
}

package ui

import (
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/etcdscope/etcdscope/ui/common"
	"github.com/etcdscope/etcdscope/ui/object"
)

// What the browse screen does for the panes: an object opened from another
// screen shown in its place in the tree, and the object pane's keys
// pressed in the tree.

// openObject shows the object msg names in the object pane; with Focus it
// is the browse screen's, the tree moved to the object's level with its
// key selected, as k9s lands on a resource opened from elsewhere.
func (m *Model) openObject(msg common.OpenObjectMsg) tea.Cmd {
	rev := msg.Rev
	if rev == 0 {
		rev = m.rev
	}
	if !msg.Focus {
		return m.object.Open(msg.Key, rev)
	}
	m.screen, m.objectFocus, m.ownersShown = Browse, true, false
	m.focus()
	cmds := []tea.Cmd{m.tree.SetWide(false), m.object.Open(msg.Key, rev)}
	if m.tree.SelectedKey() != msg.Key {
		cmds = append(cmds, m.tree.GoTo(msg.Key))
	}
	return tea.Batch(cmds...)
}

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
func (m *Model) objectView(msg tea.KeyMsg) (cmd tea.Cmd, ok bool) {
	for _, v := range objectViews {
		if !key.Matches(msg, v.key) {
			continue
		}
		// While the tree moves to a key, its selection is the old one;
		// the object pane already has the key.
		switch {
		case m.tree.Wide():
			return m.setFlash(v.what+" in the object pane: w brings it back", true), true
		case m.tree.SelectedKey() == "" && !m.tree.Moving():
			return m.setFlash(v.what+": select a key, not a directory", true), true
		}
		return m.object.Update(msg), true
	}
	return nil, false
}

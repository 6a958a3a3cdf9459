package object

import (
	"github.com/charmbracelet/bubbles/key"
	"github.com/etcdscope/etcdscope/ui/common"
)

// KeyMap are the keys of the object pane.
type KeyMap struct {
	common.NavKeyMap
	YAML, JSON, Raw, Meta  key.Binding
	ManagedFields, Secrets key.Binding
	Fold, FoldAll, History key.Binding
}

// DefaultKeyMap is the object pane's keys.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		NavKeyMap:     common.DefaultNavKeyMap(),
		YAML:          key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "yaml")),
		JSON:          key.NewBinding(key.WithKeys("o"), key.WithHelp("o", "json")),
		Raw:           key.NewBinding(key.WithKeys("b"), key.WithHelp("b", "raw bytes")),
		Meta:          key.NewBinding(key.WithKeys("e"), key.WithHelp("e", "etcd metadata")),
		ManagedFields: key.NewBinding(key.WithKeys("m"), key.WithHelp("m", "managedFields")),
		Secrets:       key.NewBinding(key.WithKeys("x"), key.WithHelp("x", "reveal secrets")),
		Fold:          key.NewBinding(key.WithKeys("z", " "), key.WithHelp("z", "fold section")),
		FoldAll:       key.NewBinding(key.WithKeys("Z"), key.WithHelp("Z", "fold all")),
		History:       key.NewBinding(key.WithKeys("h"), key.WithHelp("h", "history")),
	}
}

// ShortHelp is what the footer shows.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Fold, k.YAML, k.JSON, k.Raw, k.Meta, k.ManagedFields, k.Secrets, k.History}
}

// FullHelp is what the help screen shows; the movement keys every list
// shares are listed once, by the app.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.YAML, k.JSON, k.Raw, k.Meta},
		{k.Fold, k.FoldAll, k.ManagedFields, k.Secrets, k.History},
	}
}

package ui

import (
	"strings"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/etcdscope/etcdscope/ui/common"
)

// newHelp is bubbles' help in the UI's styles, its short form spaced as
// k9s spaces its key hints.
func newHelp(s *common.Styles) help.Model {
	h := help.New()
	h.ShortSeparator = "  "
	h.Styles = help.Styles{
		Ellipsis: s.Desc, ShortKey: s.Key, ShortDesc: s.Desc, ShortSeparator: s.Desc,
		FullKey: s.Key, FullDesc: s.Desc, FullSeparator: s.Desc,
	}
	return h
}

// footer is the keys of the pane in front and the global ones; those that
// do not fit give way to an ellipsis.
func (m *Model) footer() string {
	front := m.active().ShortHelp()
	switch {
	case m.clustersShown:
		front = m.clusters.ShortHelp()
	case m.restoreShown:
		front = m.restore.ShortHelp()
	}
	bindings := append(front, m.keys.ShortHelp()...)
	h := m.help
	h.Width = m.width
	return h.ShortHelpView(bindings)
}

// helpSection is one titled block of the help screen.
type helpSection struct {
	title    string
	bindings [][]key.Binding
}

// sectioned is a screen whose part of the help screen is more than one
// block: browse, the tree's and the object pane's.
type sectioned interface{ helpSections() []helpSection }

// helpView lists every binding, from the keymaps, in titled blocks laid
// out in columns: the app's, then each screen's in the order of the table,
// then the owners view's, which browse opens over the tree, and the
// clusters list's, which :ctx opens over the screens.
func (m *Model) helpView() string {
	screenKeys := make([]key.Binding, len(m.screens))
	for i, s := range m.screens {
		screenKeys[i] = s.key
	}
	global := append([][]key.Binding{screenKeys}, m.keys.FullHelp()...)
	if m.rec != nil {
		global = append(global, m.keys.timeLineHelp())
	}
	sections := []helpSection{
		{"screens", global},
		{"move (every list)", [][]key.Binding{common.DefaultNavKeyMap().Bindings()}},
		{"command line", [][]key.Binding{commandHelp}},
	}
	for _, s := range m.screens {
		if sec, ok := s.pane.(sectioned); ok {
			sections = append(sections, sec.helpSections()...)
			continue
		}
		sections = append(sections, helpSection{s.name, s.pane.FullHelp()})
	}
	sections = append(sections, m.browse.ownersHelp(), helpSection{"clusters (:ctx)", m.clusters.FullHelp()})
	var blocks [][]string
	for _, sec := range sections {
		blocks = append(blocks, m.helpBlock(sec))
	}
	return m.helpColumns(blocks)
}

// helpBlock is a section's title over its bindings, each group of them as
// one column of keys beside one of descriptions, and a blank row. A group
// has a key column as wide as its own widest key: a long key ("enter") in
// one does not narrow the descriptions of the others.
func (m *Model) helpBlock(sec helpSection) []string {
	block := []string{m.common.Styles.Title.Render(sec.title)}
	for _, g := range sec.bindings {
		// The view pads each row to its widest with spaces after the
		// styles: cut, so that a column too narrow for a long row cuts
		// only that one.
		for _, l := range strings.Split(m.help.FullHelpView([][]key.Binding{g}), "\n") {
			block = append(block, " "+strings.TrimRight(l, " "))
		}
	}
	return append(block, "")
}

// helpColumns fills columns of the body's height with blocks, a block
// never split, each column as wide as its widest row when they all fit,
// else the width shared equally.
func (m *Model) helpColumns(blocks [][]string) string {
	h := m.bodyHeight()
	var cols [][]string
	var col []string
	for _, b := range blocks {
		if len(col) > 0 && len(col)+len(b) > h {
			cols = append(cols, col)
			col = nil
		}
		col = append(col, b...)
	}
	cols = append(cols, col)
	widths := make([]int, len(cols))
	total := 0
	for i, c := range cols {
		for _, l := range c {
			widths[i] = max(widths[i], ansi.StringWidth(l)+2)
		}
		total += widths[i]
	}
	rendered := make([]string, len(cols))
	for i, c := range cols {
		w := widths[i]
		if total > m.width {
			w = m.width / len(cols)
		}
		rendered[i] = common.Box(strings.Join(c, "\n"), w, h)
	}
	return lipgloss.JoinHorizontal(lipgloss.Top, rendered...)
}

package common

import "github.com/charmbracelet/lipgloss"

// Styles are every style the UI draws with. Selection is reverse video, so
// it reads under NO_COLOR too; colour only adds to what text already says.
type Styles struct {
	Title, Faint, Bold lipgloss.Style
	Selected           lipgloss.Style // the cursor row
	Header, Tab        lipgloss.Style
	ActiveTab          lipgloss.Style
	Flash, FlashErr    lipgloss.Style
	Key, Desc          lipgloss.Style // footer and help

	Dir, Count lipgloss.Style

	// YAML tokens.
	YAMLKey, YAMLString, YAMLNumber, YAMLBool, YAMLComment lipgloss.Style

	Added, Modified, Deleted, Note lipgloss.Style
	DiffAdd, DiffDel, DiffHunk     lipgloss.Style
	Leader, Down                   lipgloss.Style
	Separator                      lipgloss.Style
}

// DefaultStyles are the styles of a dark or light 256-colour terminal.
func DefaultStyles() *Styles {
	c := func(s string) lipgloss.Style { return lipgloss.NewStyle().Foreground(lipgloss.Color(s)) }
	return &Styles{
		Title:       lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("39")),
		Faint:       lipgloss.NewStyle().Faint(true),
		Bold:        lipgloss.NewStyle().Bold(true),
		Selected:    lipgloss.NewStyle().Reverse(true),
		Header:      lipgloss.NewStyle(),
		Tab:         lipgloss.NewStyle().Faint(true),
		ActiveTab:   lipgloss.NewStyle().Bold(true).Reverse(true),
		Flash:       c("42"),
		FlashErr:    lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("196")),
		Key:         lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("39")),
		Desc:        lipgloss.NewStyle().Faint(true),
		Dir:         c("39"),
		Count:       lipgloss.NewStyle().Faint(true),
		YAMLKey:     c("75"),
		YAMLString:  c("114"),
		YAMLNumber:  c("215"),
		YAMLBool:    c("177"),
		YAMLComment: lipgloss.NewStyle().Faint(true),
		Added:       c("42"),
		Modified:    c("214"),
		Deleted:     c("196"),
		Note:        lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("201")),
		DiffAdd:     c("42"),
		DiffDel:     c("196"),
		DiffHunk:    c("39"),
		Leader:      lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("220")),
		Down:        lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("196")),
		Separator:   lipgloss.NewStyle().Faint(true),
	}
}

// Selection is the style of the cursor row: reverse video in the pane that
// has the focus, nothing elsewhere (the "> " marker still shows where it is).
func (s *Styles) Selection(focused bool) lipgloss.Style {
	if focused {
		return s.Selected
	}
	return lipgloss.NewStyle()
}

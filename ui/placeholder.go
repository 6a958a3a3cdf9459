// Package ui is the terminal UI.
package ui

import (
	"context"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
)

// StatusFunc fetches the lines the placeholder screen shows, once a second.
type StatusFunc func(ctx context.Context) ([]string, error)

// placeholder is the screen shown until the explorer panes land: the source
// and its members, refreshed every second.
type placeholder struct {
	ctx    context.Context
	source string
	fetch  StatusFunc
	lines  []string
	err    error
}

// statusMsg carries one refresh of the status lines.
type statusMsg struct {
	lines []string
	err   error
}

// tickMsg asks for the next refresh.
type tickMsg struct{}

// RunPlaceholder shows source and the status lines until the user quits.
func RunPlaceholder(ctx context.Context, source string, fetch StatusFunc) error {
	p := tea.NewProgram(placeholder{ctx: ctx, source: source, fetch: fetch}, tea.WithAltScreen(), tea.WithContext(ctx))
	_, err := p.Run()
	if ctx.Err() != nil {
		return nil
	}
	return err
}

func (m placeholder) Init() tea.Cmd { return m.refresh }

func (m placeholder) refresh() tea.Msg {
	ctx, cancel := context.WithTimeout(m.ctx, 2*time.Second)
	defer cancel()
	lines, err := m.fetch(ctx)
	return statusMsg{lines, err}
}

func (m placeholder) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.KeyMsg:
		switch msg.String() {
		case "q", "ctrl+c", "esc":
			return m, tea.Quit
		}
	case statusMsg:
		m.lines, m.err = msg.lines, msg.err
		return m, tea.Tick(time.Second, func(time.Time) tea.Msg { return tickMsg{} })
	case tickMsg:
		return m, m.refresh
	}
	return m, nil
}

var (
	titleStyle = lipgloss.NewStyle().Bold(true)
	errStyle   = lipgloss.NewStyle().Foreground(lipgloss.Color("1"))
	helpStyle  = lipgloss.NewStyle().Faint(true)
)

func (m placeholder) View() string {
	var b strings.Builder
	b.WriteString(titleStyle.Render("etcdscope") + "  " + m.source + "\n\n")
	for _, l := range m.lines {
		b.WriteString(l + "\n")
	}
	if m.err != nil {
		b.WriteString(errStyle.Render(m.err.Error()) + "\n")
	}
	b.WriteString("\n" + helpStyle.Render("q quit"))
	return b.String()
}

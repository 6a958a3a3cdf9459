package ui

import (
	"context"
	"os"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/etcdscope/etcdscope/ui/termquery"
	"github.com/muesli/termenv"
)

// ui imports bubbletea, so this runs after bubbletea's init, which
// termquery kept from querying the terminal.
func init() { termquery.Restore() }

// Run shows the UI until the user quits or ctx ends, then closes the
// clusters Options.Clusters opened; opts.Source stays the caller's.
func Run(ctx context.Context, opts Options) error {
	// The bubbles' adaptive colours need the terminal's background: asked
	// here, before the program takes the terminal (as bubbletea's init
	// would have asked it), and only by the TUI.
	lipgloss.SetHasDarkBackground(termenv.NewOutput(os.Stdout).HasDarkBackground())
	m := New(ctx, opts)
	p := tea.NewProgram(m, tea.WithAltScreen(), tea.WithMouseCellMotion(), tea.WithContext(ctx))
	_, err := p.Run()
	m.end()
	if ctx.Err() != nil {
		return nil
	}
	return err
}

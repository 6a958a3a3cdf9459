package ui

import (
	"context"

	tea "github.com/charmbracelet/bubbletea"
)

// Run shows the UI until the user quits or ctx ends.
func Run(ctx context.Context, opts Options) error {
	p := tea.NewProgram(New(ctx, opts), tea.WithAltScreen(), tea.WithMouseCellMotion(), tea.WithContext(ctx))
	_, err := p.Run()
	if ctx.Err() != nil {
		return nil
	}
	return err
}

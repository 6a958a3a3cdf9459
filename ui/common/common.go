// Package common holds what every pane of the terminal UI shares: the
// Common value (source, context, styles), the Component interface, the
// intents panes send to the app, and the list and text widgets they build on.
package common

import (
	"context"
	"time"

	"github.com/charmbracelet/bubbles/help"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/etcdview"
)

// Common is handed to every pane instead of globals.
type Common struct {
	Ctx    context.Context
	Src    etcdview.Source
	Styles *Styles
	// Timeout bounds each read; 0 means DefaultTimeout.
	Timeout time.Duration
	// Decoder is the base decoder; panes toggle ShowSecrets and
	// ShowManagedFields on their own copy.
	Decoder decode.Decoder
}

// DefaultTimeout bounds one read when Common.Timeout is 0.
const DefaultTimeout = 5 * time.Second

// Context is the context of one read.
func (c Common) Context() (context.Context, context.CancelFunc) {
	t := c.Timeout
	if t == 0 {
		t = DefaultTimeout
	}
	return context.WithTimeout(c.Ctx, t)
}

// Component is a pane: a model the app routes messages to and sizes, whose
// bindings the footer and the help screen list.
type Component interface {
	Update(msg tea.Msg) tea.Cmd
	View() string
	SetSize(width, height int)
	help.KeyMap
}

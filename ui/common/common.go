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
	// Timeout bounds each read; 0 means etcdview.DefaultCommandTimeout.
	Timeout time.Duration
	// Decoder is the base decoder; panes toggle ShowSecrets and
	// ShowManagedFields on their own copy.
	Decoder decode.Decoder
	// Tick makes the timers of the panes (a preview's delay, a refresh);
	// nil is tea.Tick. Model tests pass a uitest.Clock's, so that time
	// passes only when the test says.
	Tick Tick
}

// Tick is tea.Tick's signature: a command that yields fn's message once d
// has passed.
type Tick func(d time.Duration, fn func(time.Time) tea.Msg) tea.Cmd

// After is a command that yields fn's message once d has passed.
func (c Common) After(d time.Duration, fn func(time.Time) tea.Msg) tea.Cmd {
	if c.Tick == nil {
		return tea.Tick(d, fn)
	}
	return c.Tick(d, fn)
}

// Context is the context of one read.
func (c Common) Context() (context.Context, context.CancelFunc) {
	return context.WithTimeout(c.Ctx, c.ReadTimeout())
}

// ReadTimeout bounds one read: a pager's Paging.Timeout, for a read of
// many pages.
func (c Common) ReadTimeout() time.Duration {
	if c.Timeout == 0 {
		return etcdview.DefaultCommandTimeout
	}
	return c.Timeout
}

// Component is a pane: a model the app routes messages to and sizes, whose
// bindings the footer and the help screen list.
type Component interface {
	Update(msg tea.Msg) tea.Cmd
	View() string
	SetSize(width, height int)
	help.KeyMap
}

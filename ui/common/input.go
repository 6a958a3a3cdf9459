package common

import (
	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/textinput"
)

// NewInput is a one-line text field behind prompt: the command line, a
// filter. Its cursor is steady: bubbles' blink is a timer per key typed
// whose message must be routed back to the field, and the app routes only
// keys to it, so a blinking cursor showed steady anyway.
func NewInput(prompt string) textinput.Model {
	in := textinput.New()
	in.Prompt = prompt
	in.Cursor.SetMode(cursor.CursorStatic)
	return in
}

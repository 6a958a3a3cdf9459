package common

import (
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

// NavKeyMap are the movement keys every list and text pane shares, as k9s
// and less spell them.
type NavKeyMap struct {
	Up, Down, Top, Bottom, HalfUp, HalfDown, PageUp, PageDown key.Binding
}

// DefaultNavKeyMap is j/k and the arrows, g/G, ctrl-d/u, pgup/pgdown.
func DefaultNavKeyMap() NavKeyMap {
	return NavKeyMap{
		Up:       key.NewBinding(key.WithKeys("k", "up"), key.WithHelp("k/↑", "up")),
		Down:     key.NewBinding(key.WithKeys("j", "down"), key.WithHelp("j/↓", "down")),
		Top:      key.NewBinding(key.WithKeys("g", "home"), key.WithHelp("g", "top")),
		Bottom:   key.NewBinding(key.WithKeys("G", "end"), key.WithHelp("G", "bottom")),
		HalfUp:   key.NewBinding(key.WithKeys("ctrl+u"), key.WithHelp("ctrl-u", "half page up")),
		HalfDown: key.NewBinding(key.WithKeys("ctrl+d"), key.WithHelp("ctrl-d", "half page down")),
		PageUp:   key.NewBinding(key.WithKeys("pgup", "ctrl+b"), key.WithHelp("pgup", "page up")),
		PageDown: key.NewBinding(key.WithKeys("pgdown", "ctrl+f"), key.WithHelp("pgdn", "page down")),
	}
}

// Bindings lists the keys for help.
func (k NavKeyMap) Bindings() []key.Binding {
	return []key.Binding{k.Up, k.Down, k.Top, k.Bottom, k.HalfDown, k.HalfUp}
}

// Cursor is a position in a list of N rows shown Height at a time, with the
// first visible row Offset. It never looks at the rows themselves, so moving
// costs the same for ten rows or a million.
type Cursor struct {
	Pos, Offset, Height int
}

// Move applies a navigation key (or a mouse wheel) to the cursor over n rows
// and reports whether it was one.
func (c *Cursor) Move(km NavKeyMap, msg tea.Msg, n int) bool {
	switch msg := msg.(type) {
	case tea.KeyMsg:
		half := max(1, c.Height/2)
		switch {
		case key.Matches(msg, km.Up):
			c.Pos--
		case key.Matches(msg, km.Down):
			c.Pos++
		case key.Matches(msg, km.Top):
			c.Pos = 0
		case key.Matches(msg, km.Bottom):
			c.Pos = n - 1
		case key.Matches(msg, km.HalfUp):
			c.Pos -= half
		case key.Matches(msg, km.HalfDown):
			c.Pos += half
		case key.Matches(msg, km.PageUp):
			c.Pos -= max(1, c.Height)
		case key.Matches(msg, km.PageDown):
			c.Pos += max(1, c.Height)
		default:
			return false
		}
	case tea.MouseMsg:
		switch msg.Button {
		case tea.MouseButtonWheelUp:
			c.Pos -= 3
		case tea.MouseButtonWheelDown:
			c.Pos += 3
		default:
			return false
		}
	default:
		return false
	}
	c.Clamp(n)
	return true
}

// Clamp keeps the cursor on one of n rows and visible.
func (c *Cursor) Clamp(n int) {
	c.Pos = min(c.Pos, n-1)
	c.Pos = max(c.Pos, 0)
	h := max(1, c.Height)
	if c.Pos < c.Offset {
		c.Offset = c.Pos
	}
	if c.Pos >= c.Offset+h {
		c.Offset = c.Pos - h + 1
	}
	c.Offset = min(c.Offset, max(0, n-h))
	c.Offset = max(c.Offset, 0)
}

// Window is the range [from, to) of rows to draw.
func (c Cursor) Window(n int) (from, to int) {
	from = min(c.Offset, n)
	return from, min(n, from+max(0, c.Height))
}

// Package placeholder stands in for screens that are not built yet (Compare, History):
// it says what will be there.
package placeholder

import (
	"strings"

	"llmbench/tui/components/panel"
	"llmbench/tui/theme"
)

// KeyMap is empty: a placeholder takes no keys.
type KeyMap struct{}

// Model is a placeholder screen.
type Model struct {
	theme theme.Theme
	w, h  int
	Name  string
	Text  string
}

// New returns a placeholder for the named screen.
func New(t theme.Theme, name, text string) Model {
	return Model{theme: t, Name: name, Text: text, w: 80, h: 22}
}

// SetSize sets the area the screen draws in.
func (m *Model) SetSize(w, h int) { m.w, m.h = w, h }

// View renders the note.
func (m Model) View() string {
	return strings.Join(panel.Lines(panel.Box(m.theme, m.Name, " "+m.Text, m.w, min(m.h, 5)), m.w, m.h), "\n")
}

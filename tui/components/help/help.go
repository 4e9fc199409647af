// Package help draws the full key list that "?" toggles on every screen.
package help

import (
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/lipgloss/v2"

	"llmbench/tui/components/panel"
	"llmbench/tui/theme"
)

// KeyMap holds the key that closes the help.
type KeyMap struct {
	Close key.Binding
}

// DefaultKeyMap returns the help's keys.
func DefaultKeyMap() KeyMap {
	return KeyMap{Close: key.NewBinding(key.WithKeys("?", "esc"), key.WithHelp("?/esc", "close help"))}
}

// Group is a titled list of bindings.
type Group struct {
	Title    string
	Bindings []key.Binding
}

// Model is the help overlay.
type Model struct {
	theme  theme.Theme
	w, h   int
	Keys   KeyMap
	Groups []Group
}

// New returns a help view.
func New(t theme.Theme) Model { return Model{theme: t, Keys: DefaultKeyMap(), w: 80, h: 22} }

// SetSize sets the area the help fills.
func (m *Model) SetSize(w, h int) { m.w, m.h = w, h }

// View renders every group, one binding a line, in a framed box.
func (m Model) View() string {
	t := m.theme
	var b strings.Builder
	kw := 0
	for _, g := range m.Groups {
		for _, k := range g.Bindings {
			kw = max(kw, lipgloss.Width(k.Help().Key))
		}
	}
	for i, g := range m.Groups {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(" " + t.Title.Render(g.Title) + "\n")
		for _, k := range g.Bindings {
			h := k.Help()
			b.WriteString("   " + t.Key.Render(h.Key+strings.Repeat(" ", kw-lipgloss.Width(h.Key))) + "  " + t.KeyDesc.Render(h.Desc) + "\n")
		}
	}
	return panel.Box(t, "Keys (? or esc closes)", b.String(), m.w, m.h)
}

// Package statusbar draws the one header line (product, screen tabs, a summary at the
// right) and the one footer line (the keys that work here) of every screen.
package statusbar

import (
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/lipgloss/v2"

	"llmbench/tui/components/panel"
	"llmbench/tui/theme"
)

// KeyMap is empty: the bars only show keys, they take none.
type KeyMap struct{}

// Model is the header and footer of the screen.
type Model struct {
	theme  theme.Theme
	width  int
	Tabs   []string
	Active int
	Right  string // device or run summary, right-aligned in the header
}

// New returns bars with the given tabs, the first one active.
func New(t theme.Theme, tabs []string) Model { return Model{theme: t, Tabs: tabs, width: 80} }

// SetSize sets the width the bars fill (they are one line each).
func (m *Model) SetSize(w, _ int) { m.width = w }

// Header renders the header line: the active tab is bracketed as well as highlighted.
func (m Model) Header() string {
	t := m.theme
	var b strings.Builder
	b.WriteString(" " + t.Product.Render("llmbench") + " ")
	for i, name := range m.Tabs {
		if i == m.Active {
			b.WriteString(" " + t.TabActive.Render("["+name+"]"))
		} else {
			b.WriteString(" " + t.Tab.Render(" "+name+" "))
		}
	}
	left := b.String()
	room := m.width - lipgloss.Width(left) - 2
	if room < 4 || m.Right == "" {
		return panel.Fit(left, m.width)
	}
	right := t.HeaderRight.Render(panel.Fit(m.Right, min(room, lipgloss.Width(m.Right))))
	gap := m.width - lipgloss.Width(left) - lipgloss.Width(right) - 1
	return panel.Fit(left+strings.Repeat(" ", max(1, gap))+right, m.width)
}

// Footer renders the footer line: the bindings that work on this screen (here),
// then the global ones. When the line is too narrow the screen's last bindings give
// way first, so the global ones (? help above all) always show.
func (m Model) Footer(here []key.Binding, global ...key.Binding) string {
	for {
		s := " " + Keys(m.theme, append(slices.Clone(here), global...)...)
		if lipgloss.Width(s) <= m.width || len(here) == 0 {
			return panel.Fit(s, m.width)
		}
		here = here[:len(here)-1]
	}
}

// Keys renders bindings as "k what  k what", skipping disabled ones.
func Keys(t theme.Theme, bindings ...key.Binding) string {
	var parts []string
	for _, b := range bindings {
		if !b.Enabled() {
			continue
		}
		h := b.Help()
		parts = append(parts, t.Key.Render(h.Key)+" "+t.KeyDesc.Render(h.Desc))
	}
	return strings.Join(parts, "  ")
}

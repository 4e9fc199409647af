// Package help draws the full key list that "?" toggles on every screen, in a
// bubbles viewport that ↑↓ (and pgup/pgdown) scroll when it is taller than the
// screen.
package help

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"llmbench/tui/components/panel"
	"llmbench/tui/theme"
)

// KeyMap holds the keys of the help: close it, scroll it.
type KeyMap struct {
	Close, Scroll key.Binding
}

// DefaultKeyMap returns the help's keys.
func DefaultKeyMap() KeyMap {
	return KeyMap{Close: key.NewBinding(key.WithKeys("?", "esc"), key.WithHelp("?/esc", "close help")),
		Scroll: key.NewBinding(key.WithKeys("up", "down", "pgup", "pgdown"), key.WithHelp("↑↓", "scroll"))}
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
	vp     viewport.Model
}

// New returns a help view.
func New(t theme.Theme) Model {
	vp := viewport.New()
	vp.SoftWrap = true // a long description wraps rather than being cut
	return Model{theme: t, Keys: DefaultKeyMap(), w: 80, h: 22, vp: vp}
}

// SetSize sets the area the help fills.
func (m *Model) SetSize(w, h int) { m.w, m.h = w, h }

// Open shows groups from the top.
func (m *Model) Open(groups []Group) {
	m.Groups = groups
	m.vp.SetYOffset(0)
}

// sync gives the viewport the content and the size of the box's inside.
func (m *Model) sync() {
	m.vp.SetWidth(max(1, m.w-2))
	m.vp.SetHeight(max(1, m.h-2))
	m.vp.SetContent(m.content())
}

// Scrolls reports whether the list is taller than the box (↑↓ scroll it).
func (m Model) Scrolls() bool {
	m.sync()
	return m.vp.TotalLineCount() > m.vp.Height()
}

// Update scrolls the list.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	m.sync()
	var cmd tea.Cmd
	m.vp, cmd = m.vp.Update(msg)
	return m, cmd
}

// View renders every group, one binding a line, in a framed box; the title says
// where the window is when the list scrolls.
func (m Model) View() string {
	m.sync()
	title := "Keys (? or esc closes)"
	if n := m.vp.TotalLineCount(); n > m.vp.Height() {
		title = fmt.Sprintf("Keys · ↑↓ scroll · lines %d–%d of %d", m.vp.YOffset()+1, min(n, m.vp.YOffset()+m.vp.Height()), n)
	}
	return panel.Box(m.theme, title, strings.Join(panel.Lines(m.vp.View(), m.w-2, m.h-2), "\n"), m.w, m.h)
}

// content is every group, one binding a line.
func (m Model) content() string {
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
			indent := 3 + kw + 2
			for j, d := range wrapWords(h.Desc, max(10, m.w-2-indent)) {
				k := h.Key + strings.Repeat(" ", kw-lipgloss.Width(h.Key))
				if j > 0 {
					k = strings.Repeat(" ", kw)
				}
				b.WriteString("   " + t.Key.Render(k) + "  " + t.KeyDesc.Render(d) + "\n")
			}
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// wrapWords breaks s at blanks into lines of at most w cells (a longer word keeps a
// line of its own).
func wrapWords(s string, w int) []string {
	var out []string
	cur := ""
	for _, word := range strings.Fields(s) {
		switch {
		case cur == "":
			cur = word
		case lipgloss.Width(cur)+1+lipgloss.Width(word) <= w:
			cur += " " + word
		default:
			out = append(out, cur)
			cur = word
		}
	}
	return append(out, cur)
}

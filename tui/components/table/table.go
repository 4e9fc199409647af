// Package table draws rows under a header in aligned columns, numbers right-aligned,
// with a cursor that ↑↓ move and a window that scrolls to keep it in view.
package table

import (
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"llmbench/tui/components/panel"
	"llmbench/tui/theme"
)

// KeyMap holds the table's keys.
type KeyMap struct {
	Up, Down key.Binding
}

// DefaultKeyMap returns ↑/k and ↓/j.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		Up:   key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑", "up")),
		Down: key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓", "down")),
	}
}

// Model is a table.
type Model struct {
	theme   theme.Theme
	w, h    int
	Keys    KeyMap
	Headers []string
	rows    [][]string
	cursor  int
	offset  int
	// Cursor, when true, marks the row under the cursor with ">" and highlights it
	// (every row gets a two-cell gutter for the mark).
	Cursor bool
	// Priority lists the column indexes from the most important: when the columns
	// do not fit the width, the least important are left out whole (Hidden says
	// which) rather than a cell being cut. Nil: left to right.
	Priority []int
}

// New returns a table with the given headers.
func New(t theme.Theme, headers ...string) Model {
	return Model{theme: t, Keys: DefaultKeyMap(), Headers: headers, w: 40, h: 5}
}

// SetSize sets the area: the header takes one line, rows the rest.
func (m *Model) SetSize(w, h int) { m.w, m.h = w, h; m.clamp() }

// SetRows replaces the rows, keeping the cursor where it can.
func (m *Model) SetRows(rows [][]string) { m.rows = rows; m.clamp() }

// Rows returns the rows.
func (m Model) Rows() [][]string { return m.rows }

// CursorRow returns the index of the row under the cursor.
func (m Model) CursorRow() int { return m.cursor }

func (m *Model) clamp() {
	m.cursor = min(max(m.cursor, 0), max(len(m.rows)-1, 0))
	vis := max(1, m.h-1)
	if m.cursor < m.offset {
		m.offset = m.cursor
	}
	if m.cursor >= m.offset+vis {
		m.offset = m.cursor - vis + 1
	}
	m.offset = max(0, min(m.offset, max(0, len(m.rows)-vis)))
}

// Update moves the cursor.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		switch {
		case key.Matches(k, m.Keys.Up):
			m.cursor--
		case key.Matches(k, m.Keys.Down):
			m.cursor++
		}
		m.clamp()
	}
	return m, nil
}

// numeric reports whether s is a number (aligned right), a percentage, or a
// placeholder for a missing one ("-").
func numeric(s string) bool {
	if s == "-" {
		return true
	}
	s = strings.TrimSpace(strings.TrimSuffix(strings.TrimSuffix(s, "%"), " "))
	_, err := strconv.ParseFloat(strings.TrimPrefix(s, "+"), 64)
	return err == nil
}

func (m Model) widths() []int {
	widths := make([]int, len(m.Headers))
	for i, h := range m.Headers {
		widths[i] = lipgloss.Width(h)
	}
	for _, r := range m.rows {
		for i := range min(len(r), len(widths)) {
			widths[i] = max(widths[i], lipgloss.Width(r[i]))
		}
	}
	return widths
}

// shown returns which columns fit the width, leaving out the least important.
func (m Model) shown(widths []int) []bool {
	order := m.Priority
	if order == nil {
		for i := range widths {
			order = append(order, i)
		}
	}
	shown := make([]bool, len(widths))
	used := 0
	if m.Cursor {
		used = 2
	}
	for n, i := range order {
		if i >= len(widths) {
			continue
		}
		gap := 2
		if n == 0 {
			gap = 0
		}
		if n > 0 && used+gap+widths[i] > m.w {
			continue
		}
		shown[i] = true
		used += gap + widths[i]
	}
	return shown
}

// Hidden returns the headers of the columns left out at this width.
func (m Model) Hidden() []string {
	var out []string
	for i, ok := range m.shown(m.widths()) {
		if !ok {
			out = append(out, strings.TrimSpace(m.Headers[i]))
		}
	}
	return out
}

// View renders the header and the visible rows.
func (m Model) View() string {
	widths := m.widths()
	shown := m.shown(widths)
	cell := func(s string, i int, right bool) string {
		pad := strings.Repeat(" ", max(0, widths[i]-lipgloss.Width(s)))
		if right {
			return pad + s
		}
		return s + pad
	}
	numCol := make([]bool, len(widths)) // a header sits right over a column of numbers
	for _, r := range m.rows {
		for i := range min(len(r), len(widths)) {
			numCol[i] = numCol[i] || numeric(r[i]) && r[i] != "-"
		}
	}
	line := func(r []string, header bool) string {
		var parts []string
		for i := range widths {
			if !shown[i] {
				continue
			}
			s := ""
			if i < len(r) {
				s = r[i]
			}
			parts = append(parts, cell(s, i, i > 0 && (header && (numCol[i] || len(m.rows) == 0) || !header && numeric(s))))
		}
		return strings.Join(parts, "  ")
	}
	gutter := func(cur bool) string {
		switch {
		case !m.Cursor:
			return ""
		case cur:
			return "> "
		}
		return "  "
	}
	out := []string{m.theme.Title.Render(panel.Fit(gutter(false)+line(m.Headers, true), m.w))}
	vis := max(1, m.h-1)
	for i := m.offset; i < min(len(m.rows), m.offset+vis); i++ {
		cur := m.Cursor && i == m.cursor
		l := panel.Fit(gutter(cur)+line(m.rows[i], false), m.w)
		if cur {
			l = m.theme.Cursor.Render(l)
		}
		out = append(out, l)
	}
	return strings.Join(panel.Lines(strings.Join(out, "\n"), m.w, m.h), "\n")
}

// Package results is the Results screen: the finished (or stopped) run's own table in
// its familiar shape, reusing workloads/report: llama-bench's markdown table for bench
// and vLLM's result block for serve-bench.
package results

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"llmbench/tui/components/panel"
	"llmbench/tui/theme"
	"llmbench/workloads/micro"
	"llmbench/workloads/report"
	"llmbench/workloads/run"
	"llmbench/workloads/serving"
)

// KeyMap holds the Results screen's keys.
type KeyMap struct {
	Up, Down, Left, Right key.Binding
}

// DefaultKeyMap returns the Results keys.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		Up:    key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑↓", "scroll")),
		Down:  key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓", "scroll down")),
		Left:  key.NewBinding(key.WithKeys("left", "h"), key.WithHelp("←→", "scroll sideways")),
		Right: key.NewBinding(key.WithKeys("right", "l"), key.WithHelp("→", "scroll right")),
	}
}

// Footer returns the bindings the footer shows.
func (k KeyMap) Footer() []key.Binding { return []key.Binding{k.Up, k.Left} }

// Model is the Results screen.
type Model struct {
	theme  theme.Theme
	w, h   int
	Keys   KeyMap
	Title  string
	text   string
	status string
	offset int
	col    int // first column shown
}

// New returns an empty Results screen.
func New(t theme.Theme) Model { return Model{theme: t, Keys: DefaultKeyMap(), w: 80, h: 22} }

// SetSize sets the area the screen draws in.
func (m *Model) SetSize(w, h int) { m.w, m.h = w, h }

// Set shows the result of a run that ended with d.
func (m *Model) Set(title string, d run.Done) {
	m.Title, m.offset, m.col = title, 0, 0
	var b bytes.Buffer
	var err error
	switch r := d.Result.(type) {
	case *micro.Result:
		if len(r.Records) == 0 {
			b.WriteString("no test finished")
		} else {
			err = report.LlamaBenchMarkdown(&b, r)
		}
	case *serving.Result:
		err = report.VLLMBlock(&b, r)
	case nil:
		b.WriteString("no result")
	default:
		fmt.Fprintf(&b, "%v", r)
	}
	if err != nil {
		fmt.Fprintf(&b, "\nreport: %v", err)
	}
	m.text = strings.TrimRight(b.String(), "\n")
	switch {
	case d.Err != nil:
		m.status = "✗ failed: " + d.Err.Error()
	case d.Partial:
		m.status = "■ stopped early: partial results"
	default:
		m.status = "✓ finished"
	}
	m.status += fmt.Sprintf(" in %.1f s", d.Elapsed.Seconds())
}

// Update scrolls.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		n := len(strings.Split(m.text, "\n"))
		switch {
		case key.Matches(k, m.Keys.Up):
			m.offset = max(0, m.offset-1)
		case key.Matches(k, m.Keys.Down):
			m.offset = min(max(0, n-(m.h-3)), m.offset+1)
		case key.Matches(k, m.Keys.Left):
			m.col = max(0, m.col-m.w/2)
		case key.Matches(k, m.Keys.Right):
			if m.col+m.w-2 < m.widest() {
				m.col += m.w / 2
			}
		}
	}
	return m, nil
}

func (m Model) widest() int {
	w := 0
	for _, l := range strings.Split(m.text, "\n") {
		w = max(w, len([]rune(l)))
	}
	return w
}

// View renders the status line and the report in a frame.
func (m Model) View() string {
	if m.text == "" {
		return strings.Join(panel.Lines(" No results yet: run something from the Setup screen.", m.w, m.h), "\n")
	}
	lines := strings.Split(m.text, "\n")
	lines = slices.Clone(lines[min(m.offset, len(lines)):])
	for i, l := range lines {
		r := []rune(l)
		lines[i] = string(r[min(m.col, len(r)):])
	}
	body := " " + m.status + "\n" + panel.Box(m.theme, m.Title, strings.Join(lines, "\n"), m.w, m.h-1)
	return strings.Join(panel.Lines(body, m.w, m.h), "\n")
}

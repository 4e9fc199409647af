// Package prompt is one line of text being typed on a screen (a file path for an
// export or a profile): enter submits it, esc cancels, ⌫ and ctrl+u erase.
package prompt

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// State is where a prompt stands after a key.
type State int

const (
	// Editing means the text is still being typed.
	Editing State = iota
	// Submitted means enter was pressed: the text is the answer.
	Submitted
	// Cancelled means esc was pressed: nothing is to be done.
	Cancelled
)

// Model is the text being typed and what it asks for.
type Model struct {
	Label string // "save profile to"
	Text  string
}

// New returns a prompt for label with text typed in already (a default to edit).
func New(label, text string) *Model { return &Model{Label: label, Text: text} }

// Update applies a key and says whether the prompt was submitted or cancelled.
func (m *Model) Update(k tea.KeyPressMsg) State {
	switch k.String() {
	case "esc":
		return Cancelled
	case "enter":
		return Submitted
	case "backspace":
		if r := []rune(m.Text); len(r) > 0 {
			m.Text = string(r[:len(r)-1])
		}
	case "ctrl+u":
		m.Text = ""
	default:
		m.Text += k.Text
	}
	return Editing
}

// View is the prompt's line: " label: text_".
func (m *Model) View() string { return " " + m.Label + ": " + m.Text + "_" }

// Footer returns the keys a prompt takes, for the footer: enter does verb.
func Footer(verb string) []key.Binding {
	return []key.Binding{key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", verb)),
		key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel"))}
}

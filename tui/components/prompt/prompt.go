// Package prompt is one line of text being typed on a screen (a file path for an
// export or a profile), on bubbles' textinput: ←→ home end move the cursor, ⌫ and
// ctrl+w erase a character or a word, ctrl+u the line, a paste inserts its text;
// enter submits, esc cancels. Input and Field are the same editing for a screen's
// own text fields.
package prompt

import (
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
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
	Text  string // the text typed so far
	in    textinput.Model
	// fresh: the text is the default given to New, untouched; the first text typed
	// or pasted replaces it (as a selected default does), so a pasted absolute path
	// is not appended to "./". Moving the cursor or erasing keeps it to edit.
	fresh bool
}

// New returns a prompt for label with text typed in already (a default to edit).
func New(label, text string) *Model {
	return &Model{Label: label, Text: text, in: Input(text), fresh: text != ""}
}

// SetText replaces the text (cursor at its end).
func (m *Model) SetText(s string) {
	m.in.SetValue(s)
	m.in.CursorEnd()
	m.Text = s
}

// Update applies a key or a paste and says whether the prompt was submitted or
// cancelled.
func (m *Model) Update(msg tea.Msg) State {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		switch k.String() {
		case "esc":
			return Cancelled
		case "enter":
			return Submitted
		}
	}
	if m.fresh && Inserts(msg) {
		m.in.SetValue("")
	}
	m.fresh = false
	m.in, _ = m.in.Update(msg)
	m.Text = m.in.Value()
	return Editing
}

// Inserts reports whether msg would insert text into a field (a printable key or a
// paste) rather than move or erase.
func Inserts(msg tea.Msg) bool {
	switch k := msg.(type) {
	case tea.PasteMsg:
		return true
	case tea.KeyPressMsg:
		return k.Text != "" && k.Mod&(tea.ModCtrl|tea.ModAlt) == 0
	}
	return false
}

// View is the prompt's line: " label: text" with the cursor shown.
func (m *Model) View() string { return " " + m.Label + ": " + Field(m.in, true) }

// Input returns a focused text input holding value, cursor at its end, for a
// screen's own text field (render it with Field).
func Input(value string) textinput.Model {
	in := textinput.New()
	in.Prompt = ""
	in.KeyMap.AcceptSuggestion.SetEnabled(false) // tab is not ours
	in.KeyMap.NextSuggestion.SetEnabled(false)   // ↑↓ move between fields
	in.KeyMap.PrevSuggestion.SetEnabled(false)
	in.SetValue(value)
	in.Focus()
	in.CursorEnd()
	return in
}

// Field renders a text input's value as plain text, with the cursor when focused:
// "_" after the last character, "▏" before the character it stands on. (The
// textinput's own view blinks and styles; screens keep to their theme.)
func Field(in textinput.Model, focused bool) string { return FieldIn(in, focused, 0) }

// FieldIn is Field in at most w cells (0: any): a longer value shows the part
// around the cursor (its end when not focused: a path's file name), "…" marking
// what is out of view.
func FieldIn(in textinput.Model, focused bool, w int) string {
	r := []rune(in.Value())
	pos := len(r)
	if focused {
		pos = min(max(in.Position(), 0), len(r))
	}
	cur := ""
	switch {
	case !focused:
	case pos == len(r):
		cur = "_"
	default:
		cur = "▏"
	}
	switch {
	case w <= 0 || len(r)+len([]rune(cur)) <= w:
	case w < 3:
		return string(r[len(r)-w:])
	case !focused:
		return "…" + string(r[len(r)-(w-1):])
	case pos == len(r):
		return "…" + string(r[len(r)-(w-2):]) + cur
	default: // the cursor inside: a window around it, … for each side cut off
		n := w - 3
		start := max(0, min(pos-n/2, len(r)-n))
		end := min(len(r), start+n)
		head, tail := "", ""
		if start > 0 {
			head = "…"
		}
		if end < len(r) {
			tail = "…"
		}
		return head + string(r[start:pos]) + cur + string(r[pos:end]) + tail
	}
	return string(r[:pos]) + cur + string(r[pos:])
}

// Footer returns the keys a prompt takes, for the footer: enter does verb.
func Footer(verb string) []key.Binding {
	return append([]key.Binding{key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", verb)),
		key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel"))}, FieldKeys()...)
}

// FieldKeys returns the editing keys of a text field, for the footer and help.
func FieldKeys() []key.Binding {
	return []key.Binding{
		key.NewBinding(key.WithKeys("left", "right"), key.WithHelp("←→", "cursor")),
		key.NewBinding(key.WithKeys("ctrl+w"), key.WithHelp("ctrl+w", "del word")),
		key.NewBinding(key.WithKeys("ctrl+u"), key.WithHelp("ctrl+u", "clear")),
	}
}

package prompt

import (
	"testing"

	tea "charm.land/bubbletea/v2"
)

func keys(m *Model, s string) {
	for _, r := range s {
		m.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

// TestDefaultReplacedByPaste: a pasted absolute path replaces the default offered
// (it used to be appended to "./"); moving the cursor first keeps the default to edit.
func TestDefaultReplacedByPaste(t *testing.T) {
	m := New("open profile", "./")
	m.Update(tea.PasteMsg{Content: "/abs/p.yaml"})
	if m.Text != "/abs/p.yaml" {
		t.Errorf("paste over the default: %q", m.Text)
	}
	m = New("save profile to", "./bench.yaml")
	m.Update(tea.KeyPressMsg{Code: tea.KeyHome})
	keys(m, "x")
	if m.Text != "x./bench.yaml" {
		t.Errorf("typed after home: %q", m.Text)
	}
}

// TestEditing: cursor movement, word delete, and enter/esc.
func TestEditing(t *testing.T) {
	m := New("export to", "")
	keys(m, "out dir/file.md")
	m.Update(tea.KeyPressMsg{Code: tea.KeyLeft})
	m.Update(tea.KeyPressMsg{Code: tea.KeyLeft})
	keys(m, "X")
	if m.Text != "out dir/file.Xmd" {
		t.Errorf("insert at the cursor: %q", m.Text)
	}
	if v := m.View(); v != " export to: out dir/file.X▏md" {
		t.Errorf("view %q", v)
	}
	m.Update(tea.KeyPressMsg{Code: tea.KeyEnd})
	m.Update(tea.KeyPressMsg{Code: 'w', Mod: tea.ModCtrl})
	if m.Text != "out " {
		t.Errorf("ctrl+w: %q", m.Text)
	}
	if m.Update(tea.KeyPressMsg{Code: tea.KeyEnter}) != Submitted || m.Update(tea.KeyPressMsg{Code: tea.KeyEscape}) != Cancelled {
		t.Error("enter/esc")
	}
}

// TestFieldIn: a value longer than the room shows the part around the cursor, its
// end when not focused, with … where text is out of view.
func TestFieldIn(t *testing.T) {
	in := Input("/work/shared/datasets/sharegpt_sample_50.json")
	if got := FieldIn(in, true, 20); got != "…gpt_sample_50.json_" {
		t.Errorf("focused at the end: %q", got)
	}
	if got := FieldIn(in, false, 12); got != "…ple_50.json" {
		t.Errorf("not focused: %q", got)
	}
	in.SetCursor(0)
	if got := FieldIn(in, true, 12); got != "▏/work/sha…" {
		t.Errorf("cursor at the start: %q", got)
	}
	for w := 1; w < 50; w++ {
		for _, pos := range []int{0, 10, 45} {
			in.SetCursor(pos)
			if n := len([]rune(FieldIn(in, true, w))); n > w {
				t.Errorf("w %d pos %d: %d runes", w, pos, n)
			}
		}
	}
}

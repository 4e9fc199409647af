package statusbar

import (
	"strings"
	"testing"

	"charm.land/bubbles/v2/key"

	"llmbench/tui/theme"
)

func bind(k, desc string) key.Binding { return key.NewBinding(key.WithKeys(k), key.WithHelp(k, desc)) }

// TestFooterKeepsGlobalKeys: when the line is too narrow, the screen's last keys give
// way, never the global ones.
func TestFooterKeepsGlobalKeys(t *testing.T) {
	m := New(theme.New(theme.ASCII), []string{"Setup"})
	here := []key.Binding{bind("e", "export"), bind("s", "save profile"), bind("c", "compare"), bind("r", "run again")}
	global := []key.Binding{bind("tab", "screens"), bind("?", "help"), bind("q", "quit")}
	for _, tc := range []struct {
		w    int
		want []string
		gone []string
	}{
		{120, []string{"e export", "r run again", "? help"}, nil},
		{60, []string{"e export", "s save profile", "? help", "q quit"}, []string{"c compare", "r run again"}},
		{30, []string{"tab screens", "? help", "q quit"}, []string{"e export"}},
	} {
		m.SetSize(tc.w, 1)
		f := m.Footer(here, global...)
		if len([]rune(f)) != tc.w {
			t.Errorf("width %d: footer %d cells", tc.w, len([]rune(f)))
		}
		for _, w := range tc.want {
			if !strings.Contains(f, w) {
				t.Errorf("width %d: %q lacks %q", tc.w, f, w)
			}
		}
		for _, g := range tc.gone {
			if strings.Contains(f, g) {
				t.Errorf("width %d: %q keeps %q", tc.w, f, g)
			}
		}
	}
}

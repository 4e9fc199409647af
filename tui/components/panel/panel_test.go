package panel

import (
	"strings"
	"testing"

	"charm.land/lipgloss/v2"

	"llmbench/tui/theme"
)

func TestFitAndBox(t *testing.T) {
	if got := Fit("hello world", 8); got != "hello w…" {
		t.Errorf("Fit cut %q", got)
	}
	if got := Fit("hi", 4); got != "hi  " {
		t.Errorf("Fit pad %q", got)
	}
	b := Box(theme.New(theme.ASCII), "A very long title indeed", "x\ny\nz\nw", 12, 4)
	lines := strings.Split(b, "\n")
	if len(lines) != 4 {
		t.Fatalf("%d lines", len(lines))
	}
	for _, l := range lines {
		if lipgloss.Width(l) != 12 {
			t.Errorf("line %q is %d wide", l, lipgloss.Width(l))
		}
	}
}

// TestWidth: the fast count agrees with lipgloss on what the screens draw, styled or
// not, and falls back to it for wide and combining characters.
func TestWidth(t *testing.T) {
	c := theme.New(theme.Color)
	for _, s := range []string{
		"", "plain", "a\nlonger line\nb", "│▀▄█▒░▓ ◂ bench ▸ ✓ ✗ ■ ● ❚❚ · … ± × ° ↑↓←→ ▁▂▃▄▅▆▇█",
		c.Bar.Render("████") + " 12", c.Series[1].Background(c.Series[0].GetForeground()).Render("▀▀"),
		"wide 漢字", "e\u0301", "emoji ✅ ◽", "\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "\x1b[1;38;2;1;2;3mx\x1b[m",
	} {
		if got, want := Width(s), lipgloss.Width(s); got != want {
			t.Errorf("Width(%q) = %d, lipgloss says %d", s, got, want)
		}
	}
}

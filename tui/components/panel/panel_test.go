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

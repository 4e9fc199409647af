// Package panel draws the framed boxes every screen lays its components in, and the
// width helpers that keep lines from wrapping: a line is cut with "…", never mid-frame.
package panel

import (
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"llmbench/tui/theme"
)

// Fit cuts s to w cells (ending in "…" when cut) and pads it with spaces to exactly w.
func Fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if lipgloss.Width(s) > w {
		s = ansi.Truncate(s, w, "…")
	}
	if n := w - lipgloss.Width(s); n > 0 {
		s += strings.Repeat(" ", n)
	}
	return s
}

// Lines fits every line of s to w cells and pads or cuts the result to exactly h lines.
func Lines(s string, w, h int) []string {
	in := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if s == "" {
		in = nil
	}
	h, w = max(h, 0), max(w, 0)
	out := make([]string, 0, h)
	for i := 0; i < h; i++ {
		line := ""
		if i < len(in) {
			line = in[i]
		}
		out = append(out, Fit(line, w))
	}
	return out
}

// Box frames body (cut or padded to fit) in a w×h box whose top edge carries title.
func Box(t theme.Theme, title, body string, w, h int) string {
	if w < 4 || h < 2 {
		return strings.Join(Lines(body, max(w, 0), max(h, 0)), "\n")
	}
	head, used := "┌", 1
	if title != "" {
		title = ansi.Truncate(title, w-4, "…")
		head, used = "┌ ", 3+lipgloss.Width(title)
	}
	var b strings.Builder
	b.WriteString(t.Border.Render(head))
	if title != "" {
		b.WriteString(t.Title.Render(title) + t.Border.Render(" "))
	}
	b.WriteString(t.Border.Render(strings.Repeat("─", max(0, w-1-used)) + "┐"))
	for _, l := range Lines(body, w-2, h-2) {
		b.WriteString("\n" + t.Border.Render("│") + l + t.Border.Render("│"))
	}
	b.WriteString("\n" + t.Border.Render("└"+strings.Repeat("─", w-2)+"┘"))
	return b.String()
}

// Join puts blocks side by side (each already exactly as tall and wide as it draws).
func Join(blocks ...string) string { return lipgloss.JoinHorizontal(lipgloss.Top, blocks...) }

// Stack puts blocks one under the other.
func Stack(blocks ...string) string { return lipgloss.JoinVertical(lipgloss.Left, blocks...) }

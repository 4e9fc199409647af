// Package panel draws the framed boxes every screen lays its components in, and the
// width helpers that keep lines from wrapping: a line is cut with "…", never mid-frame.
package panel

import (
	"strings"
	"unicode/utf8"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"llmbench/tui/theme"
)

// Width returns the cells s takes on a terminal (the widest line). Plain text of
// one-cell characters (ASCII, Latin-1, arrows, box drawing, blocks and the few signs
// the screens use) is counted rune by rune; anything else (escape sequences, wide or
// combining characters) goes through lipgloss, which segments graphemes and is
// about a hundred times slower: the Live screen draws up to ten frames a second.
func Width(s string) int {
	w, line := 0, 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '\n':
			w, line = max(w, line), 0
		case r == 0x1b: // colours and attributes (SGR) take no cells
			n := sgrLen(s[i:])
			if n == 0 {
				return lipgloss.Width(s)
			}
			size = n
		case narrow(r):
			line++
		default:
			return lipgloss.Width(s)
		}
		i += size
	}
	return max(w, line)
}

// sgrLen returns the length of the SGR sequence ("\x1b[…m") s starts with, 0 when
// it starts with anything else.
func sgrLen(s string) int {
	if len(s) < 3 || s[1] != '[' {
		return 0
	}
	for i := 2; i < len(s); i++ {
		switch c := s[i]; {
		case c == 'm':
			return i + 1
		case c >= '0' && c <= '9', c == ';', c == ':':
		default:
			return 0
		}
	}
	return 0
}

// narrow reports whether r always takes one cell and never joins its neighbours.
func narrow(r rune) bool {
	switch {
	case r >= 0x20 && r < 0x7f, r >= 0xa0 && r < 0x300: // ASCII and Latin-1, before combining marks
		return true
	case r >= 0x2010 && r <= 0x2027, r >= 0x2190 && r <= 0x21ff: // dashes, bullets, ellipsis; arrows
		return true
	case r >= 0x2500 && r <= 0x25fc: // box drawing, blocks, geometric shapes (◽◾ are wide)
		return true
	case r == 0x2713, r == 0x2717, r == 0x275a: // ✓ ✗ ❚
		return true
	}
	return false
}

// Fit cuts s to w cells (ending in "…" when cut) and pads it with spaces to exactly w.
func Fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	n := Width(s)
	if n > w {
		s = ansi.Truncate(s, w, "…")
		n = Width(s)
	}
	if n < w {
		s += strings.Repeat(" ", w-n)
	}
	return s
}

// FitParts fits a line made of " · "-joined parts to w cells by dropping whole parts
// from the end (decoration and older news) rather than cutting one; a first part
// wider than w is cut.
func FitParts(s string, w int) string {
	if Width(s) <= w {
		return Fit(s, w)
	}
	parts := strings.Split(s, " · ")
	dropped := false
	for len(parts) > 1 && Width(strings.Join(parts, " · ")) > w {
		parts, dropped = parts[:len(parts)-1], true
	}
	out := strings.Join(parts, " · ")
	if dropped && strings.Contains(s, "\x1b[") {
		out += "\x1b[m" // the reset may have gone with the parts dropped
	}
	return Fit(out, w)
}

// Lines fits every line of s to w cells (FitParts: a line of " · " parts loses
// parts before it is cut) and pads or cuts the result to exactly h lines.
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
		out = append(out, FitParts(line, w))
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
	side := t.Border.Render("│")
	for _, l := range Lines(body, w-2, h-2) {
		b.WriteString("\n" + side + l + side)
	}
	b.WriteString("\n" + t.Border.Render("└"+strings.Repeat("─", w-2)+"┘"))
	return b.String()
}

// Join puts blocks side by side, line by line from the top; a block shorter than the
// others is padded with blank lines as wide as its first line. Each block's lines
// are as wide as each other (Box and Lines draw them so).
func Join(blocks ...string) string {
	split := make([][]string, len(blocks))
	h := 0
	for i, b := range blocks {
		split[i] = strings.Split(b, "\n")
		h = max(h, len(split[i]))
	}
	out := make([]string, h)
	for _, lines := range split {
		pad := strings.Repeat(" ", Width(lines[0]))
		for j := range h {
			if j < len(lines) {
				out[j] += lines[j]
			} else {
				out[j] += pad
			}
		}
	}
	return strings.Join(out, "\n")
}

// Stack puts blocks one under the other.
func Stack(blocks ...string) string { return strings.Join(blocks, "\n") }

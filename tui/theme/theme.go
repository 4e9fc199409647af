// Package theme holds every style the TUI draws with. Colour is only ever a second
// cue: whatever a colour means is also said by a sign, a label or a glyph, so a
// NO_COLOR terminal (Mono) and the plain-text goldens (ASCII) lose nothing.
package theme

import (
	"os"

	"charm.land/lipgloss/v2"
)

// Mode says how much styling a Theme emits.
type Mode int

const (
	// Color uses colours and attributes.
	Color Mode = iota
	// Mono uses attributes (bold, reverse, faint) but no colour: NO_COLOR.
	Mono
	// ASCII emits no escape sequences at all: golden files and pipes.
	ASCII
)

// Theme is the set of styles the screens and components use.
type Theme struct {
	Mode Mode

	TabActive, Tab lipgloss.Style // header tabs (the active one is also bracketed)
	Product        lipgloss.Style // "llmbench" in the header
	HeaderRight    lipgloss.Style // device or run summary at the right of the header
	Key, KeyDesc   lipgloss.Style // footer and help: a key and what it does
	Border         lipgloss.Style // panel frames
	Title          lipgloss.Style // panel titles
	Cursor         lipgloss.Style // the focused row (also marked with ">")
	Selected       lipgloss.Style // the chosen item (also marked with "•")
	Dim            lipgloss.Style // hints, units, secondary text
	Error          lipgloss.Style // error lines (also prefixed with "✗" or "error:")
	Good, Warn     lipgloss.Style // verdicts (also spelled out)
	Bar, BarEmpty  lipgloss.Style // progress and histogram bars (█ and ░)
	Spark          lipgloss.Style // sparkline glyphs
	// Series styles the runs of a comparison, A, B, C, D in order (cycling); charts
	// also draw each run in its own glyph.
	Series [4]lipgloss.Style
}

// FromEnv returns the theme for this terminal: Mono when NO_COLOR is set, else Color.
func FromEnv() Theme {
	if _, ok := os.LookupEnv("NO_COLOR"); ok {
		return New(Mono)
	}
	return New(Color)
}

// New returns the theme of mode m.
func New(m Mode) Theme {
	s := lipgloss.NewStyle
	t := Theme{Mode: m}
	if m == ASCII {
		for _, p := range []*lipgloss.Style{&t.TabActive, &t.Tab, &t.Product, &t.HeaderRight, &t.Key, &t.KeyDesc,
			&t.Border, &t.Title, &t.Cursor, &t.Selected, &t.Dim, &t.Error, &t.Good, &t.Warn, &t.Bar, &t.BarEmpty, &t.Spark,
			&t.Series[0], &t.Series[1], &t.Series[2], &t.Series[3]} {
			*p = s()
		}
		return t
	}
	t.TabActive = s().Bold(true).Reverse(true)
	t.Tab = s()
	t.Product = s().Bold(true)
	t.HeaderRight = s().Faint(true)
	t.Key = s().Bold(true)
	t.KeyDesc = s().Faint(true)
	t.Border = s()
	t.Title = s().Bold(true)
	t.Cursor = s().Reverse(true)
	t.Selected = s().Bold(true)
	t.Dim = s().Faint(true)
	t.Error = s().Bold(true)
	t.Good = s().Bold(true)
	t.Warn = s().Bold(true)
	t.Bar = s()
	t.BarEmpty = s().Faint(true)
	t.Spark = s()
	t.Series = [4]lipgloss.Style{s().Bold(true), s(), s().Faint(true), s().Italic(true)}
	if m == Color {
		accent := lipgloss.Color("#7D56F4")
		t.TabActive = s().Bold(true).Foreground(lipgloss.Color("#FFFFFF")).Background(accent)
		t.Product = t.Product.Foreground(accent)
		t.Key = t.Key.Foreground(lipgloss.Color("#A78BFA"))
		t.Border = s().Foreground(lipgloss.Color("#5C5C7A"))
		t.Title = t.Title.Foreground(lipgloss.Color("#C4B5FD"))
		t.Cursor = s().Foreground(lipgloss.Color("#FFFFFF")).Background(lipgloss.Color("#3F3F5F"))
		t.Selected = t.Selected.Foreground(lipgloss.Color("#A7F3D0"))
		t.Error = t.Error.Foreground(lipgloss.Color("#F87171"))
		t.Good = t.Good.Foreground(lipgloss.Color("#4ADE80"))
		t.Warn = t.Warn.Foreground(lipgloss.Color("#FBBF24"))
		t.Bar = s().Foreground(lipgloss.Color("#60A5FA"))
		t.Spark = s().Foreground(lipgloss.Color("#34D399"))
		for i, c := range []string{"#60A5FA", "#F59E0B", "#34D399", "#F472B6"} {
			t.Series[i] = s().Foreground(lipgloss.Color(c))
		}
	}
	return t
}

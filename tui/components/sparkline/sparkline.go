// Package sparkline draws a one-line chart of the latest values (▁▂▃▄▅▆▇█) with the
// current, peak and mean figures beside it.
package sparkline

import (
	"fmt"
	"strings"

	"llmbench/tui/components/panel"
	"llmbench/tui/theme"
)

// KeyMap is empty: a sparkline takes no keys.
type KeyMap struct{}

var glyphs = []rune("▁▂▃▄▅▆▇█")

// Model keeps the latest values and draws them.
type Model struct {
	theme  theme.Theme
	w, h   int
	values []float64
	sum    float64
	n      int
	peak   float64
	Unit   string
	// peakSet: the peak was set (SetPeak), not taken from the values pushed;
	// peakName names it on the stats line.
	peakSet  bool
	peakName string
}

// SetPeak sets the peak the stats line shows, and its name there, for a series whose
// peak is defined otherwise than as its largest value (serving's is the largest 1-s
// bucket of tokens, the figure Results shows, while the values pushed are rates over
// shorter spans and may exceed it: "1-s peak" says so); later pushes no longer move it.
func (m *Model) SetPeak(v float64, name string) { m.peak, m.peakSet, m.peakName = v, true, name }

// New returns an empty sparkline.
func New(t theme.Theme, unit string) Model { return Model{theme: t, Unit: unit, w: 40, h: 2} }

// SetSize sets the area; the chart is one line and the stats line follows when h > 1.
func (m *Model) SetSize(w, h int) { m.w, m.h = w, h }

// Push adds a value; only as many as fit the widest chart are kept.
func (m *Model) Push(v float64) {
	m.values = append(m.values, v)
	if len(m.values) > 512 {
		m.values = m.values[len(m.values)-256:]
	}
	m.sum += v
	m.n++
	if !m.peakSet {
		m.peak = max(m.peak, v)
	}
}

// Len returns how many values were pushed.
func (m Model) Len() int { return m.n }

// Chart renders the last w values as glyphs scaled to the largest shown.
func (m Model) Chart(w int) string {
	vs := m.values
	if len(vs) > w {
		vs = vs[len(vs)-w:]
	}
	top := 0.0
	for _, v := range vs {
		top = max(top, v)
	}
	var b strings.Builder
	for _, v := range vs {
		i := 0
		if top > 0 {
			i = min(len(glyphs)-1, int(v/top*float64(len(glyphs)-1)+0.5))
		}
		b.WriteRune(glyphs[max(i, 0)])
	}
	return m.theme.Spark.Render(b.String())
}

// View renders "last ▁▂▄…" and, when there is room, "peak · mean".
func (m Model) View() string {
	if m.n == 0 {
		return panel.Fit(m.theme.Dim.Render("waiting for data…"), m.w)
	}
	last := fmt.Sprintf("%s %s ", num(m.values[len(m.values)-1]), m.Unit)
	line := last + m.Chart(max(1, m.w-len([]rune(last))))
	if m.h < 2 {
		return panel.Fit(line, m.w)
	}
	name := "peak"
	if m.peakName != "" {
		name = m.peakName
	}
	stats := m.theme.Dim.Render(fmt.Sprintf("%s %s · mean %s", name, num(m.peak), num(m.sum/float64(m.n))))
	return panel.Fit(line, m.w) + "\n" + panel.Fit(stats, m.w)
}

// num formats v with precision that suits its size.
func num(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

// Package progress draws a run's progress: a bar with the percentage, then done/total,
// elapsed time, the estimated time left and what runs now.
package progress

import (
	"fmt"
	"strings"
	"time"

	"llmbench/tui/components/panel"
	"llmbench/tui/theme"
)

// KeyMap is empty: a progress bar takes no keys.
type KeyMap struct{}

// Model is the state of the bar.
type Model struct {
	theme       theme.Theme
	w           int
	Done, Total float64
	Unit, Label string
	Elapsed     time.Duration
	Failed      int
	Finished    bool
}

// New returns an empty progress bar.
func New(t theme.Theme) Model { return Model{theme: t, w: 80} }

// SetSize sets the width; the bar draws two lines.
func (m *Model) SetSize(w, _ int) { m.w = w }

// Fraction returns how far the run is, in [0, 1].
func (m Model) Fraction() float64 {
	if m.Total <= 0 {
		return 0
	}
	return min(1, max(0, m.Done/m.Total))
}

// ETA estimates the time left from the pace so far; ok is false before any progress.
func (m Model) ETA() (time.Duration, bool) {
	f := m.Fraction()
	if f <= 0 || m.Elapsed <= 0 {
		return 0, false
	}
	return time.Duration(float64(m.Elapsed) * (1 - f) / f), true
}

// Clock formats d as mm:ss (h:mm:ss past an hour).
func Clock(d time.Duration) string {
	s := int(d.Round(time.Second) / time.Second)
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%02d:%02d", s/60, s%60)
}

// View renders the bar line and the detail line.
func (m Model) View() string {
	t := m.theme
	pct := fmt.Sprintf(" %3.0f %%", m.Fraction()*100)
	bw := max(4, m.w-len(pct)-1)
	full := int(m.Fraction() * float64(bw))
	bar := " " + t.Bar.Render(strings.Repeat("█", full)) + t.BarEmpty.Render(strings.Repeat("░", bw-full)) + pct
	eta := "ETA --:--"
	if d, ok := m.ETA(); ok {
		eta = "ETA " + Clock(d)
	}
	if m.Finished {
		eta = "finished"
	}
	parts := []string{fmt.Sprintf("%s/%s %s", num(m.Done), num(m.Total), m.Unit), Clock(m.Elapsed) + " elapsed", eta}
	if m.Unit == "bytes" { // a file being written (workloads/jobs.ProgressBytes): its label says bytes of total and ETA
		parts = []string{Clock(m.Elapsed) + " elapsed"}
		if m.Finished {
			parts = append(parts, eta)
		}
	}
	if m.Failed > 0 {
		parts = append(parts, t.Error.Render(fmt.Sprintf("✗ %d failed", m.Failed)))
	}
	if m.Label != "" {
		parts = append(parts, m.Label)
	}
	return panel.Fit(bar, m.w) + "\n" + panel.Fit(" "+strings.Join(parts, " · "), m.w)
}

func num(v float64) string {
	if v == float64(int64(v)) {
		return fmt.Sprint(int64(v))
	}
	return fmt.Sprintf("%.1f", v)
}

// Package compare is the Compare screen: two or more runs side by side, every metric
// with its difference against the first run in percent and a noise verdict where
// both runs kept raw samples (Welch's t-test over a bench's repetitions, a
// moving-block bootstrap over a serving run's request sequence; the title names
// the method), the first two runs' distributions of one
// metric overlaid in a histogram, and a bar per run for each headline metric.
package compare

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"llmbench/tui/components/histogram"
	"llmbench/tui/components/panel"
	"llmbench/tui/components/table"
	"llmbench/tui/theme"
	"llmbench/workloads/report"
	"llmbench/workloads/result"
)

// Glyphs draw run A, B, C, D in the bar chart (cycling), so that a run is told apart
// without colour.
var Glyphs = []string{"█", "▒", "░", "▓"}

// KeyMap holds the Compare screen's keys.
type KeyMap struct {
	Up, Down, Metric key.Binding
}

// DefaultKeyMap returns the Compare keys.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		Up:     key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑↓", "scroll metrics")),
		Down:   key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓", "scroll down")),
		Metric: key.NewBinding(key.WithKeys("m", "right", "left"), key.WithHelp("m/←→", "histogram metric")),
	}
}

// Footer returns the bindings the footer shows.
func (k KeyMap) Footer() []key.Binding { return []key.Binding{k.Up, k.Metric} }

// Model is the Compare screen.
type Model struct {
	theme theme.Theme
	w, h  int
	Keys  KeyMap

	docs  []result.Document
	cmp   *report.DocComparison
	tab   table.Model
	hists []int // rows with samples in the first two runs: what the histogram can show
	hist  int   // index into hists
}

// New returns an empty Compare screen.
func New(t theme.Theme) Model {
	return Model{theme: t, Keys: DefaultKeyMap(), w: 80, h: 21, tab: table.New(t)}
}

// Letter names the i-th run: A, B, …, Z, then 27, 28, ….
func Letter(i int) string {
	if i < 26 {
		return string(rune('A' + i))
	}
	return fmt.Sprint(i + 1)
}

// Set compares docs (the first is the baseline); the screen keeps its previous
// comparison when that fails.
func (m *Model) Set(docs []result.Document) error {
	c, err := report.CompareDocs(docs)
	if err != nil {
		return err
	}
	m.docs, m.cmp, m.hists, m.hist = docs, c, nil, 0
	for i, r := range c.Rows {
		if len(r.Samples[0]) > 0 && len(r.Samples[1]) > 0 {
			m.hists = append(m.hists, i)
		}
	}
	heads := []string{"metric"}
	for i := range docs {
		heads = append(heads, Letter(i))
	}
	if len(docs) == 2 {
		heads = append(heads, "% diff", "verdict")
	} else {
		heads = []string{"metric", "A"}
		for i := 1; i < len(docs); i++ {
			heads = append(heads, Letter(i), "% "+Letter(i))
		}
	}
	m.tab = table.New(m.theme, heads...)
	m.tab.Cursor = true
	var rows [][]string
	for _, r := range c.Rows {
		row := []string{r.Label(), value(r.Values[0])}
		for i := 1; i < len(docs); i++ {
			row = append(row, value(r.Values[i]))
			if len(docs) == 2 {
				row = append(row, diff(r.DiffPct[i]), r.Verdict[i])
			} else {
				row = append(row, diff(r.DiffPct[i])+" "+short(r.Verdict[i]))
			}
		}
		rows = append(rows, row)
	}
	m.tab.SetRows(rows)
	m.layout()
	return nil
}

// Runs returns the number of runs compared (0 before Set).
func (m Model) Runs() int { return len(m.docs) }

// Comparison returns the comparison shown (nil before Set).
func (m Model) Comparison() *report.DocComparison { return m.cmp }

func value(v float64) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case math.Abs(v) >= 1000:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

func diff(d float64) string {
	if math.IsNaN(d) || math.IsInf(d, 0) {
		return "-"
	}
	return fmt.Sprintf("%+.1f %%", d)
}

// short is a verdict in a few letters for the many-runs table.
func short(v string) string {
	return map[string]string{report.VerdictSignificant: "sig", report.VerdictNoise: "noise"}[v]
}

// SetSize sets the area the screen draws in.
func (m *Model) SetSize(w, h int) { m.w, m.h = w, h; m.layout() }

// legendLines is how many lines the run legend takes.
func (m Model) legendLines() int { return min(len(m.docs), max(2, m.h/7)) }

// chartH is the height of the chart row (histogram and bars), frames included.
func (m Model) chartH() int { return max(4, (m.h-m.legendLines())/2) }

func (m *Model) layout() {
	m.tab.SetSize(m.w-2, m.h-m.legendLines()-m.chartH()-2-m.noteLines())
}

// noteLines is 1 when the table shows an n/a verdict (a line under it says why).
func (m Model) noteLines() int {
	if m.cmp == nil {
		return 0
	}
	for _, r := range m.cmp.Rows {
		if slices.Contains(r.Verdict[1:], report.VerdictNA) {
			return 1
		}
	}
	return 0
}

// naNote explains an n/a verdict: which of the two reasons applies is in the row
// (a "-" value is a metric the run lacks).
const naNote = "n/a: no verdict: one figure per run (repeat the run: a test needs samples) or a run lacks the metric (-)"

// Update scrolls the table and switches the histogram's metric.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok || m.cmp == nil {
		return m, nil
	}
	switch {
	case key.Matches(k, m.Keys.Metric) && len(m.hists) > 0:
		d := 1
		if k.String() == "left" {
			d = -1
		}
		m.hist = (m.hist + d + len(m.hists)) % len(m.hists)
	default:
		m.tab, _ = m.tab.Update(k)
	}
	return m, nil
}

// View renders the legend, the table and the charts.
func (m Model) View() string {
	t := m.theme
	if m.cmp == nil {
		return strings.Join(panel.Lines(" Nothing to compare yet: pick two or more runs on the History screen (space, then c),\n or press c on Results to compare a run with the one before it.", m.w, m.h), "\n")
	}
	var legend []string
	for i, d := range m.docs {
		when := ""
		if !d.Started.IsZero() {
			when = " · " + d.Started.Local().Format("2006-01-02 15:04")
		}
		mark := ""
		if d.Partial {
			mark = " (partial)"
		}
		g := t.Series[i%len(t.Series)].Render(Glyphs[i%len(Glyphs)])
		legend = append(legend, fmt.Sprintf(" %s %s  %s%s%s", g, Letter(i), d.Title, when, mark))
	}
	if n := m.legendLines(); n < len(legend) {
		legend = append(legend[:n-1], fmt.Sprintf(" … and %d more runs (see the columns)", len(legend)-n+1))
	}
	method := "none (no raw samples on both sides)"
	if ms := m.cmp.Methods(); len(ms) > 0 {
		method = strings.Join(ms, "; ")
	}
	title := fmt.Sprintf("%d runs: %% against A · verdict: %s", len(m.docs), method)
	if !m.common() {
		title = fmt.Sprintf("%d runs: no metric in common (different kinds of run): each shows its own", len(m.docs))
	}
	tableH := m.h - len(legend) - m.chartH()
	tv := m.tab.View()
	if m.noteLines() > 0 {
		tv += "\n" + t.Dim.Render(naNote)
	}
	body := strings.Join(legend, "\n") + "\n" + panel.Box(t, title, tv, m.w, tableH)
	lw := m.w / 2
	rw := m.w - lw
	body += "\n" + panel.Join(m.histPanel(lw), m.barsPanel(rw))
	return strings.Join(panel.Lines(body, m.w, m.h), "\n")
}

// common reports whether any metric was measured by A and another run.
func (m Model) common() bool {
	for _, r := range m.cmp.Rows {
		for _, v := range r.Values[1:] {
			if !math.IsNaN(r.Values[0]) && !math.IsNaN(v) {
				return true
			}
		}
	}
	return false
}

func (m Model) histPanel(w int) string {
	t, h := m.theme, m.chartH()
	if len(m.hists) == 0 {
		return panel.Box(t, "Histogram", " no metric with raw samples in both A and B", w, h)
	}
	r := m.cmp.Rows[m.hists[m.hist]]
	unit := "ms"
	if r.Metric == "t/s" {
		unit = "t/s"
	}
	title := fmt.Sprintf("%s: A %s B %s", histTitle(r), t.Series[0].Render(histogram.GlyphA), t.Series[1].Render(histogram.GlyphB))
	return panel.Box(t, title, histogram.Overlay(t, r.Samples[0], r.Samples[1], unit, w-2, h-2), w, h)
}

func (m Model) barsPanel(w int) string {
	t, h := m.theme, m.chartH()
	var heads []report.DocRow
	for _, r := range m.cmp.Rows {
		if r.Headline {
			heads = append(heads, r)
		}
	}
	inner := w - 2
	var lines []string
	for _, r := range heads {
		top := 0.0
		for _, v := range r.Values {
			if !math.IsNaN(v) {
				top = max(top, math.Abs(v))
			}
		}
		label := r.Label()
		if r.LowerBetter {
			label += " · lower is better"
		}
		lines = append(lines, t.Dim.Render(label))
		tw := 0
		for _, v := range r.Values {
			tw = max(tw, len(value(v)))
		}
		bw := max(1, inner-4-tw-1)
		for i, v := range r.Values {
			txt := value(v)
			n := 0
			if !math.IsNaN(v) && top > 0 {
				n = max(1, int(math.Abs(v)/top*float64(bw)))
			}
			s := t.Series[i%len(t.Series)]
			lines = append(lines, fmt.Sprintf(" %-2s %s %s", Letter(i), s.Render(strings.Repeat(Glyphs[i%len(Glyphs)], n)), txt))
		}
	}
	if per := 1 + len(m.docs); len(lines) > h-2 && h > 2 {
		shown := (h - 3) / per
		lines = append(lines[:shown*per], t.Dim.Render(fmt.Sprintf("… %d more: make the terminal taller", len(heads)-shown)))
	}
	return panel.Box(t, "Headline metrics", strings.Join(lines, "\n"), w, h)
}

// histTitle names what the histogram shows: the distribution of the samples behind
// the row's figure ("TTFT (ms) per request", "pp512 t/s per repetition"), not the
// figure itself (it said "Mean TTFT (ms)").
func histTitle(r report.DocRow) string {
	if r.Repeats {
		return r.Label() + " per repetition"
	}
	what := strings.TrimPrefix(r.Metric, "Mean ")
	per := " per request"
	if strings.HasPrefix(what, "ITL") {
		per = " per token gap"
	}
	return strings.TrimSpace(r.Group+" "+what) + per
}

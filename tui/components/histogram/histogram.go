// Package histogram draws a streaming latency histogram as horizontal bars with their
// counts, and a p50/p90/p99 line under them.
package histogram

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"charm.land/lipgloss/v2"

	"llmbench/tui/components/panel"
	"llmbench/tui/theme"
)

// KeyMap is empty: the screen that holds a histogram decides what it shows.
type KeyMap struct{}

// Bucket is one bar: the values in [Lo, Hi).
type Bucket struct {
	Lo, Hi float64
	Count  int64
}

// maxSamples bounds the raw samples kept; when full, every other one is dropped,
// which keeps the shape of the distribution.
const maxSamples = 1 << 16

// Model holds the samples (or buckets given from outside) and draws them.
type Model struct {
	theme   theme.Theme
	w, h    int
	samples []float64
	given   []Bucket
	gp      [3]float64
	Unit    string
}

// New returns an empty histogram of values in unit.
func New(t theme.Theme, unit string) Model { return Model{theme: t, Unit: unit, w: 40, h: 8} }

// SetSize sets the area: bars take h-1 lines, the percentile line the last.
func (m *Model) SetSize(w, h int) { m.w, m.h = w, h }

// Add records one sample.
func (m *Model) Add(v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return
	}
	m.given = nil
	if len(m.samples) >= maxSamples {
		k := 0
		for i := 0; i < len(m.samples); i += 2 {
			m.samples[k] = m.samples[i]
			k++
		}
		m.samples = m.samples[:k]
	}
	m.samples = append(m.samples, v)
}

// SetBuckets shows fine buckets computed elsewhere (an HDR histogram) with their
// percentiles, replacing the samples.
func (m *Model) SetBuckets(b []Bucket, p50, p90, p99 float64) {
	m.samples, m.given, m.gp = nil, b, [3]float64{p50, p90, p99}
}

// Reset forgets every sample.
func (m *Model) Reset() { m.samples, m.given = nil, nil }

// Count returns the number of samples shown.
func (m Model) Count() int64 {
	var n int64
	for _, b := range m.Buckets() {
		n += b.Count
	}
	return n
}

// Percentile returns the p-th percentile (0–100) of the samples with linear
// interpolation between closest ranks (numpy's default).
func Percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	r := p / 100 * float64(len(sorted)-1)
	lo := int(math.Floor(r))
	hi := min(lo+1, len(sorted)-1)
	return sorted[lo] + (sorted[hi]-sorted[lo])*(r-float64(lo))
}

// Percentiles returns p50, p90 and p99.
func (m Model) Percentiles() (p50, p90, p99 float64) {
	if m.given != nil {
		return m.gp[0], m.gp[1], m.gp[2]
	}
	s := slices.Clone(m.samples)
	slices.Sort(s)
	return Percentile(s, 50), Percentile(s, 90), Percentile(s, 99)
}

// edges returns 1-2-5 edges from below lo to above hi (from 0 when lo ≤ 0).
func edges(lo, hi float64) []float64 {
	base := lo
	if base <= 0 {
		base = max(hi/100, 1e-9)
	}
	step := math.Pow(10, math.Floor(math.Log10(base)))
	out := []float64{step}
	for _, f := range []float64{2, 5} {
		if f*step <= base {
			out = []float64{f * step}
		}
	}
	if lo < out[0] {
		out = append([]float64{min(0, lo)}, out...)
	}
	for len(out) < 64 {
		last := out[len(out)-1]
		if last > hi {
			break
		}
		d := last / math.Pow(10, math.Floor(math.Log10(last)+1e-9))
		switch {
		case d < 1.5:
			out = append(out, last*2)
		case d < 3:
			out = append(out, last*2.5)
		default:
			out = append(out, last*2)
		}
	}
	return out
}

// countIn returns how many bins of e the range [lo, hi] spans.
func countIn(e []float64, lo, hi float64) int {
	n := 0
	for i := 0; i+1 < len(e); i++ {
		if e[i+1] > lo && e[i] <= hi {
			n++
		}
	}
	return n
}

// linear returns about n equal bins on a round step covering [lo, hi].
func linear(lo, hi float64, n int) []float64 {
	raw := (hi - lo) / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, f := range []float64{1, 2, 2.5, 5, 10} {
		if f*mag >= raw {
			step = f * mag
			break
		}
	}
	start := math.Floor(lo/step) * step
	var out []float64
	for v := start; len(out) < 2 || out[len(out)-1] <= hi; v += step {
		out = append(out, v)
	}
	return out
}

// Buckets returns the bars: at most h-1 of them, on 1-2-5 edges (buckets given with
// SetBuckets are re-binned by their midpoints).
func (m Model) Buckets() []Bucket {
	type point struct {
		v float64
		n int64
	}
	var pts []point
	for _, v := range m.samples {
		pts = append(pts, point{v, 1})
	}
	for _, b := range m.given {
		if b.Count > 0 {
			pts = append(pts, point{(b.Lo + b.Hi) / 2, b.Count})
		}
	}
	if len(pts) == 0 {
		return nil
	}
	lo, hi := pts[0].v, pts[0].v
	for _, p := range pts {
		lo, hi = min(lo, p.v), max(hi, p.v)
	}
	e := edges(lo, hi)
	if span := countIn(e, lo, hi); span < 4 && hi > lo { // a narrow range: linear bins read better
		e = linear(lo, hi, min(6, max(1, m.h-1)))
	}
	bs := make([]Bucket, len(e)-1)
	for i := range bs {
		bs[i] = Bucket{Lo: e[i], Hi: e[i+1]}
	}
	for _, p := range pts {
		i, _ := slices.BinarySearch(e, p.v)
		if i < len(e) && e[i] == p.v {
			i++
		}
		bs[min(max(i-1, 0), len(bs)-1)].Count += p.n
	}
	for len(bs) > 1 && bs[0].Count == 0 {
		bs = bs[1:]
	}
	for len(bs) > 1 && bs[len(bs)-1].Count == 0 {
		bs = bs[:len(bs)-1]
	}
	for len(bs) > max(1, m.h-1) { // merge neighbours until they fit
		var merged []Bucket
		for i := 0; i < len(bs); i += 2 {
			b := bs[i]
			if i+1 < len(bs) {
				b.Hi, b.Count = bs[i+1].Hi, b.Count+bs[i+1].Count
			}
			merged = append(merged, b)
		}
		bs = merged
	}
	return bs
}

// View renders the bars and the percentile line.
func (m Model) View() string {
	t := m.theme
	bs := m.Buckets()
	if len(bs) == 0 {
		return strings.Join(panel.Lines(t.Dim.Render("waiting for samples…"), m.w, m.h), "\n")
	}
	counts := make([]string, len(bs))
	var top int64
	for i, b := range bs {
		counts[i], top = fmt.Sprint(b.Count), max(top, b.Count)
	}
	labels, scale := layout(bs, counts, top, m.w)
	var lines []string
	for i, b := range bs {
		lines = append(lines, labels[i]+" "+t.Bar.Render(strings.Repeat("█", scale(b.Count)))+" "+counts[i])
	}
	p50, p90, p99 := m.Percentiles()
	for len(lines) < m.h-1 {
		lines = append(lines, "")
	}
	lines = append(lines, t.Dim.Render(fmt.Sprintf("p50 %s · p90 %s · p99 %s %s", num(p50), num(p90), num(p99), m.Unit)))
	return strings.Join(panel.Lines(strings.Join(lines, "\n"), m.w, m.h), "\n")
}

// layout returns each bucket's range as a label right-aligned to the widest, and the
// bar length of a count (top fills the line; any count > 0 gets a cell) for lines w
// wide that end in the given count texts.
func layout(bs []Bucket, counts []string, top int64, w int) (labels []string, scale func(int64) int) {
	lw, cw := 0, 0
	for i, b := range bs {
		labels = append(labels, num(b.Lo)+"-"+num(b.Hi))
		lw, cw = max(lw, len(labels[i])), max(cw, len(counts[i]))
	}
	for i := range labels {
		labels[i] = strings.Repeat(" ", lw-len(labels[i])) + labels[i]
	}
	bw := max(1, w-lw-cw-3)
	return labels, func(c int64) int {
		n := 0
		if top > 0 {
			n = int(float64(c) / float64(top) * float64(bw))
		}
		if c > 0 && n == 0 {
			n = 1
		}
		return n
	}
}

// num formats a bucket edge or a percentile compactly.
func num(v float64) string {
	switch {
	case v >= 100 || v == math.Trunc(v):
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2g", v)
	}
}

// Overlay glyphs: run A fills the upper half of a cell, run B the lower half, and a
// cell both reach is full.
const (
	GlyphA    = "▀"
	GlyphB    = "▄"
	GlyphBoth = "█"
)

// Overlay draws two sample sets over the same bins, one bin a line: A's bar in the
// upper half of the cells (▀, A's colour), B's in the lower half (▄, B's colour),
// full (█) where both reach, then both counts; the last line holds both medians.
// Colour only repeats what the glyphs say.
func Overlay(t theme.Theme, a, b []float64, unit string, w, h int) string {
	all := append(slices.Clone(a), b...)
	m := Model{theme: t, w: w, h: h}
	for _, v := range all {
		m.Add(v)
	}
	bs := m.Buckets()
	if len(bs) == 0 {
		return strings.Join(panel.Lines(t.Dim.Render("no samples to draw"), w, h), "\n")
	}
	count := func(x []float64) []int64 {
		n := make([]int64, len(bs))
		for _, v := range x {
			i, _ := slices.BinarySearchFunc(bs, v, func(b Bucket, v float64) int {
				switch {
				case b.Hi <= v:
					return -1
				case b.Lo > v:
					return 1
				}
				return 0
			})
			n[min(i, len(bs)-1)]++
		}
		return n
	}
	ca, cb := count(a), count(b)
	counts := make([]string, len(bs))
	var top int64
	for i := range bs {
		counts[i], top = fmt.Sprintf("%d/%d", ca[i], cb[i]), max(top, ca[i], cb[i])
	}
	labels, scale := layout(bs, counts, top, w)
	sa, sb := t.Series[0], t.Series[1]
	both := lipgloss.NewStyle()
	glyphBoth := GlyphBoth
	if t.Mode == theme.Color { // upper half in A's colour over B's as background
		both = sa.Background(sb.GetForeground())
		glyphBoth = GlyphA
	}
	var lines []string
	for i := range bs {
		na, nb := scale(ca[i]), scale(cb[i])
		bar := both.Render(strings.Repeat(glyphBoth, min(na, nb)))
		if na > nb {
			bar += sa.Render(strings.Repeat(GlyphA, na-nb))
		} else if nb > na {
			bar += sb.Render(strings.Repeat(GlyphB, nb-na))
		}
		lines = append(lines, labels[i]+" "+bar+" "+counts[i])
	}
	for len(lines) < h-1 {
		lines = append(lines, "")
	}
	med := func(x []float64) string {
		s := slices.Clone(x)
		slices.Sort(s)
		if len(s) == 0 {
			return "-"
		}
		return num(Percentile(s, 50))
	}
	lines = append(lines, t.Dim.Render(fmt.Sprintf("p50 A %s · B %s %s (counts A/B)", med(a), med(b), unit)))
	return strings.Join(panel.Lines(strings.Join(lines, "\n"), w, h), "\n")
}

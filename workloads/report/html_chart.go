package report

import (
	"fmt"
	"html"
	"math"
	"slices"
	"strconv"
	"strings"

	"llmbench/workloads/metrics"
)

// The HTML report's charts are inline SVG written here: a fixed coordinate system
// (viewBox) scaled to the page's width by CSS, colours from CSS classes so the page's
// light and dark schemes both apply, and no script.

// Chart geometry in SVG user units: two charts side by side fill a laptop screen.
const (
	chartW    = 560
	chartH    = 320
	chartTop  = 52 // title, subtitle and legend
	chartBot  = 50 // tick labels and the x-axis title
	chartLeft = 70 // tick labels and the y-axis title
	chartRt   = 24
)

// histMarks are the percentiles a histogram marks.
var histMarks = []float64{50, 90, 99}

// esc escapes text for HTML and XML alike.
func esc(s string) string { return html.EscapeString(s) }

// num formats a chart figure with two decimals (vLLM's and llama-bench's precision).
func num(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

// axis is a linear scale: the data range it shows and its tick values.
type axis struct {
	lo, hi, step float64
	ticks        []float64
}

// niceAxis returns an axis covering [lo, hi] with about n ticks at 1, 2 or 5 × 10^k;
// zero extends it to include 0.
func niceAxis(lo, hi float64, n int, zero bool) axis {
	if zero {
		lo, hi = min(lo, 0), max(hi, 0)
	}
	if !(hi > lo) { // equal, or NaN
		pad := math.Abs(lo) * 0.1
		if pad == 0 {
			pad = 1
		}
		lo, hi = lo-pad, hi+pad
		if zero && lo < 0 && hi > 0 && lo+pad >= 0 {
			lo = 0
		}
	}
	raw := (hi - lo) / float64(n)
	e := math.Floor(math.Log10(raw))
	mag := math.Pow(10, e)
	m := 10.0
	for _, c := range []float64{1, 2, 5} {
		if raw <= c*mag*(1+1e-9) {
			m = c
			break
		}
	}
	// k·m·10^e, divided rather than multiplied for e < 0 so that 3·0.1 prints 0.3.
	at := func(k float64) float64 {
		if e < 0 {
			return k * m / math.Pow(10, -e)
		}
		return k * m * mag
	}
	step := at(1)
	first, last := math.Floor(lo/step+1e-9), math.Ceil(hi/step-1e-9)
	a := axis{lo: at(first), hi: at(last), step: step}
	for k := first; k <= last; k++ {
		a.ticks = append(a.ticks, at(k))
	}
	return a
}

// label formats a tick value with the decimals its step needs.
func (a axis) label(v float64) string {
	dec := max(0, int(-math.Floor(math.Log10(a.step)+1e-9)))
	if math.Abs(v) < a.step/1e6 {
		v = 0
	}
	return strconv.FormatFloat(v, 'f', dec, 64)
}

// svgChart is one chart being written: its frame (plot area in user units) and scales.
type svgChart struct {
	b                        strings.Builder
	x, y                     axis
	left, top, right, bottom float64
}

// px maps a data x to user units.
func (c *svgChart) px(v float64) float64 {
	return c.left + (v-c.x.lo)/(c.x.hi-c.x.lo)*(c.right-c.left)
}

// py maps a data y to user units (up is larger).
func (c *svgChart) py(v float64) float64 {
	return c.bottom - (v-c.y.lo)/(c.y.hi-c.y.lo)*(c.bottom-c.top)
}

// f formats a coordinate.
func f(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// chartSpec is what every chart states: its title, a line under it, the axis titles
// (with units) and, for legends, the series names.
type chartSpec struct {
	kind, title, subtitle, xTitle, yTitle string
	legend                                []string
	height                                int
	left                                  int
}

// open starts a chart: the svg element, title, subtitle, legend, gridlines, ticks and
// axis titles. An x axis without ticks (bars by category) draws none.
func openChart(s chartSpec, x, y axis) *svgChart {
	h, left := s.height, s.left
	if h == 0 {
		h = chartH
	}
	if left == 0 {
		left = chartLeft
	}
	// Legend: rows under the subtitle, one entry per series (marker + name), wrapping;
	// the plot moves down by the rows it takes.
	type entry struct {
		x, y float64
		name string
	}
	var entries []entry
	lx, ly := 12.0, float64(chartTop)+6
	for _, name := range s.legend {
		w := 22 + float64(len([]rune(name)))*6.6 + 14
		if lx+w > chartW-chartRt && lx > 12 {
			lx, ly = 12, ly+18
		}
		entries = append(entries, entry{lx, ly, name})
		lx += w
	}
	top := float64(chartTop)
	if len(entries) > 0 {
		extra := ly - float64(chartTop) + 18
		top += extra
		h += int(extra)
	}
	c := &svgChart{x: x, y: y, left: float64(left), top: top, right: chartW - chartRt, bottom: float64(h - chartBot)}
	fmt.Fprintf(&c.b, `<svg class="chart" data-chart="%s" viewBox="0 0 %d %d" role="img" aria-label="%s">`, esc(s.kind), chartW, h, esc(s.title))
	fmt.Fprintf(&c.b, `<title>%s</title>`, esc(s.title))
	fmt.Fprintf(&c.b, `<text class="ct" x="12" y="20">%s</text>`, esc(s.title))
	if s.subtitle != "" {
		fmt.Fprintf(&c.b, `<text class="cs" x="12" y="38">%s</text>`, esc(s.subtitle))
	}
	for i, e := range entries {
		c.marker(i, e.x+6, e.y-4)
		fmt.Fprintf(&c.b, `<text class="lg" x="%s" y="%s">%s</text>`, f(e.x+16), f(e.y), esc(e.name))
	}
	if len(x.ticks) > 0 {
		for _, t := range x.ticks {
			xp := c.px(t)
			fmt.Fprintf(&c.b, `<line class="gr" x1="%s" y1="%s" x2="%s" y2="%s"/>`, f(xp), f(c.top), f(xp), f(c.bottom))
			fmt.Fprintf(&c.b, `<text class="tk" x="%s" y="%s" text-anchor="middle">%s</text>`, f(xp), f(c.bottom+16), x.label(t))
		}
	}
	if len(y.ticks) > 0 {
		for _, t := range y.ticks {
			yp := c.py(t)
			fmt.Fprintf(&c.b, `<line class="gr" x1="%s" y1="%s" x2="%s" y2="%s"/>`, f(c.left), f(yp), f(c.right), f(yp))
			fmt.Fprintf(&c.b, `<text class="tk" x="%s" y="%s" text-anchor="end">%s</text>`, f(c.left-6), f(yp+4), y.label(t))
		}
	}
	fmt.Fprintf(&c.b, `<line class="ax" x1="%s" y1="%s" x2="%s" y2="%s"/>`, f(c.left), f(c.bottom), f(c.right), f(c.bottom))
	fmt.Fprintf(&c.b, `<line class="ax" x1="%s" y1="%s" x2="%s" y2="%s"/>`, f(c.left), f(c.top), f(c.left), f(c.bottom))
	fmt.Fprintf(&c.b, `<text class="at" x="%s" y="%d" text-anchor="middle">%s</text>`, f((c.left+c.right)/2), h-10, esc(s.xTitle))
	if s.yTitle != "" {
		cy := (c.top + c.bottom) / 2
		fmt.Fprintf(&c.b, `<text class="at" x="16" y="%s" text-anchor="middle" transform="rotate(-90 16 %s)">%s</text>`, f(cy), f(cy), esc(s.yTitle))
	}
	return c
}

// marker draws series i's point marker at (x, y): a shape per series as well as a
// colour, so series stay apart without colour vision.
func (c *svgChart) marker(i int, x, y float64) {
	cls := fmt.Sprintf("mk s%d", i%8)
	const r = 4.5
	switch i % 4 {
	case 0:
		fmt.Fprintf(&c.b, `<circle class="%s" cx="%s" cy="%s" r="%s"/>`, cls, f(x), f(y), f(r))
	case 1:
		fmt.Fprintf(&c.b, `<rect class="%s" x="%s" y="%s" width="%s" height="%s"/>`, cls, f(x-r), f(y-r), f(2*r), f(2*r))
	case 2:
		fmt.Fprintf(&c.b, `<path class="%s" d="M%s %sL%s %sL%s %sZ"/>`, cls, f(x), f(y-r-1), f(x+r+1), f(y+r), f(x-r-1), f(y+r))
	default:
		fmt.Fprintf(&c.b, `<path class="%s" d="M%s %sL%s %sL%s %sL%s %sZ"/>`, cls, f(x), f(y-r-1), f(x+r+1), f(y), f(x), f(y+r+1), f(x-r-1), f(y))
	}
}

// close ends the chart and returns its SVG.
func (c *svgChart) close() string {
	c.b.WriteString(`</svg>`)
	return c.b.String()
}

// histogramSVG draws the distribution of samples (in unit) as a histogram with the
// p50, p90 and p99 marked; kind names the chart for the page ("hist-ttft").
func histogramSVG(kind, title, unit string, samples []float64) string {
	sorted := slices.Clone(samples)
	slices.Sort(sorted)
	lo, hi := sorted[0], sorted[len(sorted)-1]
	// A long tail would squeeze the body into a few bins: the axis ends a little past
	// the p99 instead, and a note under the axis counts the samples beyond it.
	p99 := metrics.PercentileSorted(sorted, 99)
	if cut := p99 + 0.5*(p99-lo); hi > cut {
		hi = cut
	}
	x := niceAxis(lo, hi, 6, false)
	// Bins: a whole number per tick step, about 1.5·√n of them (10 to 60).
	want := min(60, max(10, int(math.Ceil(1.5*math.Sqrt(float64(len(sorted)))))))
	steps := int(math.Round((x.hi - x.lo) / x.step))
	per := max(1, int(math.Round(float64(want)/float64(steps))))
	nb := steps * per
	width := (x.hi - x.lo) / float64(nb)
	counts := make([]int, nb)
	beyond := 0
	for _, v := range sorted {
		if v > x.hi {
			beyond++
			continue
		}
		i := min(nb-1, max(0, int((v-x.lo)/width)))
		counts[i]++
	}
	y := niceAxis(0, float64(slices.Max(counts)), 4, true)
	if y.step < 1 {
		y = niceAxis(0, max(1, float64(slices.Max(counts))), 4, true)
		y.step = 1
		y.ticks = nil
		for v := 0.0; v <= y.hi; v++ {
			y.ticks = append(y.ticks, v)
		}
	}
	marks := make([]float64, len(histMarks))
	sub := fmt.Sprintf("n=%d · mean %s", len(sorted), num(metrics.Mean(sorted)))
	for i, p := range histMarks {
		marks[i] = metrics.PercentileSorted(sorted, p)
		sub += fmt.Sprintf(" · p%s %s", vllmPercentileWord(p), num(marks[i]))
	}
	sub += " " + unit

	c := openChart(chartSpec{kind: kind, title: title, subtitle: sub, xTitle: title + " (" + unit + ")", yTitle: "count"}, x, y)
	if beyond > 0 {
		fmt.Fprintf(&c.b, `<text class="tk" x="%s" y="%d" text-anchor="end">%d beyond → max %s</text>`, f(c.right), chartH-10, beyond, num(sorted[len(sorted)-1]))
	}
	for i, n := range counts {
		if n == 0 {
			continue
		}
		x0 := c.px(x.lo + float64(i)*width)
		x1 := c.px(x.lo + float64(i+1)*width)
		y0 := c.py(float64(n))
		fmt.Fprintf(&c.b, `<rect class="bar s0" x="%s" y="%s" width="%s" height="%s"><title>%s–%s %s: %d</title></rect>`,
			f(x0+0.5), f(y0), f(max(0.5, x1-x0-1)), f(c.bottom-y0), num(x.lo+float64(i)*width), num(x.lo+float64(i+1)*width), esc(unit), n)
	}
	for i, p := range histMarks {
		xp := c.px(marks[i])
		name := "p" + vllmPercentileWord(p)
		fmt.Fprintf(&c.b, `<line class="mark m%d" x1="%s" y1="%s" x2="%s" y2="%s"><title>%s %s %s</title></line>`,
			i, f(xp), f(c.top), f(xp), f(c.bottom), name, num(marks[i]), esc(unit))
		anchor, dx := "start", 3.0
		if xp > (c.left+c.right)/2 {
			anchor, dx = "end", -3
		}
		fmt.Fprintf(&c.b, `<text class="ml" x="%s" y="%s" text-anchor="%s">%s</text>`, f(xp+dx), f(c.top+12+float64(i)*13), anchor, name)
	}
	return c.close()
}

// xyPoint is one point of a line chart, with an optional label drawn beside it.
type xyPoint struct {
	x, y  float64
	label string
}

// xySeries is one line of a line chart.
type xySeries struct {
	name string
	pts  []xyPoint
}

// lineSVG draws series as lines through their points, each point marked, labelled
// and titled with its figures; y starts at zero.
func lineSVG(kind, title, subtitle, xTitle, yTitle string, series []xySeries) string {
	xlo, xhi, yhi := math.Inf(1), math.Inf(-1), 0.0
	names := make([]string, len(series))
	for i, s := range series {
		names[i] = s.name
		for _, p := range s.pts {
			xlo, xhi, yhi = min(xlo, p.x), max(xhi, p.x), max(yhi, p.y)
		}
	}
	span := xhi - xlo
	if span == 0 {
		span = math.Abs(xhi)
	}
	zero := xlo >= 0 && xlo < span*0.5 // near zero: show it
	lo := xlo - span*0.05
	if xlo >= 0 {
		lo = max(0, lo)
	}
	x := niceAxis(lo, xhi+span*0.08, 6, zero)
	y := niceAxis(0, yhi*1.05, 5, true)
	legend := names
	if len(series) == 1 {
		legend = nil
	}
	c := openChart(chartSpec{kind: kind, title: title, subtitle: subtitle, xTitle: xTitle, yTitle: yTitle, legend: legend}, x, y)
	var placed []box
	type named struct {
		x, y  float64
		label string
	}
	var labelled []named // points labelled so far
	for _, s := range series {
		for _, p := range s.pts { // markers are taken space for labels
			placed = append(placed, box{c.px(p.x) - 5, c.py(p.y) - 5, c.px(p.x) + 5, c.py(p.y) + 5})
		}
	}
	for i, s := range series {
		var d strings.Builder
		for j, p := range s.pts {
			op := "L"
			if j == 0 {
				op = "M"
			}
			fmt.Fprintf(&d, "%s%s %s", op, f(c.px(p.x)), f(c.py(p.y)))
		}
		fmt.Fprintf(&c.b, `<path class="ln s%d" d="%s"/>`, i%8, d.String())
		for _, p := range s.pts {
			xp, yp := c.px(p.x), c.py(p.y)
			fmt.Fprintf(&c.b, `<g class="pt" data-x="%s" data-y="%s"><title>%s%s: %s = %s, %s = %s</title>`,
				num(p.x), num(p.y), esc(s.name), esc(labelSuffix(p.label)), esc(xTitle), num(p.x), esc(yTitle), num(p.y))
			c.marker(i, xp, yp)
			c.b.WriteString(`</g>`)
			// A point next to one of another series with the same label (mean and p99
			// of one sweep point) shares that label.
			near := slices.ContainsFunc(labelled, func(o named) bool {
				return o.label == p.label && math.Hypot(o.x-xp, o.y-yp) < 48
			})
			if p.label != "" && !near {
				c.pointLabel(&placed, xp, yp, p.label)
				labelled = append(labelled, named{xp, yp, p.label})
			}
		}
	}
	return c.close()
}

// box is a rectangle of the chart in user units (x0 < x1, y0 < y1).
type box struct{ x0, y0, x1, y1 float64 }

func (a box) overlaps(b box) bool { return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1 }

// pointLabel writes a point's label at the first spot around it (right above, right
// below, left above, left below, then further out) that overlaps no marker or label
// placed before and stays inside the plot; the last tried spot when none is free.
func (c *svgChart) pointLabel(placed *[]box, xp, yp float64, label string) {
	w, h := float64(len([]rune(label)))*6.4, 12.0
	type spot struct {
		dx, dy float64
		end    bool
	}
	var try []spot
	for _, r := range []float64{1, 2.2} {
		try = append(try, spot{7 * r, -7 * r, false}, spot{7 * r, 7*r + h - 2, false}, spot{-7 * r, -7 * r, true}, spot{-7 * r, 7*r + h - 2, true})
	}
	var b box
	var sp spot
	for _, sp = range try {
		x0 := xp + sp.dx
		if sp.end {
			x0 -= w
		}
		b = box{x0, yp + sp.dy - h + 2, x0 + w, yp + sp.dy + 2}
		if b.x0 < c.left || b.x1 > c.right || b.y0 < c.top || b.y1 > c.bottom {
			continue
		}
		if !slices.ContainsFunc(*placed, b.overlaps) {
			break
		}
	}
	*placed = append(*placed, b)
	anchor, x := "start", b.x0
	if sp.end {
		anchor, x = "end", b.x1
	}
	fmt.Fprintf(&c.b, `<text class="pl" x="%s" y="%s" text-anchor="%s">%s</text>`, f(x), f(b.y1-2), anchor, esc(label))
}

// labelSuffix is " (label)", or "" without a label.
func labelSuffix(label string) string {
	if label == "" {
		return ""
	}
	return " (" + label + ")"
}

// hbar is one bar of a horizontal bar chart: its label, value and ± error.
type hbar struct {
	label  string
	v, err float64
}

// barsSVG draws one horizontal bar per entry with a ± err whisker, value at its end;
// the label column widens to the longest label (up to a limit, then shortened).
func barsSVG(kind, title, subtitle, xTitle string, bars []hbar) string {
	const rowH, maxLabel = 28, 34
	longest := 0
	hi := 0.0
	for _, b := range bars {
		longest = max(longest, min(maxLabel, len([]rune(b.label))))
		hi = max(hi, b.v+b.err)
	}
	left := min(260, max(chartLeft, 16+int(float64(longest)*6.6)))
	x := niceAxis(0, hi*1.12, 5, true)
	h := chartTop + chartBot + 12 + rowH*len(bars)
	c := openChart(chartSpec{kind: kind, title: title, subtitle: subtitle, xTitle: xTitle, height: h, left: left}, x, axis{lo: 0, hi: 1, step: 1})
	for i, b := range bars {
		y0 := c.top + 6 + float64(i*rowH)
		label := b.label
		if r := []rune(label); len(r) > maxLabel {
			label = string(r[:maxLabel-1]) + "…"
		}
		fmt.Fprintf(&c.b, `<text class="tk" x="%s" y="%s" text-anchor="end">%s</text>`, f(c.left-8), f(y0+rowH/2), esc(label))
		x1 := c.px(b.v)
		fmt.Fprintf(&c.b, `<g class="hb" data-value="%s" data-err="%s"><title>%s: %s ± %s</title>`, num(b.v), num(b.err), esc(b.label), num(b.v), num(b.err))
		fmt.Fprintf(&c.b, `<rect class="bar s%d" x="%s" y="%s" width="%s" height="%d"/>`, i%8, f(c.left), f(y0+3), f(max(0, x1-c.left)), rowH-8)
		if b.err > 0 {
			ym := y0 + rowH/2 - 1
			xl, xr := c.px(max(0, b.v-b.err)), c.px(b.v+b.err)
			fmt.Fprintf(&c.b, `<path class="wh" d="M%s %sH%sM%s %sV%sM%s %sV%s"/>`, f(xl), f(ym), f(xr), f(xl), f(ym-5), f(ym+5), f(xr), f(ym-5), f(ym+5))
		}
		c.b.WriteString(`</g>`)
		text := num(b.v) + " ± " + num(b.err)
		if tx := c.px(b.v+b.err) + 6; tx+float64(len(text))*6.6 <= chartW {
			fmt.Fprintf(&c.b, `<text class="vl" x="%s" y="%s">%s</text>`, f(tx), f(y0+rowH/2+3), text)
		} else { // no room after the whisker: inside the bar, at its start
			fmt.Fprintf(&c.b, `<text class="vl in" x="%s" y="%s">%s</text>`, f(c.left+6), f(y0+rowH/2+3), text)
		}
	}
	return c.close()
}

package report

import (
	"encoding/xml"
	"errors"
	"html"
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"llmbench/workloads/metrics"
	"llmbench/workloads/result"
	"llmbench/workloads/serving"
	"llmbench/workloads/telemetry"
)

// renderHTML writes d's HTML report.
func renderHTML(t *testing.T, d result.Document) string {
	t.Helper()
	var b strings.Builder
	if err := DocumentHTML(&b, d); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

var svgRE = regexp.MustCompile(`(?s)<svg .*?</svg>`)

// htmlCharts parses every inline SVG of page as XML (failing on a malformed one) and
// returns the data-chart names in page order.
func htmlCharts(t *testing.T, page string) []string {
	t.Helper()
	svgs := svgRE.FindAllString(page, -1)
	if n := strings.Count(page, "<svg"); n != len(svgs) || n != strings.Count(page, "</svg>") {
		t.Fatalf("%d <svg, %d </svg>, %d matched", n, strings.Count(page, "</svg>"), len(svgs))
	}
	var names []string
	for _, s := range svgs {
		dec := xml.NewDecoder(strings.NewReader(s))
		for {
			tok, err := dec.Token()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("SVG is not well-formed XML: %v\n%s", err, s)
			}
			if el, ok := tok.(xml.StartElement); ok && el.Name.Local == "svg" {
				for _, a := range el.Attr {
					if a.Name.Local == "data-chart" {
						names = append(names, a.Value)
					}
				}
			}
		}
	}
	return names
}

// checkSelfContained fails when the page refers to anything outside itself.
func checkSelfContained(t *testing.T, page string) {
	t.Helper()
	for _, bad := range []string{"http://", "https://", "<script", "<link", " src=", "url(", "@import"} {
		if strings.Contains(page, bad) {
			t.Errorf("page contains %q", bad)
		}
	}
	if !strings.HasPrefix(page, "<!DOCTYPE html>") || !strings.Contains(page, "prefers-color-scheme:dark") {
		t.Error("not a standalone page with a dark scheme")
	}
}

func TestHTMLBench(t *testing.T) {
	d := benchDoc()
	d.Title = `<script>alert("x")</script> & run`
	page := renderHTML(t, d)
	checkSelfContained(t, page)
	if strings.Contains(page, `<script>alert`) || !strings.Contains(page, "&lt;script&gt;") {
		t.Error("title not escaped")
	}
	charts := htmlCharts(t, page)
	if !slices.Equal(charts, []string{"bench-pp512", "bench-tg128"}) {
		t.Errorf("charts %v, want a bar chart per test", charts)
	}
	if strings.Contains(page, `class="partial"`) {
		t.Error("complete run shows the partial banner")
	}
	// The table's cells and the bars' figures are the Document's.
	for i := range d.Bench.Records {
		r := &d.Bench.Records[i]
		for _, c := range lbTableColumns(d.Bench) {
			cls := ""
			if c.width > 0 {
				cls = ` class="r"`
			}
			if cell := "<td" + cls + ">" + c.cell(r) + "</td>"; !strings.Contains(html.UnescapeString(page), cell) {
				t.Errorf("table lacks %s", cell)
			}
		}
		if bar := `data-value="` + num(r.AvgTs()) + `" data-err="` + num(r.StddevTs()) + `"`; !strings.Contains(page, bar) {
			t.Errorf("no bar %s", bar)
		}
	}
	var notes strings.Builder
	lbNotes(&notes, d.Bench)
	if !strings.Contains(html.UnescapeString(page), notes.String()) {
		t.Error("notes missing")
	}
	for _, kv := range d.Env {
		if !strings.Contains(html.UnescapeString(page), "<th>"+kv.Key+"</th><td>"+kv.Value+"</td>") {
			t.Errorf("environment lacks %v", kv)
		}
	}

	d.Bench.Records[3].Partial = true
	page = renderHTML(t, d)
	if !strings.Contains(page, `class="partial"`) || !strings.Contains(page, "(partial)</text>") {
		t.Error("partial test not marked")
	}
}

func TestHTMLBenchPowerSweep(t *testing.T) {
	d := benchDoc()
	recs := d.Bench.Records
	for i := range recs {
		recs[i].PowerLimitW = []float64{400, 300}[i/2]
	}
	page := renderHTML(t, d)
	if charts := htmlCharts(t, page); !slices.Contains(charts, "power-ts") || slices.Contains(charts, "power-tj") {
		t.Errorf("charts %v: want tokens/s vs W only (no energy measured)", charts)
	}
	for i := range recs {
		recs[i].Telemetry = &telemetry.Power{Source: "gpu", Samples: 10, Seconds: 1, MeanW: recs[i].PowerLimitW - 5, EnergyJ: 100 + float64(i)}
	}
	page = renderHTML(t, d)
	charts := htmlCharts(t, page)
	if !slices.Contains(charts, "power-ts") || !slices.Contains(charts, "power-tj") {
		t.Errorf("charts %v: want both power charts", charts)
	}
	for i := range recs {
		r := &recs[i]
		for _, pt := range []string{
			`data-x="` + num(r.PowerLimitW) + `" data-y="` + num(r.AvgTs()) + `"`,
			`data-x="` + num(r.PowerLimitW) + `" data-y="` + num(r.TokensPerJoule()) + `"`,
		} {
			if !strings.Contains(page, pt) {
				t.Errorf("no point %s", pt)
			}
		}
	}
	// One limit is no sweep.
	for i := range recs {
		recs[i].PowerLimitW = 300
	}
	if charts := htmlCharts(t, renderHTML(t, d)); slices.ContainsFunc(charts, func(c string) bool { return strings.HasPrefix(c, "power-") }) {
		t.Errorf("charts %v with a single limit", charts)
	}
}

func TestHTMLServing(t *testing.T) {
	d := servingDoc()
	d.Serving = d.Serving[:1]
	page := renderHTML(t, d)
	checkSelfContained(t, page)
	charts := htmlCharts(t, page)
	if !slices.Equal(charts, []string{"hist-ttft", "hist-tpot", "hist-itl", "hist-e2el"}) {
		t.Errorf("charts %v, want the four histograms", charts)
	}
	res := d.Serving[0]
	var block strings.Builder
	VLLMBlock(&block, res)
	if !strings.Contains(html.UnescapeString(page), block.String()) {
		t.Error("vLLM block missing")
	}
	// Histogram marks are the raw samples' percentiles, as the block computes them.
	samples := RequestSamples(res.Records)
	for _, key := range LatencyMetrics {
		s := slices.Clone(samples[key])
		slices.Sort(s)
		for _, p := range histMarks {
			want := num(metrics.PercentileSorted(s, p))
			if !strings.Contains(page, "<title>p"+vllmPercentileWord(p)+" "+want+" ms</title>") {
				t.Errorf("%s: no p%v mark at %s ms", key, p, want)
			}
		}
	}
	if v, _ := res.Summary.TTFT.Percentile(50); !strings.Contains(page, "p50 "+num(v)+" ms") {
		t.Errorf("TTFT p50 %v not marked", v)
	}

	// Single-token outputs: no TPOT and no ITL samples, so no such charts.
	one := sampleResult()
	for i := range one.Records {
		one.Records[i].OutputTokens, one.Records[i].ITL = 1, nil
	}
	one.Summary = serving.Summarize(one)
	charts = htmlCharts(t, renderHTML(t, result.Document{Serving: []*serving.Result{one}}))
	if !slices.Equal(charts, []string{"hist-ttft", "hist-e2el"}) {
		t.Errorf("charts %v, want TTFT and E2EL only", charts)
	}
}

func TestHTMLServingSweep(t *testing.T) {
	d := servingDoc()
	ms := time.Millisecond
	c := sampleResult() // a third point, slower, with more throughput
	c.Spec.MaxConcurrency = 16
	for i := range c.Records {
		c.Records[i].TTFT += 40 * ms
		c.Records[i].Latency += 60 * ms
	}
	c.Duration = time.Second
	c.Summary = serving.Summarize(c)
	d.Serving = append(d.Serving, c)
	d.Serving[1].Partial = true
	page := renderHTML(t, d)
	checkSelfContained(t, page)
	charts := htmlCharts(t, page)
	want := []string{"curve-tpot", "curve-ttft"}
	for range d.Serving {
		want = append(want, "hist-ttft", "hist-tpot", "hist-itl", "hist-e2el")
	}
	if !slices.Equal(charts, want) {
		t.Errorf("charts %v, want %v", charts, want)
	}
	var sweep strings.Builder
	VLLMSweepTable(&sweep, d.Serving)
	if !strings.Contains(html.UnescapeString(page), sweep.String()) {
		t.Error("sweep table missing")
	}
	if !strings.Contains(page, `class="partial"`) || !strings.Contains(page, "concurrency 8, rate 10.0 (partial)") {
		t.Error("partial point not marked")
	}
	// One point per sweep point: x the mean TPOT, y the output throughput, labelled.
	for i, r := range d.Serving {
		pt := `data-x="` + num(r.Summary.TPOT.Mean) + `" data-y="` + num(r.Summary.OutputThroughput) + `"`
		if !strings.Contains(page, pt) {
			t.Errorf("point %d: no %s", i, pt)
		}
		if label := ">c=" + r.Spec.ConcurrencyLabel() + "</text>"; !strings.Contains(page, label) {
			t.Errorf("point %d: no label %s", i, label)
		}
	}
	if strings.Contains(page, "power-") {
		t.Error("power charts without a power sweep")
	}
	// Power limits swept at one concurrency: the power charts appear.
	for i, r := range d.Serving {
		r.Spec.MaxConcurrency = 4
		r.PowerLimitW = []float64{400, 300, 200}[i]
		r.Telemetry = &telemetry.Power{Source: "gpu", Samples: 5, Seconds: 1, MeanW: r.PowerLimitW, EnergyJ: 50}
	}
	charts = htmlCharts(t, renderHTML(t, d))
	if !slices.Contains(charts, "power-ts") || !slices.Contains(charts, "power-tj") {
		t.Errorf("charts %v: want the power charts", charts)
	}
}

func TestNiceAxis(t *testing.T) {
	for _, c := range []struct {
		lo, hi   float64
		zero     bool
		wantLo   float64
		wantHi   float64
		wantStep float64
	}{
		{0.3, 0.7, false, 0.3, 0.7, 0.1},
		{3, 97, true, 0, 100, 20},
		{5, 5, false, 4.4, 5.6, 0.2},
		{0, 0, true, 0, 1, 0.2},
		{1234, 9876, false, 0, 10000, 2000},
	} {
		a := niceAxis(c.lo, c.hi, 5, c.zero)
		if !approx(a.lo, c.wantLo) || !approx(a.hi, c.wantHi) || !approx(a.step, c.wantStep) {
			t.Errorf("niceAxis(%v, %v) = [%v, %v] step %v, want [%v, %v] step %v", c.lo, c.hi, a.lo, a.hi, a.step, c.wantLo, c.wantHi, c.wantStep)
		}
		if a.lo > c.lo || a.hi < c.hi || len(a.ticks) < 2 {
			t.Errorf("niceAxis(%v, %v) = %+v does not cover the data", c.lo, c.hi, a)
		}
	}
}

func approx(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

// TestHTMLUnescapedText: figures in the page read as text equal the Document's (the
// page escapes, never alters).
func TestHTMLUnescapedText(t *testing.T) {
	d := benchDoc()
	page := html.UnescapeString(renderHTML(t, d))
	if !strings.Contains(page, "Test CPU | 2 threads") {
		t.Error("environment value altered")
	}
}

// TestChartsDegenerate: one sample, equal samples, zeros, a huge tail, one point and
// zero values still give well-formed charts with finite coordinates.
func TestChartsDegenerate(t *testing.T) {
	var svgs []string
	for _, s := range [][]float64{{5}, {3, 3, 3}, {0, 0}, {1, 1, 1, 1, 1, 1, 1, 1e6}, {-1, 2}} {
		svgs = append(svgs, histogramSVG("hist-x", "X", "ms", s))
	}
	svgs = append(svgs,
		lineSVG("l", "t", "", "x", "y", []xySeries{{name: "a", pts: []xyPoint{{x: 2, y: 0, label: "p"}}}}),
		lineSVG("l", "t", "", "x", "y", []xySeries{{name: "a", pts: []xyPoint{{x: 0, y: 0}, {x: 0, y: 0}}}}),
		barsSVG("b", "t", "", "x", []hbar{{label: "zero", v: 0}, {label: strings.Repeat("long ", 20), v: 1, err: 2}}),
	)
	page := strings.Join(svgs, "\n")
	htmlCharts(t, page)
	for _, bad := range []string{"NaN", "Inf"} {
		if strings.Contains(page, bad) {
			t.Errorf("%s in a chart:\n%s", bad, page)
		}
	}
}

// TestHTMLEscapesHostileText: a title, model name, environment entry and section
// title carrying markup reach the page as text only (html/template escapes them where
// they land, charts included), and read back unchanged.
func TestHTMLEscapesHostileText(t *testing.T) {
	const hostile = `<script>alert("x")</script><img onerror='y'>&`
	d := benchDoc()
	d.Title = hostile
	d.Env = append(d.Env, result.KV{Key: hostile, Value: hostile})
	for i := range d.Bench.Records {
		d.Bench.Records[i].ModelType = hostile + string(rune('a'+i))
	}
	k := kernelsDoc()
	k.Kernels.Sections[0].Title = hostile
	k.Title = hostile
	for _, doc := range []result.Document{d, k} {
		page := renderHTML(t, doc)
		checkSelfContained(t, page)
		for _, bad := range []string{"<img", "onerror='", `alert("`} {
			if strings.Contains(page, bad) {
				t.Errorf("page contains unescaped %q", bad)
			}
		}
		htmlCharts(t, page)
		if un := html.UnescapeString(page); strings.Count(un, hostile) < 3 {
			t.Errorf("hostile text does not read back as text (%d times)", strings.Count(un, hostile))
		}
	}
}

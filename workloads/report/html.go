package report

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strings"

	"llmbench/workloads/metrics"
	"llmbench/workloads/micro"
	"llmbench/workloads/result"
	"llmbench/workloads/serving"
)

// htmlStyle is the report's stylesheet: light and dark schemes (prefers-color-scheme)
// and the Okabe–Ito palette, which stays distinct under the common colour-vision
// deficiencies.
var htmlStyle = `
:root{color-scheme:light dark;--bg:#ffffff;--fg:#1d1f23;--muted:#5d636b;--grid:#e3e5e8;--axis:#8a9099;--panel:#f6f7f9;--border:#d7dade;
--warn-bg:#fff4d6;--warn-fg:#6b4a00;--warn-border:#e6b800;
--c0:#0072B2;--c1:#E69F00;--c2:#009E73;--c3:#CC79A7;--c4:#56B4E9;--c5:#D55E00;--c6:#F0E442;--c7:#000000;
--m0:#D55E00;--m1:#CC79A7;--m2:#000000}
@media (prefers-color-scheme:dark){:root{--bg:#15171a;--fg:#e4e6e9;--muted:#a0a6ad;--grid:#2c3036;--axis:#6b717a;--panel:#1d2024;--border:#343840;
--warn-bg:#3a2f0b;--warn-fg:#ffe08a;--warn-border:#b38f00;
--c0:#56B4E9;--c1:#E69F00;--c2:#009E73;--c3:#CC79A7;--c4:#0072B2;--c5:#D55E00;--c6:#F0E442;--c7:#ffffff;
--m0:#F0E442;--m1:#CC79A7;--m2:#ffffff}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
main{max-width:1220px;margin:0 auto;padding:20px 24px 48px}
h1{font-size:1.6em;margin:0 0 4px}h2{font-size:1.25em;margin:28px 0 10px;border-bottom:1px solid var(--border);padding-bottom:4px}
h3{font-size:1.05em;margin:18px 0 8px}
.meta{color:var(--muted);margin:0 0 12px}
.partial{background:var(--warn-bg);color:var(--warn-fg);border:1px solid var(--warn-border);border-left-width:6px;padding:10px 14px;border-radius:4px;font-weight:600;margin:12px 0}
table{border-collapse:collapse;font-variant-numeric:tabular-nums;margin:6px 0 10px}
th,td{padding:4px 10px;border-bottom:1px solid var(--border);text-align:left;white-space:nowrap}
th{background:var(--panel);font-weight:600}td.r,th.r{text-align:right}
.scroll{overflow-x:auto}
pre{background:var(--panel);border:1px solid var(--border);border-radius:4px;padding:10px 12px;overflow-x:auto;font:13px/1.35 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(520px,1fr));gap:14px;margin:8px 0 14px}
figure{margin:0;background:var(--panel);border:1px solid var(--border);border-radius:6px;padding:6px}
svg.chart{display:block;width:100%;height:auto;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
svg .ct{font-size:15px;font-weight:600;fill:var(--fg)}svg .cs{font-size:12px;fill:var(--muted)}
svg .tk{font-size:11.5px;fill:var(--muted)}svg .at{font-size:12.5px;fill:var(--fg)}svg .lg{font-size:12px;fill:var(--fg)}
svg .gr{stroke:var(--grid);stroke-width:1}svg .ax{stroke:var(--axis);stroke-width:1.2}
svg .bar{opacity:.85}svg .wh{stroke:var(--fg);stroke-width:1.4;fill:none}
svg .vl{font-size:11.5px;fill:var(--fg)}svg .vl.in{fill:#ffffff;font-weight:600}
svg .ln{fill:none;stroke-width:2.2}svg .pl{font-size:11.5px;fill:var(--fg)}
svg .mark{stroke-width:1.8}svg .m0{stroke:var(--m0)}svg .m1{stroke:var(--m1);stroke-dasharray:6 3}svg .m2{stroke:var(--m2);stroke-dasharray:2 3}
svg .ml{font-size:11.5px;font-weight:600;fill:var(--fg)}
` + htmlSeriesStyle

// htmlSeriesStyle colours series s0..s7: bars and markers filled, lines stroked.
var htmlSeriesStyle = func() string {
	var b strings.Builder
	for i := range 8 {
		fmt.Fprintf(&b, "svg .bar.s%d,svg .mk.s%d{fill:var(--c%d)}svg .ln.s%d{stroke:var(--c%d)}\n", i, i, i, i, i)
	}
	return b.String()
}()

// htmlCell is one table cell: a header cell (th) or a data cell (td), right-aligned
// where llama-bench right-aligns (numbers).
type htmlCell struct {
	Text        string
	Head, Right bool
}

// htmlTable is a table's rows of cells; Class names it for the stylesheet ("results",
// "env"), none when empty.
type htmlTable struct {
	Class string
	Rows  [][]htmlCell
}

// htmlBlock is one piece of the report's body, in page order: exactly one of a
// heading, a table, a preformatted text or a row of charts.
type htmlBlock struct {
	Heading string
	Table   *htmlTable
	Pre     string
	// Charts are inline SVGs built by html_chart.go, which escapes every text it
	// places in them; they are the only markup the page takes as is.
	Charts []template.HTML
}

// htmlPage accumulates the report's body as blocks; htmlPageTemplate renders them,
// escaping every text by its context (html/template), so no caller escapes by hand.
type htmlPage struct {
	blocks []htmlBlock
}

// heading adds a section heading (h2).
func (p *htmlPage) heading(text string) { p.blocks = append(p.blocks, htmlBlock{Heading: text}) }

// table adds a table of rows (class names it for the stylesheet; none when empty).
func (p *htmlPage) table(class string, rows [][]htmlCell) {
	p.blocks = append(p.blocks, htmlBlock{Table: &htmlTable{Class: class, Rows: rows}})
}

// pre adds console text (vLLM's block, llama-bench's notes) as a preformatted block;
// nothing when it is blank.
func (p *htmlPage) pre(text string) {
	if strings.TrimSpace(text) != "" {
		p.blocks = append(p.blocks, htmlBlock{Pre: text})
	}
}

// charts adds SVG charts side by side, each in a figure; nothing when there are none.
func (p *htmlPage) charts(svgs []string) {
	if len(svgs) == 0 {
		return
	}
	b := htmlBlock{Charts: make([]template.HTML, len(svgs))}
	for i, s := range svgs {
		b.Charts[i] = template.HTML(s) // trusted: built, and its text escaped, by html_chart.go
	}
	p.blocks = append(p.blocks, b)
}

// htmlPageData is what htmlPageTemplate renders.
type htmlPageData struct {
	Title, Meta, Partial string
	Style                template.CSS
	Blocks               []htmlBlock
}

// htmlPageTemplate is the page: html/template escapes each text for where it lands
// (title, heading, cell, pre), which hand escaping got right only by care at every
// call. The literal newlines keep the markup line for line as before.
var htmlPageTemplate = template.Must(template.New("page").Parse(
	"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n" +
		"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{{.Title}}</title>\n<style>{{.Style}}</style>\n</head>\n" +
		"<body>\n<main>\n<h1>{{.Title}}</h1>\n<p class=\"meta\">{{.Meta}}</p>\n" +
		"{{with .Partial}}<div class=\"partial\" role=\"alert\" id=\"partial\">{{.}}</div>\n{{end}}" +
		"{{range .Blocks}}{{template \"block\" .}}{{end}}" +
		"</main>\n</body>\n</html>\n" +
		"{{define \"block\"}}" +
		"{{with .Heading}}<h2>{{.}}</h2>\n{{end}}" +
		"{{with .Table}}<div class=\"scroll\"><table{{with .Class}} class=\"{{.}}\"{{end}}>\n" +
		"{{range .Rows}}<tr>{{range .}}" +
		"{{if .Head}}<th{{if .Right}} class=\"r\"{{end}}>{{.Text}}</th>{{else}}<td{{if .Right}} class=\"r\"{{end}}>{{.Text}}</td>{{end}}" +
		"{{end}}</tr>\n{{end}}</table></div>\n{{end}}" +
		"{{with .Pre}}<pre>{{.}}</pre>\n{{end}}" +
		"{{with .Charts}}<div class=\"charts\">{{range .}}<figure>{{.}}</figure>\n{{end}}</div>\n{{end}}" +
		"{{end}}"))

// DocumentHTML writes d as one self-contained HTML page (inline CSS and SVG, no
// script, no external reference; readable offline and in light or dark mode): the
// environment, the run's tables (llama-bench's table, or vLLM's block per sweep point
// and the sweep table) and charts: tokens/s per test with ± std whiskers (bench),
// latency histograms with p50/p90/p99 marks and the throughput–latency curve
// (serve-bench), and tokens/s and tokens/J against the power limit when one was swept.
func DocumentHTML(w io.Writer, d result.Document) error {
	var p htmlPage
	title := d.Title
	if title == "" {
		title = "llmbench run"
	}
	kind := "serve-bench"
	if d.Bench != nil {
		kind = "bench"
	}
	if d.Kernels != nil {
		kind = "kernels · " + d.Kernels.Spec.Suite
	}
	if d.Batch != nil {
		kind = "batch"
	}
	meta := kind
	if !d.Started.IsZero() {
		meta += " · started " + d.Started.UTC().Format("2006-01-02 15:04:05 UTC")
	}
	data := htmlPageData{Title: title, Meta: meta, Style: template.CSS(htmlStyle)} // trusted: our constant stylesheet
	if d.IsPartial() {
		data.Partial = partialNote
	}
	if d.Bench != nil {
		benchHTML(&p, d.Bench)
	}
	if len(d.Serving) > 0 {
		servingHTML(&p, d.Serving)
	}
	if d.Kernels != nil {
		kernelsHTML(&p, d.Kernels)
	}
	if d.Batch != nil {
		var b bytes.Buffer
		if err := TGIReport(&b, d.Batch); err != nil {
			return err
		}
		p.heading("TGI benchmark")
		p.charts(tgiCharts(d.Batch))
		p.pre(b.String())
	}
	if len(d.Env) > 0 {
		rows := make([][]htmlCell, len(d.Env))
		for i, kv := range d.Env {
			rows[i] = []htmlCell{{Text: kv.Key, Head: true}, {Text: kv.Value}}
		}
		p.heading("Environment")
		p.table("env", rows)
	}
	data.Blocks = p.blocks
	return htmlPageTemplate.Execute(w, data)
}

// benchHTML writes a bench run: llama-bench's table and notes, then its charts.
func benchHTML(p *htmlPage, res *micro.Result) {
	cols := lbTableColumns(res)
	head := make([]htmlCell, len(cols))
	for j, c := range cols {
		head[j] = htmlCell{Text: c.head, Head: true, Right: c.width > 0}
	}
	rows := [][]htmlCell{head}
	for i := range res.Records {
		row := make([]htmlCell, len(cols))
		for j, c := range cols {
			row[j] = htmlCell{Text: c.cell(&res.Records[i]), Right: c.width > 0}
		}
		rows = append(rows, row)
	}
	p.heading("Results")
	p.table("results", rows)
	var notes strings.Builder
	lbNotes(&notes, res)
	p.pre(notes.String())

	if len(res.Records) > 0 {
		p.heading("Tokens per second")
		p.charts(benchBars(res, cols))
	}
	if power := benchPowerCharts(res, cols); len(power) > 0 {
		p.heading("Power sweep")
		p.charts(power)
	}
}

// benchLabel names a record by the table's columns that vary between records
// ("llama 1B Q4_0 · threads 2"; the model only when there is more than one), leaving
// out the columns in skip; the model when nothing varies.
func benchLabel(res *micro.Result, cols []lbColumn, r *micro.Record, skip ...string) string {
	var parts []string
	for _, c := range cols {
		if slices.Contains(skip, c.head) || slices.Contains([]string{"size", "params", "test", "t/s", "W", "t/J"}, c.head) {
			continue
		}
		v := c.cell(r)
		if slices.ContainsFunc(res.Records, func(o micro.Record) bool { return c.cell(&o) != v }) {
			if c.head == "model" || c.head == "power" {
				parts = append(parts, v)
			} else {
				parts = append(parts, c.head+" "+v)
			}
		}
	}
	if len(parts) == 0 {
		return r.ModelType
	}
	return strings.Join(parts, " · ")
}

// benchBars draws one bar chart per test (pp512, tg128, ...): a bar per model and
// setting with its mean t/s and a ± sample-std whisker.
func benchBars(res *micro.Result, cols []lbColumn) []string {
	var tests []string
	for i := range res.Records {
		if n := res.Records[i].Name(); !slices.Contains(tests, n) {
			tests = append(tests, n)
		}
	}
	var out []string
	for _, test := range tests {
		var bars []hbar
		reps := 0
		for i := range res.Records {
			r := &res.Records[i]
			if r.Name() != test || len(r.SamplesNs) == 0 {
				continue
			}
			label := benchLabel(res, cols, r)
			if r.Partial {
				label += " (partial)"
			}
			bars = append(bars, hbar{label: label, v: r.AvgTs(), err: r.StddevTs()})
			reps = max(reps, len(r.SamplesNs))
		}
		if len(bars) == 0 {
			continue
		}
		sub := fmt.Sprintf("mean ± sample std over %d repetitions", reps)
		if m := res.Records[0].ModelType; !slices.ContainsFunc(res.Records, func(o micro.Record) bool { return o.ModelType != m }) {
			sub = m + " · " + sub
		}
		out = append(out, barsSVG("bench-"+test, test+" — tokens per second", sub, "tokens/s (t/s)", bars))
	}
	return out
}

// benchPowerCharts draws tokens/s and tokens/J against the power limit, a line per
// test and setting, when more than one limit was run.
func benchPowerCharts(res *micro.Result, cols []lbColumn) []string {
	var ts, tj []xySeries
	limits := map[float64]bool{}
	add := func(series []xySeries, name string, pt xyPoint) []xySeries {
		for i := range series {
			if series[i].name == name {
				series[i].pts = append(series[i].pts, pt)
				return series
			}
		}
		return append(series, xySeries{name: name, pts: []xyPoint{pt}})
	}
	for i := range res.Records {
		r := &res.Records[i]
		if r.PowerLimitW <= 0 || len(r.SamplesNs) == 0 {
			continue
		}
		limits[r.PowerLimitW] = true
		name := r.Name()
		if l := benchLabel(res, cols, r, "power"); l != r.ModelType || slices.ContainsFunc(res.Records, func(o micro.Record) bool { return o.ModelType != r.ModelType }) {
			name += " · " + l
		}
		ts = add(ts, name, xyPoint{x: r.PowerLimitW, y: r.AvgTs()})
		if r.EnergyKnown() {
			tj = add(tj, name, xyPoint{x: r.PowerLimitW, y: r.TokensPerJoule()})
		}
	}
	if len(limits) < 2 {
		return nil
	}
	out := []string{lineSVG("power-ts", "tokens/s vs power limit", "mean t/s of each test at each limit", "power limit (W)", "tokens/s", sortSeries(ts))}
	if len(tj) > 0 {
		out = append(out, lineSVG("power-tj", "tokens/J vs power limit", "tokens of the timed repetitions per joule measured", "power limit (W)", "tokens/J", sortSeries(tj)))
	}
	return out
}

// sortSeries orders each series' points by x (power limits run highest first).
func sortSeries(s []xySeries) []xySeries {
	for i := range s {
		slices.SortStableFunc(s[i].pts, func(a, b xyPoint) int {
			switch {
			case a.x < b.x:
				return -1
			case a.x > b.x:
				return 1
			}
			return 0
		})
	}
	return s
}

// servingHTML writes a serve-bench run: the sweep table and curves when there is more
// than one point, the power sweep when limits were swept, then each point's
// histograms and vLLM block.
func servingHTML(p *htmlPage, points []*serving.Result) {
	samples := make([]map[string][]float64, len(points))
	for i, r := range points {
		samples[i] = RequestSamples(r.Records)
	}
	if len(points) > 1 {
		p.heading("Sweep")
		var t strings.Builder
		VLLMSweepTable(&t, points)
		p.pre(t.String())
		p.charts(throughputLatency(points, samples))
		if power := servingPowerCharts(points); len(power) > 0 {
			p.heading("Power sweep")
			p.charts(power)
		}
	}
	for i, r := range points {
		if len(points) > 1 {
			p.heading(fmt.Sprintf("Point %d: %s", i+1, servingPointLabel(r)))
		} else {
			p.heading("Results")
		}
		var hists []string
		for _, mt := range vllmMetrics[:4] {
			if s := samples[i][mt.key]; len(s) > 0 {
				hists = append(hists, histogramSVG("hist-"+mt.key, mt.name, "ms", s))
			}
		}
		p.charts(hists)
		var t strings.Builder
		for _, f := range []func(io.Writer, *serving.Result) error{VLLMPreamble, VLLMFailures, VLLMBlock, VLLMExtras} {
			f(&t, r)
		}
		p.pre(t.String())
	}
}

// sweepPointShort names a sweep point by what differs between the points: "c=4",
// "8 rps", "300 W"; its position when nothing does.
func sweepPointShort(points []*serving.Result, i int) string {
	r := points[i]
	varies := func(f func(*serving.Result) string) bool {
		return slices.ContainsFunc(points, func(o *serving.Result) bool { return f(o) != f(r) })
	}
	conc := func(x *serving.Result) string { return "c=" + x.Spec.ConcurrencyLabel() }
	rate := func(x *serving.Result) string { return x.Spec.RequestRate.String() + " rps" }
	watts := func(x *serving.Result) string { return lbWatts(x.PowerLimitW) }
	var parts []string
	for _, g := range []func(*serving.Result) string{conc, rate, watts} {
		if varies(g) {
			parts = append(parts, g(r))
		}
	}
	if len(parts) == 0 {
		return fmt.Sprintf("#%d", i+1)
	}
	return strings.Join(parts, " ")
}

// throughputLatency draws output tokens/s against TPOT and against TTFT (mean and
// p99 of the raw samples), one labelled point per sweep point, in sweep order.
func throughputLatency(points []*serving.Result, samples []map[string][]float64) []string {
	var out []string
	for _, key := range []string{"tpot", "ttft"} {
		mean := xySeries{name: "mean " + strings.ToUpper(key)}
		p99 := xySeries{name: "p99 " + strings.ToUpper(key)}
		for i, r := range points {
			s := slices.Clone(samples[i][key])
			if len(s) == 0 {
				continue
			}
			slices.Sort(s)
			label := sweepPointShort(points, i)
			y := r.Summary.OutputThroughput
			mean.pts = append(mean.pts, xyPoint{x: metrics.Mean(s), y: y, label: label})
			p99.pts = append(p99.pts, xyPoint{x: metrics.PercentileSorted(s, 99), y: y, label: label})
		}
		if len(mean.pts) < 2 {
			continue
		}
		name := strings.ToUpper(key)
		out = append(out, lineSVG("curve-"+key, "Throughput vs "+name, "one point per sweep point, in sweep order",
			name+" (ms)", "output tokens/s (tok/s)", []xySeries{mean, p99}))
	}
	return out
}

// servingPowerCharts draws output tokens/s and output tokens/J against the power
// limit, a line per concurrency and rate, when more than one limit was run.
func servingPowerCharts(points []*serving.Result) []string {
	var ts, tj []xySeries
	limits := map[float64]bool{}
	for _, r := range points {
		if r.PowerLimitW <= 0 {
			continue
		}
		limits[r.PowerLimitW] = true
		name := "c=" + r.Spec.ConcurrencyLabel() + " · " + r.Spec.RequestRate.String() + " rps"
		idx := slices.IndexFunc(ts, func(s xySeries) bool { return s.name == name })
		if idx < 0 {
			ts, tj = append(ts, xySeries{name: name}), append(tj, xySeries{name: name})
			idx = len(ts) - 1
		}
		ts[idx].pts = append(ts[idx].pts, xyPoint{x: r.PowerLimitW, y: r.Summary.OutputThroughput})
		if r.EnergyKnown() {
			tj[idx].pts = append(tj[idx].pts, xyPoint{x: r.PowerLimitW, y: r.OutputTokensPerJoule()})
		}
	}
	if len(limits) < 2 {
		return nil
	}
	out := []string{lineSVG("power-ts", "output tokens/s vs power limit", "one line per concurrency and rate", "power limit (W)", "output tokens/s (tok/s)", sortSeries(ts))}
	tj = slices.DeleteFunc(tj, func(s xySeries) bool { return len(s.pts) == 0 })
	if len(tj) > 0 {
		out = append(out, lineSVG("power-tj", "output tokens/J vs power limit", "generated tokens per joule measured", "power limit (W)", "output tokens/J", sortSeries(tj)))
	}
	return out
}

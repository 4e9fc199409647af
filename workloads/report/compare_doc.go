package report

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"llmbench/workloads/kernelbench"
	"llmbench/workloads/metrics"
	"llmbench/workloads/result"
	"llmbench/workloads/serving"
)

// Verdicts of a DocRow cell against the first run.
const (
	VerdictNoise       = "noise"       // the test finds no difference at metrics.CompareAlpha
	VerdictSignificant = "significant" // the test finds one
	VerdictNA          = "n/a"         // no raw samples on one side (or the metric is missing)
)

// DocRow is one metric of a comparison of runs: its value in each run, the difference
// of each run against the first in percent, and a noise verdict where both runs kept
// raw samples of the metric.
type DocRow struct {
	// Group says which part of the run the metric belongs to: the bench test
	// ("pp512") or the serving sweep point ("c=8"); empty for a single-point serving run.
	Group string
	// Metric names the figure under vLLM's or llama-bench's name where one exists,
	// with its unit ("t/s", "Mean TTFT (ms)").
	Metric string
	// Headline marks the metrics a chart shows as bars.
	Headline bool
	// LowerBetter is set for latencies.
	LowerBetter bool
	// Values holds the figure per run, NaN where a run lacks it.
	Values []float64
	// Samples holds the raw samples behind Values per run (nil where none were kept):
	// per-repetition t/s for bench (compared with Welch's t-test over the
	// repetitions), per-request milliseconds in request order for serving (compared
	// with a moving-block bootstrap over the request sequence).
	Samples [][]float64
	// Repeats is set when Samples are run-level figures of independent repetitions.
	Repeats bool
	// DiffPct is each run's difference against the first in percent (NaN where it
	// cannot be computed; DiffPct[0] is 0).
	DiffPct []float64
	// Verdict is each run's noise verdict against the first (Verdict[0] is "").
	Verdict []string
	// Method names the test behind each verdict ("moving-block bootstrap, 95 % CI",
	// "Welch t over 5 repetitions"; "" where there is no verdict).
	Method []string
}

// Label is the row's name with its group: "pp512 t/s", "c=8 Mean TTFT (ms)".
func (r DocRow) Label() string {
	if r.Group == "" {
		return r.Metric
	}
	return r.Group + " " + r.Metric
}

// DocComparison compares two or more runs metric by metric, each against the first.
type DocComparison struct {
	Titles []string // one per run, in order
	Rows   []DocRow
}

// Methods lists the tests behind the comparison's verdicts, each once, in the
// order the rows first use them (empty when no row has a verdict): what a table
// that shows the verdicts says it used.
func (c *DocComparison) Methods() []string {
	var out []string
	for _, r := range c.Rows {
		for _, m := range r.Method {
			if m != "" && !slices.Contains(out, m) {
				out = append(out, m)
			}
		}
	}
	return out
}

// setting is one condition a figure was measured under (a bench test's threads or
// power limit, a serving point's concurrency): key, and the value ("" when the run
// left it as it was, e.g. no power limit set).
type setting struct{ key, val string }

// label is how a setting reads in a row's group ("t=2", "c=8", "300 W").
func (s setting) label() string {
	switch s.key {
	case "W":
		return s.val + " W"
	case "model", "":
		return s.val
	case "rate":
		return "rate " + s.val
	}
	return s.key + "=" + s.val
}

// docMetric is one figure of one run while a comparison is assembled.
type docMetric struct {
	base        string    // the bench test ("pp512"); "" for serving
	set         []setting // what it was measured under, in label order
	metric      string
	headline    bool
	lowerBetter bool
	value       float64
	samples     []float64
	repeats     bool // samples are per-repetition figures
}

// pattern is a figure's identity in a comparison: its test, metric and the values
// of the settings that tell points apart (vals follows the comparison's keys; ""
// matches any value: the run did not set it or did not vary it).
type pattern struct {
	base, metric string
	vals         []string
}

// covers reports whether p is as general as q or more: every value p names, q has.
func (p pattern) covers(q pattern) bool {
	for i, v := range p.vals {
		if v != "" && v != q.vals[i] {
			return false
		}
	}
	return true
}

func (p pattern) same(q pattern) bool { return slices.Equal(p.vals, q.vals) }

func (p pattern) compatible(q pattern) bool {
	if p.base != q.base || p.metric != q.metric {
		return false
	}
	for i, v := range p.vals {
		if v != "" && q.vals[i] != "" && v != q.vals[i] {
			return false
		}
	}
	return true
}

// CompareDocs compares docs (two or more) metric by metric against the first: a
// bench run by test (t/s with per-repetition samples, tokens/J), a serving run by
// sweep point (throughputs; mean with per-request samples, median, p90 and p99 of
// TTFT, TPOT, ITL and E2EL). A metric only some runs have shows NaN for the others.
//
// Figures are matched by what they measure: the test and metric, and the settings
// that tell a run's points apart (threads, power limit, concurrency, rate, model —
// only those some run varies). A run that measured a figure once, under settings the
// other run varies, is compared with every point of it that does not contradict it
// (a bench's pp64 against each power limit of a sweep's pp64; a serve run at c=4
// against the sweep's c=4 point, not its c=1). Two single runs match whatever their
// settings (c=4 against c=8).
//
// Verdicts: Welch's t-test over the repetitions for bench t/s, a moving-block
// bootstrap of the difference of means over the request sequence for serving
// latencies (requests next to each other are correlated, so a t-test on them
// would call noise significant).
func CompareDocs(docs []result.Document) (*DocComparison, error) {
	if len(docs) < 2 {
		return nil, fmt.Errorf("compare: need two or more runs, got %d", len(docs))
	}
	c := &DocComparison{}
	all := make([][]docMetric, len(docs))
	for i, d := range docs {
		c.Titles = append(c.Titles, d.Title)
		all[i] = docMetrics(d)
	}
	keys := varyingKeys(all)
	pat := func(m docMetric) pattern {
		p := pattern{base: m.base, metric: m.metric, vals: make([]string, len(keys))}
		for _, s := range m.set {
			if j := slices.Index(keys, s.key); j >= 0 {
				p.vals[j] = s.val
			}
		}
		return p
	}
	var pats []pattern
	var superseded []bool
	newRow := func(m docMetric, p pattern) int {
		row := DocRow{Group: group(m.base, keys, p.vals), Metric: m.metric, Headline: m.headline, LowerBetter: m.lowerBetter,
			Repeats: m.repeats, Values: make([]float64, len(docs)), Samples: make([][]float64, len(docs))}
		for v := range row.Values {
			row.Values[v] = math.NaN()
		}
		c.Rows, pats, superseded = append(c.Rows, row), append(pats, p), append(superseded, false)
		return len(c.Rows) - 1
	}
	set := func(j, i int, m docMetric) {
		if math.IsNaN(c.Rows[j].Values[i]) {
			c.Rows[j].Values[i], c.Rows[j].Samples[i] = m.value, m.samples
		}
	}
	for i := range docs {
		for _, m := range all[i] {
			p := pat(m)
			if j := slices.IndexFunc(pats, func(q pattern) bool { return q.base == p.base && q.metric == p.metric && q.same(p) }); j >= 0 {
				c.Rows[j].Values[i], c.Rows[j].Samples[i] = m.value, m.samples
				continue
			}
			// as general as rows already there: compare it with each of them
			spread := false
			for j, q := range pats {
				if !superseded[j] && q.compatible(p) && p.covers(q) {
					set(j, i, m)
					spread = true
				}
			}
			if spread {
				continue
			}
			// more specific than rows already there: a row of its own, holding what
			// the more general rows hold for the other runs
			j := newRow(m, p)
			for k, q := range pats[:j] {
				if q.compatible(p) && q.covers(p) {
					for v := range docs {
						if v != i && math.IsNaN(c.Rows[j].Values[v]) {
							c.Rows[j].Values[v], c.Rows[j].Samples[v] = c.Rows[k].Values[v], c.Rows[k].Samples[v]
						}
					}
					superseded[k] = true
				}
			}
			c.Rows[j].Values[i], c.Rows[j].Samples[i] = m.value, m.samples
		}
	}
	kept := c.Rows[:0]
	for j, r := range c.Rows {
		if !superseded[j] {
			kept = append(kept, r)
		}
	}
	c.Rows = kept
	for j := range c.Rows {
		r := &c.Rows[j]
		r.DiffPct, r.Verdict, r.Method = make([]float64, len(docs)), make([]string, len(docs)), make([]string, len(docs))
		for i := 1; i < len(docs); i++ {
			r.DiffPct[i], r.Verdict[i] = math.NaN(), VerdictNA
			if math.IsNaN(r.Values[0]) || math.IsNaN(r.Values[i]) {
				continue
			}
			var cr metrics.CompareRow
			if r.Repeats {
				cr = metrics.CompareRepeats(r.Metric, r.Values[0], r.Values[i], r.Samples[0], r.Samples[i])
			} else {
				cr = metrics.Compare(r.Metric, r.Values[0], r.Values[i], r.Samples[0], r.Samples[i])
			}
			r.DiffPct[i] = cr.DiffPct
			switch cr.Verdict() {
			case "significant":
				r.Verdict[i] = VerdictSignificant
			case "within noise":
				r.Verdict[i] = VerdictNoise
			}
			if cr.Verdict() != "" {
				r.Method[i] = cr.Test.Describe()
			}
		}
	}
	if len(c.Rows) == 0 {
		return nil, fmt.Errorf("compare: the runs measured nothing")
	}
	return c, nil
}

// varyingKeys returns the setting keys whose value differs between figures of one
// run (in the order they are first met): the ones that tell its points apart.
func varyingKeys(all [][]docMetric) []string {
	var keys []string
	for _, ms := range all {
		seen := map[string]string{}
		for _, m := range ms {
			for _, s := range m.set {
				v, ok := seen[s.key]
				switch {
				case !ok:
					seen[s.key] = s.val
				case v != s.val && !slices.Contains(keys, s.key):
					keys = append(keys, s.key)
				}
			}
		}
	}
	// label order: the order settings are listed in
	order := []string{"model", "t", "fa", "b", "ub", "ctk", "c", "rate", "W"}
	slices.SortStableFunc(keys, func(a, b string) int { return slices.Index(order, a) - slices.Index(order, b) })
	return keys
}

// group is a row's group: the test and the labels of the settings set.
func group(base string, keys, vals []string) string {
	parts := []string{}
	if base != "" {
		parts = append(parts, base)
	}
	for j, k := range keys {
		if vals[j] != "" {
			parts = append(parts, setting{k, vals[j]}.label())
		}
	}
	return strings.Join(parts, " ")
}

func watts(w float64) string {
	if w <= 0 {
		return ""
	}
	return fmt.Sprintf("%.0f", w)
}

// docMetrics lists the figures of one run in display order, with the settings
// each was measured under.
func docMetrics(d result.Document) []docMetric {
	var out []docMetric
	if d.Bench != nil {
		for i := range d.Bench.Records {
			r := &d.Bench.Records[i]
			set := []setting{{"model", strings.TrimSuffix(filepath.Base(r.ModelFilename), ".gguf")}, {"t", fmt.Sprint(r.NThreads)},
				{"fa", fmt.Sprint(r.FlashAttn)}, {"b", fmt.Sprint(r.NBatch)}, {"ub", fmt.Sprint(r.NUBatch)}, {"ctk", r.TypeK},
				{"W", watts(r.PowerLimitW)}}
			if len(r.SamplesNs) > 0 {
				out = append(out, docMetric{base: r.Name(), set: set, metric: "t/s", headline: true, value: r.AvgTs(), samples: r.SamplesTs(), repeats: true})
			}
			if r.EnergyKnown() {
				out = append(out, docMetric{base: r.Name(), set: set, metric: "tokens/J", value: r.TokensPerJoule()})
			}
		}
	}
	if d.Throughput != nil {
		out = append(out, throughputMetrics(d)...)
	} else {
		for _, p := range d.Serving {
			set := []setting{{"c", p.Spec.ConcurrencyLabel()}, {"rate", p.Spec.RequestRate.String()}, {"W", watts(p.PowerLimitW)}}
			out = append(out, servingMetrics(set, p)...)
		}
	}
	if b := d.Batch; b != nil {
		set := []setting{{"model", b.Model}, {"t", fmt.Sprint(b.Threads)}, {"seq", fmt.Sprint(b.Spec.SequenceLength)}, {"dec", fmt.Sprint(b.Spec.DecodeLength)}}
		for _, p := range b.Points {
			if len(p.Runs) == 0 {
				continue
			}
			base := fmt.Sprintf("batch %d", p.BatchSize)
			for _, f := range []struct {
				metric         string
				x              []float64
				head, lowerBtr bool
			}{{"Prefill (ms)", p.PrefillMs(), false, true}, {"Decode token (ms)", p.DecodeTokenMs(), true, true}, {"Decode tokens/s", p.DecodeTPS(), true, false}} {
				out = append(out, docMetric{base: base, set: set, metric: f.metric, headline: f.head, lowerBetter: f.lowerBtr,
					value: metrics.Mean(f.x), samples: f.x, repeats: true})
			}
		}
	}
	if d.Kernels != nil {
		out = append(out, kernelMetrics(d.Kernels)...)
	}
	return out
}

// throughputMetrics lists a throughput run's figures, each row's dtype ("bfloat16",
// "int8") their group: JetStream's output tok/s of every row, the memory each
// needed (weights + KV pool), then each row's serving point's figures (latencies with
// per-request samples). Rows compare with the rows of the same dtype in the other run.
func throughputMetrics(d result.Document) []docMetric {
	var out []docMetric
	for _, r := range d.Throughput.Rows { // JetStream's table first
		out = append(out, docMetric{base: r.Dtype, metric: "throughput (token/s)", headline: true, value: r.Throughput})
	}
	for _, r := range d.Throughput.Rows {
		out = append(out, docMetric{base: r.Dtype, metric: "weights + KV (MiB)", lowerBetter: true, value: float64(r.MemoryBytes()) / (1 << 20)})
	}
	for i, r := range d.Throughput.Rows {
		if i >= len(d.Serving) { // the rows and the points are kept in step; a partial run may lack its last point
			continue
		}
		for _, m := range servingMetrics(nil, d.Serving[i]) {
			if m.metric == "Output tok/s" { // the row's throughput, above
				continue
			}
			m.base = r.Dtype
			out = append(out, m)
		}
	}
	return out
}

// kernelMetrics lists a kernel suite's figures: every number of its sections' tables,
// by section and row ("Causal Mask: block-sparse", "Paged Attention: decode-long")
// and column ("FW Time (ms)", "after_ms"; times lower-better, the first numeric column
// of a table the headline), measured at the suite's thread count. Difference columns
// (delta_…) are left out: a percent change of a difference says nothing.
func kernelMetrics(r *kernelbench.Report) []docMetric {
	var out []docMetric
	set := []setting{{"t", fmt.Sprint(r.Spec.Threads)}}
	for _, sec := range r.Sections {
		t := sec.Table
		if t == nil {
			continue
		}
		for _, row := range t.Rows {
			first := true
			for c, cell := range row {
				if c == 0 || c >= len(t.Columns) || strings.HasPrefix(t.Columns[c], "delta") {
					continue
				}
				v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(cell), "%"), 64)
				if err != nil {
					continue
				}
				col := t.Columns[c]
				out = append(out, docMetric{base: sec.Title + ": " + row[0], set: set, metric: col, headline: first,
					lowerBetter: strings.Contains(col, "(ms)") || strings.HasSuffix(col, "_ms"), value: v})
				first = false
			}
		}
	}
	return out
}

// servingMetrics lists a serving point's figures; latency statistics come from the
// raw records (successful requests), as metrics.Summary computes them.
func servingMetrics(g []setting, p *serving.Result) []docMetric {
	s := p.Summary
	out := []docMetric{
		{set: g, metric: "Output tok/s", headline: true, value: s.OutputThroughput},
		{set: g, metric: "Request throughput (req/s)", value: s.RequestThroughput},
		{set: g, metric: "Total tok/s", value: s.TotalTokenThroughput},
		{set: g, metric: "Peak output tok/s", value: s.PeakOutputTokensPerS},
		{set: g, metric: "Successful requests", value: float64(s.Completed)},
		{set: g, metric: "Failed requests", lowerBetter: true, value: float64(s.Failed)},
	}
	if p.EnergyKnown() {
		out = append(out, docMetric{set: g, metric: "Output tokens/J", value: p.OutputTokensPerJoule()})
	}
	lat := RequestSamples(p.Records)
	for _, name := range LatencyMetrics {
		x := lat[name]
		if len(x) == 0 {
			continue
		}
		up := strings.ToUpper(name)
		out = append(out,
			docMetric{set: g, metric: "Mean " + up + " (ms)", headline: true, lowerBetter: true, value: metrics.Mean(x), samples: x},
			docMetric{set: g, metric: "P50 " + up + " (ms)", lowerBetter: true, value: metrics.Percentile(x, 50)},
			docMetric{set: g, metric: "P90 " + up + " (ms)", lowerBetter: true, value: metrics.Percentile(x, 90)},
			docMetric{set: g, metric: "P99 " + up + " (ms)", lowerBetter: true, value: metrics.Percentile(x, 99)})
	}
	return out
}

// LatencyMetrics are the per-request latency metrics of a serving run, in vLLM's
// order and under its names.
var LatencyMetrics = []string{"ttft", "tpot", "itl", "e2el"}

// RequestSamples returns the raw latency samples of the successful records in
// milliseconds by metric (ttft, tpot, itl, e2el), defined as metrics.Summary does:
// TPOT only for requests with more than one output token, ITL pooled over requests.
// Samples follow the records' order (the request sequence), which the block
// bootstrap of a comparison relies on.
func RequestSamples(recs []metrics.Record) map[string][]float64 {
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	out := map[string][]float64{}
	for i := range recs {
		r := &recs[i]
		if !r.Success {
			continue
		}
		out["e2el"] = append(out["e2el"], ms(r.Latency))
		if r.NonStreaming { // --non-streaming: no TTFT, TPOT or ITL samples
			continue
		}
		out["ttft"] = append(out["ttft"], ms(r.TTFT))
		if r.OutputTokens > 1 {
			out["tpot"] = append(out["tpot"], ms(r.Latency-r.TTFT)/float64(r.OutputTokens-1))
		}
		for _, g := range r.ITL {
			out["itl"] = append(out["itl"], ms(g))
		}
	}
	return out
}

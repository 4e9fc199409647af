package report

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

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

// docMetric is one figure of one run while a comparison is assembled.
type docMetric struct {
	group, metric string
	headline      bool
	lowerBetter   bool
	value         float64
	samples       []float64
	repeats       bool // samples are per-repetition figures
}

// CompareDocs compares docs (two or more) metric by metric against the first: a
// bench run by test (t/s with per-repetition samples, tokens/J), a serving run by
// sweep point (throughputs; mean with per-request samples, median, p90 and p99 of
// TTFT, TPOT, ITL and E2EL). A metric only some runs have shows NaN for the others.
// Verdicts: Welch's t-test over the repetitions for bench t/s, a moving-block
// bootstrap of the difference of means over the request sequence for serving
// latencies (requests next to each other are correlated, so a t-test on them
// would call noise significant).
func CompareDocs(docs []result.Document) (*DocComparison, error) {
	if len(docs) < 2 {
		return nil, fmt.Errorf("compare: need two or more runs, got %d", len(docs))
	}
	c := &DocComparison{}
	type key struct{ group, metric string }
	idx := map[key]int{}
	for i, d := range docs {
		c.Titles = append(c.Titles, d.Title)
		for _, m := range docMetrics(d) {
			k := key{m.group, m.metric}
			j, ok := idx[k]
			if !ok {
				j = len(c.Rows)
				idx[k] = j
				row := DocRow{Group: m.group, Metric: m.metric, Headline: m.headline, LowerBetter: m.lowerBetter,
					Repeats: m.repeats, Values: make([]float64, len(docs)), Samples: make([][]float64, len(docs))}
				for v := range row.Values {
					row.Values[v] = math.NaN()
				}
				c.Rows = append(c.Rows, row)
			}
			c.Rows[j].Values[i], c.Rows[j].Samples[i] = m.value, m.samples
		}
	}
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

// docMetrics lists the figures of one run in display order.
func docMetrics(d result.Document) []docMetric {
	var out []docMetric
	if d.Bench != nil {
		seen := map[string]int{}
		for i := range d.Bench.Records {
			seen[d.Bench.Records[i].Name()]++
		}
		for i := range d.Bench.Records {
			r := &d.Bench.Records[i]
			g := r.Name()
			if seen[g] > 1 { // the same test at several settings: tell them apart
				g = fmt.Sprintf("%s t=%d fa=%d b=%d", g, r.NThreads, r.FlashAttn, r.NBatch)
			}
			if len(r.SamplesNs) > 0 {
				out = append(out, docMetric{group: g, metric: "t/s", headline: true, value: r.AvgTs(), samples: r.SamplesTs(), repeats: true})
			}
			if r.EnergyKnown() {
				out = append(out, docMetric{group: g, metric: "tokens/J", value: r.TokensPerJoule()})
			}
		}
	}
	for _, p := range d.Serving {
		g := ""
		if len(d.Serving) > 1 {
			g = "c=" + p.Spec.ConcurrencyLabel()
			if !p.Spec.RequestRate.IsInf() {
				g += " rate " + p.Spec.RequestRate.String()
			}
		}
		out = append(out, servingMetrics(g, p)...)
	}
	return out
}

// servingMetrics lists a serving point's figures; latency statistics come from the
// raw records (successful requests), as metrics.Summary computes them.
func servingMetrics(g string, p *serving.Result) []docMetric {
	s := p.Summary
	out := []docMetric{
		{group: g, metric: "Output tok/s", headline: true, value: s.OutputThroughput},
		{group: g, metric: "Request throughput (req/s)", value: s.RequestThroughput},
		{group: g, metric: "Total tok/s", value: s.TotalTokenThroughput},
		{group: g, metric: "Peak output tok/s", value: s.PeakOutputTokensPerS},
		{group: g, metric: "Successful requests", value: float64(s.Completed)},
		{group: g, metric: "Failed requests", lowerBetter: true, value: float64(s.Failed)},
	}
	if p.EnergyKnown() {
		out = append(out, docMetric{group: g, metric: "Output tokens/J", value: p.OutputTokensPerJoule()})
	}
	lat := RequestSamples(p.Records)
	for _, name := range LatencyMetrics {
		x := lat[name]
		if len(x) == 0 {
			continue
		}
		up := strings.ToUpper(name)
		out = append(out,
			docMetric{group: g, metric: "Mean " + up + " (ms)", headline: true, lowerBetter: true, value: metrics.Mean(x), samples: x},
			docMetric{group: g, metric: "P50 " + up + " (ms)", lowerBetter: true, value: metrics.Percentile(x, 50)},
			docMetric{group: g, metric: "P90 " + up + " (ms)", lowerBetter: true, value: metrics.Percentile(x, 90)},
			docMetric{group: g, metric: "P99 " + up + " (ms)", lowerBetter: true, value: metrics.Percentile(x, 99)})
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
		out["ttft"] = append(out["ttft"], ms(r.TTFT))
		out["e2el"] = append(out["e2el"], ms(r.Latency))
		if r.OutputTokens > 1 {
			out["tpot"] = append(out["tpot"], ms(r.Latency-r.TTFT)/float64(r.OutputTokens-1))
		}
		for _, g := range r.ITL {
			out["itl"] = append(out["itl"], ms(g))
		}
	}
	return out
}

package report

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"llmbench/workloads/metrics"
	"llmbench/workloads/serving"
)

// ServeAB writes the A/B table of two serving results in the layout people publish
// for speculative decoding (one server without and with a draft, both driven by the
// same vllm bench serve command): | Metric | A | B | % Difference |, the rows of
// that table (memory, requests, duration, tokens, throughputs, mean/median/P99 of
// TTFT, TPOT and ITL), then the draft's acceptance rate and the tokens per model step
// where the engine reported them, and a noise column: the moving-block bootstrap's
// verdict on the mean and median rows whose per-request samples both results hold.
// Memory is the in-process engine's (weights and KV caches of the model and the
// draft) or, for an external server, the run's metadata memory_gib; "-" when unknown.
func ServeAB(w io.Writer, labelA, labelB string, a, b *serving.Result) error {
	cfg := metrics.ServingConfig{Percentiles: []float64{50, 99}}
	sa, sb := metrics.Summary(a.Records, a.Duration, cfg), metrics.Summary(b.Records, b.Duration, cfg)
	pa, pb := abSamples(a), abSamples(b)
	type row struct {
		name   string
		a, b   float64
		ok     bool // both values known
		digits int
		test   *metrics.CompareRow
	}
	var rows []row
	add := func(name string, va, vb float64, digits int) {
		rows = append(rows, row{name: name, a: va, b: vb, ok: !math.IsNaN(va) && !math.IsNaN(vb), digits: digits})
	}
	// addDist adds the mean, median and P99 rows of a latency, with the noise test of
	// the mean and the median where both sides have samples.
	addDist := func(name string, da, db metrics.Dist, xa, xb []float64) {
		for _, s := range []struct {
			label  string
			tested bool // the noise test applies (a mean or a median)
			stat   metrics.Stat
			get    func(metrics.Dist) float64
		}{
			{"Mean", true, metrics.StatMean, func(d metrics.Dist) float64 { return d.Mean }},
			{"Median", true, metrics.StatMedian, func(d metrics.Dist) float64 { return d.Median }},
			{"P99", false, 0, func(d metrics.Dist) float64 { v, ok := d.Percentile(99); return orNaN(v, ok) }},
		} {
			add(s.label+" "+name+" (ms)", s.get(da), s.get(db), 2)
			if s.tested && len(xa) >= 2 && len(xb) >= 2 {
				r := metrics.CompareRequests(name, s.get(da), s.get(db), xa, xb, s.stat)
				rows[len(rows)-1].test = &r
			}
		}
	}
	add("Memory Usage (GiB)", memoryGiB(a), memoryGiB(b), 2)
	add("Successful requests", float64(sa.Completed), float64(sb.Completed), 0)
	add("Benchmark duration (s)", a.Duration.Seconds(), b.Duration.Seconds(), 2)
	add("Total input tokens", float64(sa.TotalInput), float64(sb.TotalInput), 0)
	add("Total generated tokens", float64(sa.TotalOutput), float64(sb.TotalOutput), 0)
	add("Request throughput (req/s)", sa.RequestThroughput, sb.RequestThroughput, 2)
	add("Output token throughput (tok/s)", sa.OutputThroughput, sb.OutputThroughput, 2)
	add("Total Token throughput (tok/s)", sa.TotalTokenThroughput, sb.TotalTokenThroughput, 2)
	addDist("TTFT", sa.TTFT, sb.TTFT, pa.ttft, pb.ttft)
	addDist("TPOT", sa.TPOT, sb.TPOT, pa.tpot, pb.tpot)
	addDist("ITL", sa.ITL, sb.ITL, pa.itl, pb.itl)
	if a.Engine != nil || b.Engine != nil {
		add("Draft acceptance rate (%)", acceptance(a), acceptance(b), 2)
		add("Tokens per model step", tokensPerStep(a), tokensPerStep(b), 2)
	}

	cells := make([][5]string, 0, len(rows)+1)
	cells = append(cells, [5]string{"Metric", labelA, labelB, "% Difference", "Noise (95 % CI of B − A)"})
	noted := false
	for _, r := range rows {
		c := [5]string{r.name, abValue(r.a, r.digits), abValue(r.b, r.digits), "-", ""}
		if r.ok && r.a != 0 {
			c[3] = strconv.FormatFloat(100*(r.b-r.a)/math.Abs(r.a), 'f', 1, 64)
		}
		if r.test != nil {
			if v := r.test.Verdict(); v != "" {
				c[4] = fmt.Sprintf("%s [%+.3g, %+.3g]", v, r.test.Test.CILow, r.test.Test.CIHigh)
				noted = true
			}
		}
		cells = append(cells, c)
	}
	var width [5]int
	for _, c := range cells {
		for i, s := range c {
			width[i] = max(width[i], len([]rune(s)))
		}
	}
	var out strings.Builder
	line := func(c [5]string) {
		out.WriteString("| " + pad(c[0], width[0], false))
		for i := 1; i < 4; i++ {
			out.WriteString(" | " + pad(c[i], width[i], true))
		}
		out.WriteString(" | " + pad(c[4], width[4], false) + " |\n")
	}
	line(cells[0])
	out.WriteString("|:" + strings.Repeat("-", width[0]+1))
	for i := 1; i < 4; i++ {
		out.WriteString("|" + strings.Repeat("-", width[i]+1) + ":")
	}
	out.WriteString("|:" + strings.Repeat("-", width[4]+1) + "|\n")
	for _, c := range cells[1:] {
		line(c)
	}
	if noted {
		fmt.Fprintf(&out, "\nnoise: %s over the per-request samples in request order (ITL: every gap); "+
			"significant when the interval excludes 0\n", metrics.DescribeBootstrap())
	}
	_, err := io.WriteString(w, out.String())
	return err
}

// abSeries are one result's per-request samples in ms, in request order: TTFT and
// TPOT of the successful requests, and every ITL gap.
type abSeries struct{ ttft, tpot, itl []float64 }

func abSamples(r *serving.Result) abSeries {
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	var s abSeries
	for i := range r.Records {
		rec := &r.Records[i]
		if !rec.Success {
			continue
		}
		s.ttft = append(s.ttft, ms(rec.TTFT))
		if rec.OutputTokens > 1 {
			s.tpot = append(s.tpot, ms(rec.Latency-rec.TTFT)/float64(rec.OutputTokens-1))
		}
		for _, g := range rec.ITL {
			s.itl = append(s.itl, ms(g))
		}
	}
	return s
}

// memoryGiB is the run's memory in GiB: the in-process engine's, else the run's
// metadata memory_gib (an external server's, as its user measured it); NaN when
// neither is known.
func memoryGiB(r *serving.Result) float64 {
	if r.Engine != nil && r.Engine.MemoryBytes() > 0 {
		return float64(r.Engine.MemoryBytes()) / (1 << 30)
	}
	if v, err := strconv.ParseFloat(r.Spec.Metadata["memory_gib"], 64); err == nil {
		return v
	}
	return math.NaN()
}

// acceptance is the draft's acceptance rate in percent; NaN without a draft.
func acceptance(r *serving.Result) float64 {
	if r.Engine == nil || r.Engine.DraftedTokens == 0 {
		return math.NaN()
	}
	return r.Engine.AcceptanceRate()
}

// tokensPerStep is the tokens a sequence got per model step; NaN when unknown.
func tokensPerStep(r *serving.Result) float64 {
	if r.Engine == nil || r.Engine.SeqSteps == 0 {
		return math.NaN()
	}
	return r.Engine.TokensPerStep()
}

func orNaN(v float64, ok bool) float64 {
	if !ok {
		return math.NaN()
	}
	return v
}

// abValue prints a table value with digits decimals ("-" for unknown).
func abValue(v float64, digits int) string {
	if math.IsNaN(v) {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', digits, 64)
}

// pad pads s with spaces to width runes, on the left when right-aligned.
func pad(s string, width int, right bool) string {
	n := width - len([]rune(s))
	if n <= 0 {
		return s
	}
	if right {
		return strings.Repeat(" ", n) + s
	}
	return s + strings.Repeat(" ", n)
}

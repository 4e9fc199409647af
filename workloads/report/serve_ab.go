package report

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

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
	sa := metrics.Summary(a.Records, a.Duration, metrics.ServingConfig{Percentiles: []float64{50, 99}, NonStreaming: a.Spec.NonStreaming})
	sb := metrics.Summary(b.Records, b.Duration, metrics.ServingConfig{Percentiles: []float64{50, 99}, NonStreaming: b.Spec.NonStreaming})
	pa, pb := abSamples(a), abSamples(b)
	var t abTable
	t.add("Memory Usage (GiB)", memoryGiB(a), memoryGiB(b), 2)
	t.add("Successful requests", float64(sa.Completed), float64(sb.Completed), 0)
	t.add("Benchmark duration (s)", a.Duration.Seconds(), b.Duration.Seconds(), 2)
	t.add("Total input tokens", float64(sa.TotalInput), float64(sb.TotalInput), 0)
	t.add("Total generated tokens", float64(sa.TotalOutput), float64(sb.TotalOutput), 0)
	t.add("Request throughput (req/s)", sa.RequestThroughput, sb.RequestThroughput, 2)
	t.add("Output token throughput (tok/s)", sa.OutputThroughput, sb.OutputThroughput, 2)
	t.add("Total Token throughput (tok/s)", sa.TotalTokenThroughput, sb.TotalTokenThroughput, 2)
	// mean, median and p99; NaN ("-") where not measured (--non-streaming), never 0
	stats := func(s *metrics.Serving, key string, d metrics.Dist) [3]float64 {
		if !s.Measured(key) {
			return [3]float64{math.NaN(), math.NaN(), math.NaN()}
		}
		v, ok := d.Percentile(99)
		return [3]float64{d.Mean, d.Median, orNaN(v, ok)}
	}
	for _, m := range []struct {
		name, key string
		da, db    metrics.Dist
		xa, xb    []float64
	}{{"TTFT", "ttft", sa.TTFT, sb.TTFT, pa.ttft, pb.ttft}, {"TPOT", "tpot", sa.TPOT, sb.TPOT, pa.tpot, pb.tpot}, {"ITL", "itl", sa.ITL, sb.ITL, pa.itl, pb.itl}} {
		t.addDist(m.name, stats(&sa, m.key, m.da), stats(&sb, m.key, m.db), m.xa, m.xb)
	}
	if a.Engine != nil || b.Engine != nil {
		t.add("Draft acceptance rate (%)", acceptance(a), acceptance(b), 2)
		t.add("Tokens per model step", tokensPerStep(a), tokensPerStep(b), 2)
	}
	return t.write(w, labelA, labelB)
}

// ServeABPoints writes the A/B table (ServeAB) of two runs' serving points, one per
// sweep point they share (in order), headed by the point's concurrency and rate.
func ServeABPoints(w io.Writer, labelA, labelB string, a, b []*serving.Result) error {
	for i := range min(len(a), len(b)) {
		fmt.Fprintf(w, "\nA/B, max concurrency %s, request rate %s:\n", a[i].Spec.ConcurrencyLabel(), a[i].Spec.RequestRate)
		if err := ServeAB(w, labelA, labelB, a[i], b[i]); err != nil {
			return err
		}
	}
	return nil
}

// ServeABJSON is ServeAB for two saved vLLM-style results (serve-bench --save-result
// or vllm bench serve's, e.g. of two llama-server configurations): the same rows from
// their figures, memory from their memory_gib metadata, the draft rows from
// llmbench's engine figures when present, and the noise column where both were saved
// with --save-detailed.
func ServeABJSON(w io.Writer, labelA, labelB string, a, b map[string]any) error {
	num := func(m map[string]any, k string) float64 {
		switch v := m[k].(type) {
		case float64:
			return v
		case string: // --metadata values are strings
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				return f
			}
		}
		return math.NaN()
	}
	var t abTable
	both := func(name, key string, digits int) { t.add(name, num(a, key), num(b, key), digits) }
	// Memory: the run's metadata, else an in-process engine's figures.
	mem := func(r map[string]any) float64 {
		if v := num(r, "memory_gib"); !math.IsNaN(v) {
			return v
		}
		e, _ := r["engine"].(map[string]any)
		var n float64
		for _, k := range []string{"weight_bytes", "kv_cache_bytes", "draft_weight_bytes", "draft_kv_cache_bytes"} {
			if v := num(e, k); !math.IsNaN(v) {
				n += v
			}
		}
		if num(e, "weight_bytes") > 0 {
			return n / (1 << 30)
		}
		return math.NaN()
	}
	t.add("Memory Usage (GiB)", mem(a), mem(b), 2)
	both("Successful requests", "completed", 0)
	both("Benchmark duration (s)", "duration", 2)
	both("Total input tokens", "total_input_tokens", 0)
	both("Total generated tokens", "total_output_tokens", 0)
	both("Request throughput (req/s)", "request_throughput", 2)
	both("Output token throughput (tok/s)", "output_throughput", 2)
	both("Total Token throughput (tok/s)", "total_token_throughput", 2)
	for _, m := range []string{"ttft", "tpot", "itl"} {
		vals := func(r map[string]any) [3]float64 {
			return [3]float64{num(r, "mean_"+m+"_ms"), num(r, "median_"+m+"_ms"), num(r, "p99_"+m+"_ms")}
		}
		t.addDist(strings.ToUpper(m), vals(a), vals(b), vllmSamples(a, m), vllmSamples(b, m))
	}
	// An in-process run without a draft saves no tokens_per_step; its engine figures
	// give it (1).
	perStep := func(r map[string]any) float64 {
		if v := num(r, "tokens_per_step"); !math.IsNaN(v) {
			return v
		}
		e, _ := r["engine"].(map[string]any)
		if n := num(e, "seq_steps"); n > 0 {
			return num(e, "seq_step_tokens") / n
		}
		return math.NaN()
	}
	if a["tokens_per_step"] != nil || b["tokens_per_step"] != nil {
		both("Draft acceptance rate (%)", "draft_acceptance_rate", 2)
		t.add("Tokens per model step", perStep(a), perStep(b), 2)
	}
	return t.write(w, labelA, labelB)
}

// abTable is the rows of an A/B table.
type abTable []abRow

type abRow struct {
	name   string
	a, b   float64
	ok     bool // both values known
	digits int
	test   *metrics.CompareRow
}

func (t *abTable) add(name string, va, vb float64, digits int) {
	*t = append(*t, abRow{name: name, a: va, b: vb, ok: !math.IsNaN(va) && !math.IsNaN(vb), digits: digits})
}

// addDist adds the mean, median and P99 rows of a latency (va, vb: those three
// values), with the noise test of the mean and the median where both sides have
// per-request samples.
func (t *abTable) addDist(name string, va, vb [3]float64, xa, xb []float64) {
	stats := []metrics.Stat{metrics.StatMean, metrics.StatMedian}
	for i, label := range []string{"Mean", "Median", "P99"} {
		t.add(label+" "+name+" (ms)", va[i], vb[i], 2)
		if i < len(stats) && len(xa) >= 2 && len(xb) >= 2 && !math.IsNaN(va[i]) && !math.IsNaN(vb[i]) {
			r := metrics.CompareRequests(name, va[i], vb[i], xa, xb, stats[i])
			(*t)[len(*t)-1].test = &r
		}
	}
}

// write prints the table: | Metric | A | B | % Difference | Noise |.
func (t abTable) write(w io.Writer, labelA, labelB string) error {
	rows := t
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
	x := RequestSamples(r.Records) // a --non-streaming run has none
	return abSeries{ttft: x["ttft"], tpot: x["tpot"], itl: x["itl"]}
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

package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"

	"llmbench/workloads/metrics"
	"llmbench/workloads/serving"
)

// VLLMSweepTable writes one row per point of a sweep: the throughput–latency curve.
func VLLMSweepTable(w io.Writer, points []*serving.Result) error {
	var b strings.Builder
	power := slices.ContainsFunc(points, func(r *serving.Result) bool { return r.PowerLimitW > 0 || r.EnergyKnown() })
	fmt.Fprintf(&b, "%s\n", vllmCenter(" Sweep ", '='))
	if power {
		fmt.Fprintf(&b, "%7s %9s %9s ", "power", "mean W", "tok/J")
	}
	fmt.Fprintf(&b, "%-11s %-9s %6s %6s %9s %11s %9s %9s %9s %9s\n", "concurrency", "rate", "ok", "failed",
		"req/s", "out tok/s", "TTFT p50", "TTFT p99", "TPOT p50", "TPOT p99")
	for _, r := range points {
		if power {
			limit, mean, tpj := "-", "-", "-"
			if r.PowerLimitW > 0 {
				limit = fmt.Sprintf("%.0f W", r.PowerLimitW)
			}
			if r.EnergyKnown() {
				mean, tpj = fmt.Sprintf("%.1f", r.Telemetry.MeanW), fmt.Sprintf("%.3g", r.OutputTokensPerJoule())
			}
			fmt.Fprintf(&b, "%7s %9s %9s ", limit, mean, tpj)
		}
		s := metrics.Summary(r.Records, r.Duration, metrics.ServingConfig{Percentiles: []float64{50, 99}, NonStreaming: r.Spec.NonStreaming})
		conc := "None"
		if r.Spec.MaxConcurrency > 0 {
			conc = fmt.Sprint(r.Spec.MaxConcurrency)
		}
		t50, _ := s.TTFT.Percentile(50)
		t99, _ := s.TTFT.Percentile(99)
		p50, _ := s.TPOT.Percentile(50)
		p99, _ := s.TPOT.Percentile(99)
		mark := ""
		if r.Partial {
			mark = " (partial)"
		}
		lat := []string{vllmFloat(t50), vllmFloat(t99), vllmFloat(p50), vllmFloat(p99)}
		if !s.Measured("ttft") { // --non-streaming: not measured, never 0
			lat = []string{"n/a", "n/a", "n/a", "n/a"}
		}
		fmt.Fprintf(&b, "%-11s %-9s %6d %6d %9.2f %11.2f %9s %9s %9s %9s%s\n", conc, r.Spec.RequestRate.String(),
			s.Completed, s.Failed, s.RequestThroughput, s.OutputThroughput, lat[0], lat[1], lat[2], lat[3], mark)
	}
	b.WriteString("(latencies in ms)\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// vllmCompareKeys are the saved figures an A/B table shows, in order.
var vllmCompareKeys = []string{
	"request_throughput", "output_throughput", "total_token_throughput", "request_goodput",
	"max_output_tokens_per_s", "peak_output_tokens_per_s",
}

// vllmSamples extracts per-request samples (ms) of a latency metric from a saved
// result, when --save-detailed kept them; failed requests are left out.
func vllmSamples(res map[string]any, metric string) []float64 {
	num := func(v any) (float64, bool) { f, ok := v.(float64); return f, ok }
	arr := func(k string) []any { a, _ := res[k].([]any); return a }
	errs := arr("errors")
	ok := func(i int) bool {
		if i < len(errs) {
			if s, _ := errs[i].(string); s != "" {
				return false
			}
		}
		return true
	}
	var out []float64
	switch metric {
	case "ttft", "e2el":
		key := map[string]string{"ttft": "ttfts", "e2el": "latencies"}[metric]
		if metric == "e2el" && len(errs) == 0 {
			return nil // without errors we cannot tell failures apart
		}
		for i, v := range arr(key) {
			if f, good := num(v); good && ok(i) {
				out = append(out, f*1000)
			}
		}
	case "itl":
		for i, v := range arr("itls") {
			if !ok(i) {
				continue
			}
			inner, _ := v.([]any)
			for _, g := range inner {
				if f, good := num(g); good {
					out = append(out, f*1000)
				}
			}
		}
	case "tpot":
		ttft, lat, outs := arr("ttfts"), arr("latencies"), arr("output_lens")
		for i := range min(len(ttft), len(lat), len(outs)) {
			t, measured := num(ttft[i]) // null under --non-streaming: no TPOT
			l, _ := num(lat[i])
			n, _ := num(outs[i])
			if ok(i) && measured && n > 1 {
				out = append(out, (l-t)*1000/(n-1))
			}
		}
	}
	return out
}

// VLLMCompare writes an A/B table of two saved serving results (ours or vLLM's):
// metric | A | B | % difference (positive = B larger) | noise. The noise verdict
// appears on the mean rows (difference of means) and on the median and p50 rows of
// TTFT, TPOT and E2EL (difference of medians) when both results were saved with
// --save-detailed: a moving-block bootstrap over the request sequence (blocks of
// consecutive requests, whose latencies are correlated), "significant" when its
// 95 % confidence interval of B − A excludes 0. The verdict shows that interval, and
// a footnote names the method.
func VLLMCompare(w io.Writer, nameA, nameB string, a, b map[string]any) error {
	var rows []metrics.CompareRow
	add := func(key string, sa, sb []float64, stat metrics.Stat) {
		va, okA := a[key].(float64)
		vb, okB := b[key].(float64)
		if okA && okB {
			rows = append(rows, metrics.CompareRequests(key, va, vb, sa, sb, stat))
		}
	}
	for _, k := range vllmCompareKeys {
		add(k, nil, nil, metrics.StatMean)
	}
	for _, m := range []string{"ttft", "tpot", "itl", "e2el", "ttft_content", "itl_per_token"} {
		sa, sb := vllmSamples(a, m), vllmSamples(b, m)
		add("mean_"+m+"_ms", sa, sb, metrics.StatMean)
		if m == "itl" { // pooled gaps: a median over every token costs more than it tells
			sa, sb = nil, nil
		}
		add("median_"+m+"_ms", sa, sb, metrics.StatMedian)
		for _, p := range []string{"50", "90", "95", "99", "99.9"} {
			if p == "50" {
				add("p"+p+"_"+m+"_ms", sa, sb, metrics.StatMedian)
				continue
			}
			add("p"+p+"_"+m+"_ms", nil, nil, metrics.StatMean)
		}
	}
	if len(rows) == 0 {
		return fmt.Errorf("compare: no metric found in both results")
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "A: %s\nB: %s\n\n", nameA, nameB)
	fmt.Fprintf(&sb, "| %-28s | %12s | %12s | %12s | %-36s |\n", "metric", "A", "B", "% difference", "noise (95 % CI of B − A)")
	fmt.Fprintf(&sb, "|%s|%s:|%s:|%s:|%s|\n", strings.Repeat("-", 30), strings.Repeat("-", 13), strings.Repeat("-", 13), strings.Repeat("-", 13), strings.Repeat("-", 38))
	noted := false
	for _, r := range rows {
		diff := "n/a"
		if !math.IsNaN(r.DiffPct) {
			diff = fmt.Sprintf("%+.2f%%", r.DiffPct)
		}
		verdict := r.Verdict()
		if verdict != "" {
			verdict = fmt.Sprintf("%s [%+.3g, %+.3g]", verdict, r.Test.CILow, r.Test.CIHigh)
			noted = true
		}
		fmt.Fprintf(&sb, "| %-28s | %12.2f | %12.2f | %12s | %-36s |\n", r.Metric, r.A, r.B, diff, verdict)
	}
	if !noted {
		sb.WriteString("\nno noise verdict: save both runs with --save-detailed to compare per-request samples\n")
	} else {
		fmt.Fprintf(&sb, "\nnoise: %s over the per-request samples in request order (blocks of consecutive requests);\n"+
			"mean rows compare means, median and p50 rows medians; significant when the interval excludes 0\n", metrics.DescribeBootstrap())
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

// ReadVLLMJSON reads a saved vLLM-style result file (serve-bench --save-result, or
// vllm bench serve's); a file written with --append-result holds one object per run
// and the last counts.
func ReadVLLMJSON(path string) (map[string]any, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("compare: %w", err)
	}
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	for {
		var o map[string]any
		if err := dec.Decode(&o); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("compare %s: %w", path, err)
		}
		m = o
	}
	if m == nil {
		return nil, fmt.Errorf("compare %s: no result in the file", path)
	}
	return m, nil
}

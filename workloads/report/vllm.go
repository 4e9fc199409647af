// Package report holds llmbench's exporters: each writes a finished result (never a
// live snapshot) in a format people already read, such as vLLM's serving benchmark
// block and JSON, or llama-bench's tables.
package report

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"llmbench/workloads/metrics"
	"llmbench/workloads/serving"
	"llmbench/workloads/telemetry"
)

// vllmWidth is the width of vLLM's rules; labels are padded to 40.
const vllmWidth = 50

// vllmCenter centres s in a rule of fill characters, as Python's "{:c^50}" does
// (extra padding goes to the right).
func vllmCenter(s string, fill byte) string {
	pad := vllmWidth - len(s)
	if pad <= 0 {
		return s
	}
	l := pad / 2
	return strings.Repeat(string(fill), l) + s + strings.Repeat(string(fill), pad-l)
}

// vllmFloat formats as Python's "{:.2f}".
func vllmFloat(v float64) string {
	switch {
	case math.IsNaN(v):
		return "nan"
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// vllmPyFloat formats as Python's str(float): "1.0", "0.5", "inf".
func vllmPyFloat(v float64) string {
	if math.IsInf(v, 1) {
		return "inf"
	}
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if !strings.ContainsAny(s, ".eE") && !math.IsNaN(v) {
		s += ".0"
	}
	return s
}

// vllmPercentileWord names a percentile as vLLM does: "99", "99.9".
func vllmPercentileWord(p float64) string {
	if p == math.Trunc(p) {
		return strconv.Itoa(int(p))
	}
	return strconv.FormatFloat(p, 'f', -1, 64)
}

type vllmLines struct {
	b strings.Builder
}

func (l *vllmLines) row(label, value string) {
	fmt.Fprintf(&l.b, "%-40s %-10s\n", label, value)
}
func (l *vllmLines) line(s string) { l.b.WriteString(s + "\n") }

// vllmMetric is one latency section of the block.
type vllmMetric struct {
	key, name, header string
	dist              func(*metrics.Serving) metrics.Dist
}

var vllmMetrics = []vllmMetric{
	{"ttft", "TTFT", "Time to First Token", func(s *metrics.Serving) metrics.Dist { return s.TTFT }},
	{"tpot", "TPOT", "Time per Output Token (excl. 1st token)", func(s *metrics.Serving) metrics.Dist { return s.TPOT }},
	{"itl", "ITL", "Inter-token Latency", func(s *metrics.Serving) metrics.Dist { return s.ITL }},
	{"e2el", "E2EL", "End-to-end Latency", func(s *metrics.Serving) metrics.Dist { return s.E2EL }},
	{"client_queue_time", "Client Queue Time", "Client-side Queueing", func(s *metrics.Serving) metrics.Dist { return s.QueueTime }},
	{"e2el_including_client_queue", "E2EL incl. Client Queue", "Queue-inclusive End-to-end Latency", func(s *metrics.Serving) metrics.Dist { return s.E2ELInclQueue }},
}

// PercentileMetricKeys lists the metric names percentile_metrics (vLLM's
// --percentile-metrics) accepts, in vLLM's order.
func PercentileMetricKeys() []string {
	out := make([]string, len(vllmMetrics))
	for i, m := range vllmMetrics {
		out[i] = m.key
	}
	return out
}

// PercentileMetrics returns the metrics a result reports percentiles for (vLLM's
// default: ttft,tpot,itl). Under --non-streaming, that default list gets e2el, the one
// latency such a run measures.
func PercentileMetrics(res *serving.Result) []string {
	def := []string{"ttft", "tpot", "itl"}
	sel := res.Spec.PercentileMetrics
	if len(sel) == 0 {
		sel = def
	}
	if res.Spec.NonStreaming && slices.Equal(sel, def) {
		return append(slices.Clone(def), "e2el")
	}
	return sel
}

// VLLMPreamble writes the lines vllm bench serve prints before its main run.
func VLLMPreamble(w io.Writer, res *serving.Result) error {
	s := res.Spec
	var l vllmLines
	if s.RampUpStrategy != "" {
		l.line("Traffic ramp-up strategy: " + s.RampUpStrategy + ".")
		l.line(fmt.Sprintf("Will increase RPS from %s to %s RPS over the duration of the benchmark.", vllmRPS(s.RampUpStartRPS), vllmRPS(s.RampUpEndRPS)))
	} else {
		l.line("Traffic request rate: " + s.RequestRate.String())
	}
	b := s.Burstiness
	if b == 0 {
		b = 1
	}
	dist := "Gamma distribution"
	if b == 1 {
		dist = "Poisson process"
	}
	l.line(fmt.Sprintf("Burstiness factor: %s (%s)", vllmPyFloat(b), dist))
	mc := "None"
	if s.MaxConcurrency > 0 {
		mc = strconv.Itoa(s.MaxConcurrency)
	}
	l.line("Maximum request concurrency: " + mc)
	_, err := io.WriteString(w, l.b.String())
	return err
}

// vllmRPS prints a ramp-up rate as vLLM's int arguments print.
func vllmRPS(v float64) string {
	if v == math.Trunc(v) {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return vllmPyFloat(v)
}

// VLLMBlock writes the "Serving Benchmark Result" block exactly as vllm bench serve
// prints it: 50-column rules, labels padded to 40.
func VLLMBlock(w io.Writer, res *serving.Result) error {
	s, m := res.Spec, &res.Summary
	var l vllmLines
	l.line(vllmCenter(" Serving Benchmark Result ", '='))
	l.row("Successful requests:", strconv.Itoa(m.Completed))
	l.row("Failed requests:", strconv.Itoa(m.Failed))
	if s.MaxConcurrency > 0 {
		l.row("Maximum request concurrency:", strconv.Itoa(s.MaxConcurrency))
	}
	if !s.RequestRate.IsInf() {
		l.row("Request rate configured (RPS):", vllmFloat(float64(s.RequestRate)))
	}
	l.row("Benchmark duration (s):", vllmFloat(res.Duration.Seconds()))
	l.row("Total input tokens:", strconv.Itoa(m.TotalInput))
	l.row("Total generated tokens:", strconv.Itoa(m.TotalOutput))
	l.row("Request throughput (req/s):", vllmFloat(m.RequestThroughput))
	if m.GoodputSet {
		l.row("Request goodput (req/s):", vllmFloat(m.RequestGoodput))
	}
	l.row("Output token throughput (tok/s):", vllmFloat(m.OutputThroughput))
	l.row("Peak output token throughput (tok/s):", vllmFloat(m.MaxOutputTokensPerS))
	l.row("Peak concurrent requests:", vllmFloat(float64(m.MaxConcurrentRequests)))
	l.row("Total token throughput (tok/s):", vllmFloat(m.TotalTokenThroughput))
	sel := PercentileMetrics(res)
	for _, mt := range vllmMetrics {
		switch mt.key {
		case "client_queue_time":
			if s.MaxConcurrency <= 0 {
				continue
			}
		case "e2el_including_client_queue":
			if s.MaxConcurrency <= 0 || s.RequestRate.IsInf() {
				continue
			}
		}
		if !slices.Contains(sel, mt.key) {
			continue
		}
		d := mt.dist(m)
		l.line(vllmCenter(mt.header, '-'))
		f := vllmFloat
		if !m.Measured(mt.key) { // --non-streaming: not measured, never 0
			f = func(float64) string { return "n/a" }
		}
		l.row("Mean "+mt.name+" (ms):", f(d.Mean))
		l.row("Median "+mt.name+" (ms):", f(d.Median))
		for _, p := range d.Percentiles {
			l.row("P"+vllmPercentileWord(p.P)+" "+mt.name+" (ms):", f(p.V))
		}
	}
	if m.NonStreaming {
		l.line(metrics.NotMeasuredNote)
	}
	l.line(strings.Repeat("=", vllmWidth))
	_, err := io.WriteString(w, l.b.String())
	return err
}

// VLLMFailures writes the failure summary that precedes the block: each failure kind
// with its count and the first reasons (up to 10, as vLLM caps them).
func VLLMFailures(w io.Writer, res *serving.Result) error {
	if res.Summary.Failed == 0 {
		return nil
	}
	var l vllmLines
	l.line("Failed requests during benchmark run detected (capping to 10):")
	n := 0
	for _, r := range res.Records {
		if !r.Success && n < 10 {
			l.line(fmt.Sprintf("Error %d: %s", n, r.Error))
			n++
		}
	}
	kinds := make([]string, 0, len(res.Summary.Failures))
	for k := range res.Summary.Failures {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	for _, k := range kinds {
		l.line(fmt.Sprintf("Failures by reason: %-32s %d", k, res.Summary.Failures[k]))
	}
	_, err := io.WriteString(w, l.b.String())
	return err
}

// VLLMExtras writes llmbench's additions after the block, under their own names
// (ttft_content, per-token ITL, peak output tok/s in tokens, client send lag), plus
// the partial-run marker and the run's notes.
func VLLMExtras(w io.Writer, res *serving.Result) error {
	m := &res.Summary
	var l vllmLines
	l.line(vllmCenter(" llmbench additions ", '-'))
	if m.NonStreaming {
		l.row("Non-streaming requests:", "yes (TTFT content, ITL per token: n/a)")
	} else {
		l.row("Mean TTFT content (ms):", vllmFloat(m.TTFTContent.Mean))
		l.row("Median TTFT content (ms):", vllmFloat(m.TTFTContent.Median))
		for _, p := range m.TTFTContent.Percentiles {
			l.row("P"+vllmPercentileWord(p.P)+" TTFT content (ms):", vllmFloat(p.V))
		}
		l.row("Mean ITL per token (ms):", vllmFloat(m.ITLPerToken.Mean))
		for _, p := range m.ITLPerToken.Percentiles {
			l.row("P"+vllmPercentileWord(p.P)+" ITL per token (ms):", vllmFloat(p.V))
		}
	}
	l.row("Peak output tokens/s (tokens):", vllmFloat(m.PeakOutputTokensPerS))
	l.row("Sampling temperature:", vllmTemperature(res))
	if m.Retokenized > 0 {
		l.row("Output tokens re-tokenized (requests):", fmt.Sprintf("%d/%d", m.Retokenized, m.Completed))
	}
	if res.Spec.Backend != "inproc" {
		vllmConnections(&l, res)
	}
	p50, _ := m.SendLag.Percentile(50)
	p99, _ := m.SendLag.Percentile(99)
	l.row("Client send lag P50 (ms):", vllmFloat(p50))
	l.row("Client send lag P99 (ms):", vllmFloat(p99))
	for _, k := range slices.Sorted(maps.Keys(m.ServerTimings)) {
		// Server-reported timings (llama.cpp's), beside ours, never mixed in.
		l.row(strings.Replace(k, "llamacpp_", "llama.cpp ", 1)+" mean:", vllmFloat(m.ServerTimings[k]))
	}
	if res.PowerLimitW > 0 {
		l.row("Power limit (W):", vllmFloat(res.PowerLimitW))
	}
	if tp := res.Telemetry; tp != nil {
		// Which device the energy came from and whether the readings are real.
		l.row("Energy device:", tp.Describe())
		if res.EnergyKnown() {
			l.row("Power min/mean/max (W):", fmt.Sprintf("%.0f/%.0f/%.0f", tp.MinW, tp.MeanW, tp.MaxW))
			l.row("Energy (J):", vllmFloat(tp.EnergyJ))
			l.row("Output tokens per joule:", vllmFloat(res.OutputTokensPerJoule()))
			l.row("Joules per output token:", vllmFloat(res.JoulesPerOutputToken()))
		}
		if tp.GPUSource == telemetry.SourceFake && tp.Provenance() != telemetry.SourceFake {
			l.line("note: the GPU readings are FAKE (scripted device, not real); they are not this run's energy")
		}
	}
	if e := res.Engine; e != nil {
		vllmEngine(&l, e)
	}
	if res.Skipped > 0 {
		l.row("Prompts skipped (filters/context):", strconv.Itoa(res.Skipped))
	}
	if res.Partial {
		l.line(fmt.Sprintf("PARTIAL: interrupted; %d requests not measured", res.Interrupted))
	}
	if m.Retokenized > 0 {
		l.line(fmt.Sprintf("note: the output tokens of %d requests were counted by re-tokenizing their text with %s: the server reported no count (usage)",
			m.Retokenized, res.TokenizerID))
	}
	for _, n := range res.Notes {
		l.line("note: " + n)
	}
	_, err := io.WriteString(w, l.b.String())
	return err
}

// vllmTemperature states the sampling temperature every request carried.
func vllmTemperature(res *serving.Result) string {
	if t := res.Spec.Temperature; t != nil {
		return vllmFloat(*t)
	}
	return "0.00 (default, greedy)"
}

// vllmConnections adds the connection lines of an HTTP run: how many requests opened
// a connection and how long that took (inside their TTFT), the TTFT of the others, and
// the connections opened before the clock.
func vllmConnections(l *vllmLines, res *serving.Result) {
	m := &res.Summary
	l.row("Warm connections (before the clock):", strconv.Itoa(res.WarmConnections))
	l.row("New connections (during the run):", strconv.Itoa(m.NewConns))
	if m.NewConns > 0 {
		l.row("Mean connect (ms):", vllmFloat(m.Connect.Mean))
		for _, p := range m.Connect.Percentiles {
			l.row("P"+vllmPercentileWord(p.P)+" connect (ms):", vllmFloat(p.V))
		}
	}
	if m.TTFTWarm.N > 0 && m.TTFTWarm.N < m.Completed {
		l.row("Median TTFT warm conn (ms):", vllmFloat(m.TTFTWarm.Median))
		for _, p := range m.TTFTWarm.Percentiles {
			l.row("P"+vllmPercentileWord(p.P)+" TTFT warm conn (ms):", vllmFloat(p.V))
		}
	}
}

// vllmEngine adds the in-process engine's KV cache and prefix-cache lines.
func vllmEngine(l *vllmLines, e *serving.EngineStats) {
	mib := func(b int64) string { return vllmFloat(float64(b) / (1 << 20)) }
	if e.PrefixCache {
		l.row("Prefix cache hit rate (%):", vllmFloat(e.PrefixHitRate()))
		l.row("Prefix cache hits/queries (tokens):", fmt.Sprintf("%d/%d", e.PrefixHits, e.PrefixQueries))
	} else {
		l.row("Prefix cache:", "off")
	}
	l.row("Preemptions:", strconv.FormatInt(e.Preemptions, 10))
	if e.DraftWeightBytes > 0 {
		l.row("Draft acceptance rate (%):", vllmFloat(e.AcceptanceRate()))
		l.row("Draft accepted/drafted (tokens):", fmt.Sprintf("%d/%d", e.AcceptedTokens, e.DraftedTokens))
		l.row("Tokens per model step:", vllmFloat(e.TokensPerStep()))
		l.row("Draft memory (MiB):", mib(e.DraftWeightBytes+e.DraftKVBytes))
	}
	if e.DecodeSteps > 0 {
		l.row("Engine decode step median (ms):", vllmFloat(e.DecodeStepMedianMs))
	}
	l.row("KV cache type:", e.KVCacheType)
	l.row("KV cache blocks x block size:", fmt.Sprintf("%dx%d", e.KVBlocks, e.KVBlockSize))
	l.row("KV cache memory (MiB):", mib(e.KVBytes))
	if e.KVCacheType != "f16" {
		l.row("KV cache saved vs f16 (MiB):", mib(e.KVSavedVsF16))
	}
	if e.KVCacheType != "f32" {
		l.row("KV cache saved vs f32 (MiB):", mib(e.KVSavedVsF32))
	}
}

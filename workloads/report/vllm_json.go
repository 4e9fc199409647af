package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"llmbench/workloads/metrics"
	"llmbench/workloads/serving"
	"llmbench/workloads/telemetry"
)

// vllmKV is one key of an ordered JSON object.
type vllmKV struct {
	k string
	v any
}

// vllmObject is a JSON object that keeps its keys in insertion order, as Python's
// json.dump of a dict does, so saved results diff cleanly against vLLM's.
type vllmObject []vllmKV

func (o *vllmObject) set(k string, v any) {
	for i := range *o {
		if (*o)[i].k == k {
			(*o)[i].v = v
			return
		}
	}
	*o = append(*o, vllmKV{k, v})
}

// MarshalJSON implements json.Marshaler.
func (o vllmObject) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, kv := range o {
		if i > 0 {
			b.WriteString(", ")
		}
		k, _ := json.Marshal(kv.k)
		b.Write(k)
		b.WriteString(": ")
		v, err := json.Marshal(vllmJSONSafe(kv.v))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", kv.k, err)
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// vllmJSONSafe maps non-finite floats to null (JSON has no NaN or Infinity).
func vllmJSONSafe(v any) any {
	switch x := v.(type) {
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil
		}
		return pyFloat(x)
	case []float64:
		out := make([]pyFloat, len(x))
		for i, f := range x {
			out[i] = pyFloat(f)
		}
		return out
	case [][]float64:
		out := make([][]pyFloat, len(x))
		for i, row := range x {
			out[i] = vllmJSONSafe(row).([]pyFloat)
		}
		return out
	}
	return v
}

// intIfWhole is v as an int when it is a whole number (as vLLM's int options), else v.
func intIfWhole(v float64) any {
	if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
		return int64(v)
	}
	return v
}

// pyFloat is a float written as Python's json.dump writes one (its repr): always with
// a decimal point or an exponent ("10.0", not "10"), so that a reader of the file gets
// the float vLLM's result holds, not an int. NaN and infinities are written as null.
type pyFloat float64

// MarshalJSON implements json.Marshaler.
func (f pyFloat) MarshalJSON() ([]byte, error) {
	x := float64(f)
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return []byte("null"), nil
	}
	if a := math.Abs(x); a != 0 && (a < 1e-4 || a >= 1e16) {
		return []byte(strconv.FormatFloat(x, 'e', -1, 64)), nil
	}
	s := strconv.FormatFloat(x, 'f', -1, 64)
	if !strings.ContainsAny(s, ".") {
		s += ".0"
	}
	return []byte(s), nil
}

// VLLMJSONOptions selects the optional parts of a saved result.
type VLLMJSONOptions struct {
	Detailed bool              // --save-detailed: per-request arrays
	Metadata map[string]string // --metadata k=v, written at the top level as vLLM does
	Date     time.Time         // the run's date (vLLM's "%Y%m%d-%H%M%S")
	Version  string            // llmbench's version
}

func secs(d time.Duration) float64 { return d.Seconds() }

// VLLMJSON writes a serving result as vllm bench serve's --save-result JSON: its field
// names, order and units (seconds for per-request arrays, ms for statistics), then
// llmbench's additions and the metric definitions used.
func VLLMJSON(w io.Writer, res *serving.Result, opt VLLMJSONOptions) error {
	s, m := res.Spec, &res.Summary
	var o vllmObject
	o.set("date", opt.Date.Format("20060102-150405"))
	o.set("endpoint_type", s.Backend)
	o.set("backend", s.Backend)
	if s.Label != "" {
		o.set("label", s.Label)
	} else {
		o.set("label", nil)
	}
	o.set("model_id", res.ModelID)
	o.set("tokenizer_id", res.TokenizerID)
	o.set("num_prompts", s.Dataset.NumPrompts)
	keys := make([]string, 0, len(opt.Metadata))
	for k := range opt.Metadata {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		o.set(k, opt.Metadata[k])
	}
	if s.RequestRate.IsInf() {
		o.set("request_rate", "inf")
	} else {
		o.set("request_rate", float64(s.RequestRate))
	}
	b := s.Burstiness
	if b == 0 {
		b = 1
	}
	o.set("burstiness", b)
	if s.MaxConcurrency > 0 {
		o.set("max_concurrency", s.MaxConcurrency)
	} else {
		o.set("max_concurrency", nil)
	}
	if s.RampUpStrategy != "" {
		o.set("ramp_up_strategy", s.RampUpStrategy)
		o.set("ramp_up_start_rps", intIfWhole(s.RampUpStartRPS)) // ints in vLLM (type=int)
		o.set("ramp_up_end_rps", intIfWhole(s.RampUpEndRPS))
	}
	o.set("duration", res.Duration.Seconds())
	o.set("completed", m.Completed)
	o.set("failed", m.Failed)
	o.set("total_input_tokens", m.TotalInput)
	o.set("total_output_tokens", m.TotalOutput)
	o.set("request_throughput", m.RequestThroughput)
	if m.GoodputSet {
		o.set("request_goodput", m.RequestGoodput)
	} else {
		o.set("request_goodput", nil)
	}
	o.set("output_throughput", m.OutputThroughput)
	o.set("total_token_throughput", m.TotalTokenThroughput)
	n := len(res.Records)
	inputLens, ttfts, itls, lat, starts, queue := make([]int, n), make([]any, n), make([][]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	texts, errs, reasons := make([]string, n), make([]string, n), make([]string, n)
	for i, r := range res.Records {
		inputLens[i] = r.PromptLen
		ttfts[i], lat[i], starts[i], queue[i] = lbOpt(secs(r.TTFT), !r.NonStreaming), secs(r.Latency), secs(r.Start), secs(r.QueueTime())
		itls[i] = make([]float64, len(r.ITL))
		for j, g := range r.ITL {
			itls[i][j] = secs(g)
		}
		texts[i], errs[i], reasons[i] = r.Text, r.Error, r.Reason.String()
	}
	if opt.Detailed {
		o.set("input_lens", inputLens)
		o.set("output_lens", m.OutputLens)
		o.set("ttfts", ttfts)
		o.set("itls", itls)
	}
	o.set("latencies", lat)
	if opt.Detailed {
		o.set("start_times", starts)
	}
	o.set("queue_times", queue)
	if opt.Detailed {
		o.set("generated_texts", texts)
		o.set("errors", errs)
		o.set("failure_reason_per_request", reasons) // llmbench: "" on success, else timeout, http, malformed, …
	}
	o.set("max_output_tokens_per_s", m.MaxOutputTokensPerS)
	o.set("max_concurrent_requests", m.MaxConcurrentRequests)
	o.set("rtfx", 0.0)
	if len(res.RateChanges) > 0 {
		o.set("rps_change_events", res.RateChanges)
	}
	sel := PercentileMetrics(res)
	addDist := func(key string, d metrics.Dist) {
		if !m.Measured(key) { // --non-streaming: null, never 0
			o.set("mean_"+key+"_ms", nil)
			o.set("median_"+key+"_ms", nil)
			o.set("std_"+key+"_ms", nil)
			for _, p := range d.Percentiles {
				o.set("p"+vllmPercentileWord(p.P)+"_"+key+"_ms", nil)
			}
			return
		}
		o.set("mean_"+key+"_ms", d.Mean)
		o.set("median_"+key+"_ms", d.Median)
		o.set("std_"+key+"_ms", d.Std)
		for _, p := range d.Percentiles {
			o.set("p"+vllmPercentileWord(p.P)+"_"+key+"_ms", p.V)
		}
	}
	for _, mt := range vllmMetrics {
		if !slices.Contains(sel, mt.key) {
			continue
		}
		if (mt.key == "client_queue_time" && s.MaxConcurrency <= 0) ||
			(mt.key == "e2el_including_client_queue" && (s.MaxConcurrency <= 0 || s.RequestRate.IsInf())) {
			continue
		}
		addDist(mt.key, mt.dist(m))
	}
	// llmbench's additions, under names vLLM does not use.
	addDist("ttft_content", m.TTFTContent)
	addDist("itl_per_token", m.ITLPerToken)
	o.set("peak_output_tokens_per_s", m.PeakOutputTokensPerS)
	p50, _ := m.SendLag.Percentile(50)
	p99, _ := m.SendLag.Percentile(99)
	o.set("client_send_lag_p50_ms", p50)
	o.set("client_send_lag_p99_ms", p99)
	temp := 0.0
	if t := s.Temperature; t != nil {
		temp = *t
	}
	o.set("temperature", temp)
	o.set("output_tokens_retokenized", m.Retokenized)
	o.set("non_streaming", m.NonStreaming)
	o.set("warm_connections", res.WarmConnections)
	o.set("new_connections", m.NewConns)
	addDist("connect", m.Connect)
	addDist("ttft_warm", m.TTFTWarm)
	if m.ServerTimings != nil {
		o.set("server_timings_mean", m.ServerTimings)
	}
	// Telemetry, under names vLLM does not use (null when not measured).
	opt2 := func(v float64, ok bool) any {
		if !ok {
			return nil
		}
		return v
	}
	opt3 := func(v string) any {
		if v == "" {
			return nil
		}
		return v
	}
	known := res.EnergyKnown()
	tp := res.Telemetry
	if tp == nil {
		tp = &telemetry.Power{}
	}
	o.set("power_limit_w", opt2(res.PowerLimitW, res.PowerLimitW > 0))
	// energy_device: the device the energy figures come from; power_source: how its
	// power was read (rapl, nvml, or fake: not real readings); gpu_source: the GPU
	// readings the run sampled (nvml, fake), energy device or not.
	o.set("energy_device", opt3(tp.EnergyDevice()))
	o.set("power_source", opt3(tp.Provenance()))
	o.set("gpu_source", opt3(tp.GPUSource))
	o.set("energy_note", opt3(tp.Note))
	o.set("power_min_w", opt2(tp.MinW, known))
	o.set("power_mean_w", opt2(tp.MeanW, known))
	o.set("power_max_w", opt2(tp.MaxW, known))
	o.set("energy_j", opt2(tp.EnergyJ, known))
	o.set("output_tokens_per_joule", opt2(res.OutputTokensPerJoule(), known))
	o.set("joules_per_output_token", opt2(res.JoulesPerOutputToken(), res.JoulesPerOutputToken() > 0))
	if res.Telemetry != nil {
		o.set("telemetry", res.Telemetry)
	}
	if e := res.Engine; e != nil {
		o.set("engine", e) // in-process engine: KV cache and counters over the measured part
		if e.PrefixCache {
			o.set("prefix_cache_hit_rate", e.PrefixHitRate())
		}
		if e.DraftWeightBytes > 0 {
			o.set("draft_acceptance_rate", e.AcceptanceRate())
			o.set("tokens_per_step", e.TokensPerStep())
		}
	}
	o.set("failure_reasons", m.Failures)
	o.set("partial", res.Partial)
	o.set("interrupted_requests", res.Interrupted)
	o.set("requests", res.Requests) // = completed + failed + interrupted_requests
	o.set("skipped_prompts", res.Skipped)
	o.set("tokens_per_second_buckets", m.TokensPerSecond)
	o.set("concurrent_requests_per_second_buckets", m.ConcurrentPerSecond)
	if opt.Detailed {
		ttc, chunks, lags := make([]any, n), make([][]int32, n), make([]float64, n)
		extras, anyExtra := make([]map[string]float64, n), false
		for i, r := range res.Records {
			ttc[i], chunks[i], lags[i] = lbOpt(secs(r.TTFTContent), !r.NonStreaming), r.ChunkTokens, secs(r.SendLag())
			extras[i] = r.Extra
			anyExtra = anyExtra || r.Extra != nil
		}
		o.set("ttfts_content", ttc)
		o.set("chunk_tokens", chunks)
		o.set("send_lags", lags)
		if anyExtra {
			o.set("server_timings", extras) // one per request, aligned with the arrays above
		}
	}
	if len(res.Notes) > 0 {
		o.set("notes", res.Notes)
	}
	o.set("spec", res.Spec)
	o.set("tool", "llmbench "+opt.Version)
	o.set("metric_definitions", metrics.Definitions)
	out, err := o.MarshalJSON()
	if err != nil {
		return fmt.Errorf("result json: %w", err)
	}
	_, err = w.Write(out)
	return err
}

// VLLMResultFilename is vLLM's default result file name:
// {label}-{rate}qps[-concurrency{N}]-{model}-{date}.json.
func VLLMResultFilename(res *serving.Result, date time.Time) string {
	s := res.Spec
	label := s.Label
	if label == "" {
		label = s.Backend
	}
	model := res.ModelID
	for i := len(model) - 1; i >= 0; i-- {
		if model[i] == '/' {
			model = model[i+1:]
			break
		}
	}
	conc := ""
	if s.MaxConcurrency > 0 {
		conc = fmt.Sprintf("-concurrency%d", s.MaxConcurrency)
	}
	dt := date.Format("20060102-150405")
	if s.RampUpStrategy != "" {
		return fmt.Sprintf("%s-ramp-up-%s-%sqps-%sqps%s-%s-%s.json", label, s.RampUpStrategy, vllmRPS(s.RampUpStartRPS), vllmRPS(s.RampUpEndRPS), conc, model, dt)
	}
	return fmt.Sprintf("%s-%sqps%s-%s-%s.json", label, s.RequestRate.String(), conc, model, dt)
}

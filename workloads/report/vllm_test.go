package report

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"llmbench/workloads"
	"llmbench/workloads/metrics"
	"llmbench/workloads/serving"
)

func sampleResult() *serving.Result {
	ms := time.Millisecond
	recs := []metrics.Record{
		{PromptLen: 10, Start: 0, Arrival: 0, TTFT: 100 * ms, ITL: []time.Duration{10 * ms, 20 * ms}, Latency: 130 * ms, OutputTokens: 3, Success: true, Text: "abc"},
		{PromptLen: 10, Start: 500 * ms, Arrival: 500 * ms, TTFT: 200 * ms, ITL: []time.Duration{30 * ms}, Latency: 230 * ms, OutputTokens: 2, Success: true},
		{PromptLen: 10, Start: 1200 * ms, Arrival: 1200 * ms, TTFT: 50 * ms, Latency: 50 * ms, OutputTokens: 1, Success: true},
		{PromptLen: 10, Start: 1300 * ms, Arrival: 1300 * ms, Error: "HTTP 500: overloaded"},
	}
	res := &serving.Result{
		Spec: workloads.ServeSpec{Backend: "openai", Model: "m", RequestRate: 10, Burstiness: 1, MaxConcurrency: 4,
			PercentileMetrics: []string{"ttft", "tpot", "itl", "e2el", "client_queue_time"}, MetricPercentiles: []float64{50, 99.9},
			Goodput: map[string]float64{"ttft": 150}, Dataset: workloads.DatasetSpec{Name: "random", NumPrompts: 4}},
		ModelID: "org/m", TokenizerID: "tok", Duration: 2 * time.Second, Records: recs,
	}
	res.Summary = serving.Summarize(res)
	return res
}

// TestVLLMBlockGolden: the block is byte-for-byte what vLLM's print statements
// produce; the golden file was written by Python's str.format with vLLM's format
// strings ("{:<40} {:<10}", "{:<40} {:<10.2f}", "{s:{c}^{n}}").
func TestVLLMBlockGolden(t *testing.T) {
	want, err := os.ReadFile("testdata/vllm_block.golden")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := VLLMBlock(&b, sampleResult()); err != nil {
		t.Fatal(err)
	}
	if b.String() != string(want) {
		t.Errorf("block differs from vLLM's layout:\n got:\n%s\nwant:\n%s", b.String(), want)
	}
	for _, l := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
		if strings.HasPrefix(l, "=") || strings.HasPrefix(l, "-") {
			if len(l) != 50 {
				t.Errorf("rule %q is %d columns", l, len(l))
			}
		}
	}
}

func TestVLLMPreamble(t *testing.T) {
	var b bytes.Buffer
	res := sampleResult()
	res.Spec.RequestRate = workloads.Inf
	res.Spec.MaxConcurrency = 0
	VLLMPreamble(&b, res)
	want := "Traffic request rate: inf\nBurstiness factor: 1.0 (Poisson process)\nMaximum request concurrency: None\n"
	if b.String() != want {
		t.Errorf("got %q", b.String())
	}
}

func TestVLLMJSON(t *testing.T) {
	var b bytes.Buffer
	res := sampleResult()
	res.Spec.HeaderNames = []string{"Authorization"}
	if err := VLLMJSON(&b, res, VLLMJSONOptions{Detailed: true, Metadata: map[string]string{"tp": "1"}, Date: time.Unix(0, 0).UTC()}); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"date", "endpoint_type", "backend", "label", "model_id", "tokenizer_id", "num_prompts", "request_rate",
		"burstiness", "max_concurrency", "duration", "completed", "failed", "total_input_tokens", "total_output_tokens",
		"request_throughput", "request_goodput", "output_throughput", "total_token_throughput", "input_lens", "output_lens",
		"ttfts", "itls", "latencies", "start_times", "queue_times", "generated_texts", "errors", "max_output_tokens_per_s",
		"max_concurrent_requests", "mean_ttft_ms", "median_ttft_ms", "std_ttft_ms", "p50_ttft_ms", "p99.9_ttft_ms",
		"mean_tpot_ms", "p99.9_itl_ms", "mean_e2el_ms", "mean_client_queue_time_ms", "tp",
		"mean_ttft_content_ms", "client_send_lag_p99_ms", "peak_output_tokens_per_s", "failure_reasons", "partial", "metric_definitions"} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
	if m["request_rate"] != 10.0 || m["completed"] != 3.0 || m["max_concurrency"] != 4.0 {
		t.Errorf("request_rate %v completed %v max_concurrency %v", m["request_rate"], m["completed"], m["max_concurrency"])
	}
	if !strings.HasPrefix(b.String(), `{"date": "19700101-000000", "endpoint_type": "openai", "backend": "openai"`) {
		t.Errorf("key order: %.80s", b.String())
	}
	// The A/B table of a result against itself: 0% everywhere, noise verdicts.
	var out bytes.Buffer
	if err := VLLMCompare(&out, "a", "b", m, m); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "| mean_ttft_ms") || !strings.Contains(out.String(), "+0.00%") || !strings.Contains(out.String(), "within noise") {
		t.Errorf("compare:\n%s", out.String())
	}
}

func TestVLLMResultFilename(t *testing.T) {
	res := sampleResult()
	if got := VLLMResultFilename(res, time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)); got != "openai-10.0qps-concurrency4-m-20250102-030405.json" {
		t.Errorf("got %q", got)
	}
}

// TestVLLMJSONServerTimings: llama.cpp's own timings land in the result JSON, their
// mean always and, with --save-detailed, one object per request aligned with the other
// per-request arrays (null where a request reported none).
func TestVLLMJSONServerTimings(t *testing.T) {
	res := sampleResult()
	res.Spec.Backend = "llamacpp"
	res.Records[0].Extra = map[string]float64{"llamacpp_prompt_ms": 2, "llamacpp_predicted_n": 3}
	res.Records[2].Extra = map[string]float64{"llamacpp_prompt_ms": 4, "llamacpp_predicted_n": 1}
	res.Summary = serving.Summarize(res)
	for _, detailed := range []bool{false, true} {
		var b bytes.Buffer
		if err := VLLMJSON(&b, res, VLLMJSONOptions{Detailed: detailed}); err != nil {
			t.Fatal(err)
		}
		var m struct {
			Mean    map[string]float64   `json:"server_timings_mean"`
			PerReq  []map[string]float64 `json:"server_timings"`
			Defs    map[string]string    `json:"metric_definitions"`
			TTFTs   []float64            `json:"ttfts"`
			Partial *bool                `json:"partial"`
		}
		if err := json.Unmarshal(b.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		if m.Mean["llamacpp_prompt_ms"] != 3 || m.Mean["llamacpp_predicted_n"] != 2 || m.Defs["server_timings"] == "" {
			t.Errorf("detailed=%v: mean %v, definition %q", detailed, m.Mean, m.Defs["server_timings"])
		}
		switch {
		case !detailed && m.PerReq != nil:
			t.Errorf("per-request timings without --save-detailed")
		case detailed && (len(m.PerReq) != len(m.TTFTs) || m.PerReq[0]["llamacpp_prompt_ms"] != 2 || m.PerReq[1] != nil ||
			m.PerReq[2]["llamacpp_prompt_ms"] != 4):
			t.Errorf("per-request timings not aligned: %v (ttfts %d)", m.PerReq, len(m.TTFTs))
		}
	}
}

// TestVLLMJSONFloatTypes: the result's float fields are written as Python writes
// floats (request_rate 10.0, burstiness 1.0), so readers get vLLM's value types.
func TestVLLMJSONFloatTypes(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{{10, "10.0"}, {1, "1.0"}, {0.5, "0.5"}, {0, "0.0"}, {-3, "-3.0"}, {1e-5, "1e-05"}, {1e16, "1e+16"}, {123456789.25, "123456789.25"}} {
		got, _ := pyFloat(c.v).MarshalJSON()
		if string(got) != c.want {
			t.Errorf("%v: %s; want %s", c.v, got, c.want)
		}
	}
	var o vllmObject
	o.set("request_rate", 10.0)
	o.set("burstiness", 1.0)
	o.set("max_concurrency", 4)
	o.set("ttfts", []float64{0.25, 1})
	o.set("nan", math.NaN())
	b, err := o.MarshalJSON()
	if err != nil || string(b) != `{"request_rate": 10.0, "burstiness": 1.0, "max_concurrency": 4, "ttfts": [0.25,1.0], "nan": null}` {
		t.Errorf("%s %v", b, err)
	}
}

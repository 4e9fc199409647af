package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"llmbench/workloads/metrics"
	"llmbench/workloads/serving"
)

// abResult scripts a serving result of n requests of 11 output tokens: TTFT 100 ms,
// then gaps of gap, each chunk carrying per tokens, the requests one after another.
func abResult(n int, gap time.Duration, per int32, eng *serving.EngineStats) *serving.Result {
	r := &serving.Result{Engine: eng}
	var t time.Duration
	for i := range n {
		rec := metrics.Record{Index: i, PromptLen: 32, Start: t, TTFT: 100 * time.Millisecond, OutputTokens: 11, Success: true}
		rec.Latency = rec.TTFT
		for left := int32(10); left > 0; left -= per {
			rec.ITL = append(rec.ITL, gap)
			rec.ChunkTokens = append(rec.ChunkTokens, min(per, left))
			rec.Latency += gap
		}
		t += rec.Latency
		r.Records = append(r.Records, rec)
	}
	r.Duration = t
	return r
}

// TestServeAB checks the A/B table against scripted runs: the published rows, the
// values and % differences they imply, the draft rows, and "-" where a value is
// unknown.
func TestServeAB(t *testing.T) {
	const gib = 1 << 30
	a := abResult(4, 10*time.Millisecond, 1, &serving.EngineStats{WeightBytes: gib, KVBytes: gib / 2, SeqSteps: 44, SeqTokens: 44})
	b := abResult(4, 12*time.Millisecond, 2, &serving.EngineStats{WeightBytes: gib, KVBytes: gib / 2, DraftWeightBytes: gib / 8, DraftKVBytes: gib / 8,
		DraftedTokens: 100, AcceptedTokens: 75, SeqSteps: 20, SeqTokens: 44})
	var out bytes.Buffer
	if err := ServeAB(&out, "no draft", "with draft", a, b); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	t.Log("\n" + got)
	// A: 4 × 200 ms = 0.8 s, 44 tokens; B: 4 × (100 + 5 × 12) ms = 0.64 s.
	for _, want := range [][]string{
		{"Metric", "no draft", "with draft", "% Difference"},
		{"Memory Usage (GiB)", "1.50", "1.75", "16.7"},
		{"Successful requests", "4", "4", "0.0"},
		{"Benchmark duration (s)", "0.80", "0.64", "-20.0"},
		{"Total input tokens", "128", "128", "0.0"},
		{"Total generated tokens", "44", "44", "0.0"},
		{"Request throughput (req/s)", "5.00", "6.25", "25.0"},
		{"Output token throughput (tok/s)", "55.00", "68.75", "25.0"},
		{"Total Token throughput (tok/s)", "215.00", "268.75", "25.0"},
		{"Mean TTFT (ms)", "100.00", "100.00", "0.0"},
		{"Mean TPOT (ms)", "10.00", "6.00", "-40.0"},
		{"Median TPOT (ms)", "10.00", "6.00", "-40.0"},
		{"P99 TPOT (ms)", "10.00", "6.00", "-40.0"},
		{"Mean ITL (ms)", "10.00", "12.00", "20.0"},
		{"Draft acceptance rate (%)", "-", "75.00", "-"},
		{"Tokens per model step", "1.00", "2.20", "120.0"},
	} {
		found := false
		for _, l := range strings.Split(got, "\n") {
			f := strings.Split(l, "|")
			if len(f) < 6 {
				continue
			}
			cells := []string{strings.TrimSpace(f[1]), strings.TrimSpace(f[2]), strings.TrimSpace(f[3]), strings.TrimSpace(f[4])}
			if cells[0] == want[0] {
				found = true
				if cells[1] != want[1] || cells[2] != want[2] || cells[3] != want[3] {
					t.Errorf("row %q: %v, want %v", want[0], cells, want)
				}
			}
		}
		if !found {
			t.Errorf("no row %q", want[0])
		}
	}
	if !strings.Contains(got, "|:---") || !strings.Contains(got, "significant") {
		t.Errorf("want a markdown table with left-aligned metric names and a noise verdict (TPOT differs in every request)")
	}
	// An external server's memory from its metadata, and none at all.
	a.Engine, b.Engine = nil, nil
	a.Spec.Metadata = map[string]string{"memory_gib": "20.57"}
	out.Reset()
	if err := ServeAB(&out, "A", "B", a, b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), " 20.57 |") || strings.Contains(out.String(), "Draft acceptance") {
		t.Errorf("external runs:\n%s", out.String())
	}
}

// TestServeABJSON: the table of two saved results (vLLM's JSON, --save-detailed, the
// memory in --metadata memory_gib) has the rows, values and noise column of the table
// of the runs themselves.
func TestServeABJSON(t *testing.T) {
	const gib = 1 << 30
	a := abResult(6, 10*time.Millisecond, 1, &serving.EngineStats{WeightBytes: gib, KVBytes: gib / 2, SeqSteps: 66, SeqTokens: 66})
	b := abResult(6, 12*time.Millisecond, 2, &serving.EngineStats{WeightBytes: gib, KVBytes: gib / 2, DraftWeightBytes: gib / 8, DraftKVBytes: gib / 8,
		DraftedTokens: 100, AcceptedTokens: 75, SeqSteps: 30, SeqTokens: 66})
	cfg := metrics.ServingConfig{Percentiles: []float64{99}}
	saved := func(r *serving.Result, mem string) map[string]any {
		r.Summary = metrics.Summary(r.Records, r.Duration, cfg)
		var buf bytes.Buffer
		md := map[string]string{}
		if mem != "" {
			md["memory_gib"] = mem
		}
		if err := VLLMJSON(&buf, r, VLLMJSONOptions{Detailed: true, Metadata: md}); err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	ja, jb := saved(a, "1.5"), saved(b, "") // B's memory from its engine figures
	var want, got bytes.Buffer
	if err := ServeAB(&want, "A", "B", a, b); err != nil {
		t.Fatal(err)
	}
	if err := ServeABJSON(&got, "A", "B", ja, jb); err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() {
		t.Errorf("from saved results:\n%s\nfrom the runs:\n%s", got.String(), want.String())
	}
}

package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"regexp"
	"strings"
	"testing"
	"time"

	"llmbench/workloads"
	"llmbench/workloads/metrics"
	"llmbench/workloads/result"
	"llmbench/workloads/serving"
)

// nonStreamingResult is a --non-streaming run: two whole answers of 300 and 400 ms
// with 10 tokens each, one failure, goodput on e2el at 350 ms.
func nonStreamingResult() *serving.Result {
	ms := time.Millisecond
	recs := []metrics.Record{
		{PromptLen: 10, Start: 0, Latency: 300 * ms, OutputTokens: 10, NonStreaming: true, Success: true},
		{PromptLen: 10, Start: 500 * ms, Latency: 400 * ms, OutputTokens: 10, NonStreaming: true, Success: true},
		{PromptLen: 10, Start: 600 * ms, NonStreaming: true, Error: "HTTP 500: overloaded"},
	}
	res := &serving.Result{
		Spec: workloads.ServeSpec{Backend: "openai", Model: "m", RequestRate: 10, Burstiness: 1, MaxConcurrency: 4, NonStreaming: true,
			PercentileMetrics: []string{"ttft", "tpot", "itl", "e2el"}, MetricPercentiles: []float64{50, 99},
			Goodput: map[string]float64{"e2el": 350}, Dataset: workloads.DatasetSpec{Name: "random", NumPrompts: 3}},
		ModelID: "org/m", Duration: 2 * time.Second, Records: recs,
	}
	res.Summary = serving.Summarize(res)
	return res
}

// streamedRow matches a text row of a streamed-only figure: "Mean TTFT (ms): …",
// "P99 ITL (ms): …", "Mean TTFT content (ms)".
var streamedRow = regexp.MustCompile(`(?m)^(Mean|Median|P[0-9.]+) (TTFT|TPOT|ITL)[^:]*:\s*(\S+)`)

// TestNonStreamingExports: every output of a --non-streaming run says TTFT, TPOT and
// ITL were not measured (n/a rows, JSON null, empty CSV cells, no charts) and never
// prints them as 0, while E2EL, tokens and e2el goodput are there.
func TestNonStreamingExports(t *testing.T) {
	one := nonStreamingResult()
	if !one.Summary.NonStreaming || one.Summary.E2EL.Mean != 350 || one.Summary.TotalOutput != 20 {
		t.Fatalf("summary: non-streaming %v, E2EL mean %v, tokens %d", one.Summary.NonStreaming, one.Summary.E2EL.Mean, one.Summary.TotalOutput)
	}
	doc := result.Document{Title: "ns", Serving: []*serving.Result{one, nonStreamingResult()}}
	doc.Serving[1].Spec.MaxConcurrency = 8
	single := result.Document{Title: "ns", Serving: []*serving.Result{one}}

	text := func(t *testing.T, out string) {
		t.Helper()
		rows := streamedRow.FindAllStringSubmatch(out, -1)
		if len(rows) == 0 {
			t.Errorf("no TTFT/TPOT/ITL rows:\n%s", out)
		}
		for _, r := range rows {
			if r[3] != "n/a" {
				t.Errorf("row %q: want n/a", r[0])
			}
		}
		if !strings.Contains(out, metrics.NotMeasuredNote) {
			t.Errorf("no line saying why:\n%s", out)
		}
		if !strings.Contains(out, "Mean E2EL (ms):                          350.00") {
			t.Errorf("E2EL row missing:\n%s", out)
		}
		if !strings.Contains(out, "Request goodput (req/s):                 0.50 ") {
			t.Errorf("e2el goodput (1 of 2 under 350 ms, over 2 s) missing:\n%s", out)
		}
	}
	jsonPoint := func(t *testing.T, m map[string]any) {
		t.Helper()
		for _, k := range []string{"mean_ttft_ms", "median_tpot_ms", "std_itl_ms", "p99_ttft_ms", "p50_itl_ms", "mean_ttft_content_ms", "p99_itl_per_token_ms", "mean_ttft_warm_ms"} {
			if v, ok := m[k]; !ok || v != nil {
				t.Errorf("%s = %v (present %v): want null", k, v, ok)
			}
		}
		if m["mean_e2el_ms"] != 350.0 || m["non_streaming"] != true || m["request_goodput"] != 0.5 || m["total_output_tokens"] != 20.0 {
			t.Errorf("e2el %v non_streaming %v goodput %v tokens %v", m["mean_e2el_ms"], m["non_streaming"], m["request_goodput"], m["total_output_tokens"])
		}
		if ttfts, _ := m["ttfts"].([]any); len(ttfts) != 3 || ttfts[0] != nil {
			t.Errorf("ttfts %v: want nulls", m["ttfts"])
		}
		if defs, _ := m["metric_definitions"].(map[string]any); defs["non_streaming"] == nil {
			t.Error("metric definitions say nothing of non-streaming")
		}
	}

	for _, tc := range []struct {
		name  string
		check func(t *testing.T)
	}{
		{"vllm block", func(t *testing.T) {
			var b bytes.Buffer
			VLLMBlock(&b, one)
			text(t, b.String())
		}},
		{"default metrics", func(t *testing.T) {
			r := nonStreamingResult()
			r.Spec.PercentileMetrics = nil // vLLM's default ttft,tpot,itl gets e2el
			var b bytes.Buffer
			VLLMBlock(&b, r)
			text(t, b.String())
			r.Spec.PercentileMetrics = []string{"ttft"} // a list of the user's own is kept
			if got := PercentileMetrics(r); len(got) != 1 {
				t.Errorf("percentile metrics %v", got)
			}
		}},
		{"vllm extras", func(t *testing.T) {
			var b bytes.Buffer
			VLLMExtras(&b, one)
			if strings.Contains(b.String(), "TTFT content (ms)") || !strings.Contains(b.String(), "n/a") {
				t.Errorf("extras:\n%s", b.String())
			}
		}},
		{"sweep table", func(t *testing.T) {
			var b bytes.Buffer
			VLLMSweepTable(&b, doc.Serving)
			lines := strings.Split(strings.TrimSpace(b.String()), "\n")
			for _, l := range lines[2 : len(lines)-1] {
				if f := strings.Fields(l); len(f) < 10 || f[6] != "n/a" || f[9] != "n/a" {
					t.Errorf("sweep row %q: want n/a latencies", l)
				}
			}
		}},
		{"vllm json", func(t *testing.T) {
			var b bytes.Buffer
			if err := VLLMJSON(&b, one, VLLMJSONOptions{Detailed: true}); err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			if err := json.Unmarshal(b.Bytes(), &m); err != nil {
				t.Fatal(err)
			}
			jsonPoint(t, m)
		}},
		{"document json", func(t *testing.T) {
			var b bytes.Buffer
			if err := DocumentJSON(&b, doc); err != nil {
				t.Fatal(err)
			}
			var m struct{ Serving []map[string]any }
			if err := json.Unmarshal(b.Bytes(), &m); err != nil || len(m.Serving) != 2 {
				t.Fatalf("%v: %d points", err, len(m.Serving))
			}
			jsonPoint(t, m.Serving[0])
		}},
		{"markdown", func(t *testing.T) {
			var b bytes.Buffer
			DocumentMarkdown(&b, single)
			text(t, b.String())
		}},
		{"csv", func(t *testing.T) {
			var b bytes.Buffer
			DocumentCSV(&b, doc)
			rows, err := csv.NewReader(&b).ReadAll()
			if err != nil || len(rows) != 3 {
				t.Fatalf("%v: %d rows", err, len(rows))
			}
			col := map[string]int{}
			for i, n := range rows[0] {
				col[n] = i
			}
			for _, k := range []string{"mean_ttft_ms", "median_tpot_ms", "std_itl_ms", "p99_ttft_ms", "p50_itl_ms"} {
				if i, ok := col[k]; !ok || rows[1][i] != "" {
					t.Errorf("%s = %q (column %v): want empty", k, rows[1][col[k]], ok)
				}
			}
			if rows[1][col["mean_e2el_ms"]] != "350.000000" {
				t.Errorf("mean_e2el_ms %q", rows[1][col["mean_e2el_ms"]])
			}
		}},
		{"html", func(t *testing.T) {
			page := renderHTML(t, doc)
			charts := strings.Join(htmlCharts(t, page), " ")
			for _, c := range []string{"hist-ttft", "hist-tpot", "hist-itl", "curve-ttft", "curve-tpot"} {
				if strings.Contains(charts, c) {
					t.Errorf("chart %s of an unmeasured figure (%s)", c, charts)
				}
			}
			if !strings.Contains(charts, "hist-e2el") || !strings.Contains(page, "n/a") {
				t.Errorf("charts %s; n/a in page %v", charts, strings.Contains(page, "n/a"))
			}
		}},
		{"compare", func(t *testing.T) {
			c, err := CompareDocs([]result.Document{{Title: "streamed", Serving: []*serving.Result{sampleResult()}}, single})
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			for _, r := range c.Rows {
				seen[r.Metric] = true
				switch r.Metric {
				case "Mean TTFT (ms)", "Mean TPOT (ms)", "Mean ITL (ms)", "P99 TTFT (ms)":
					if !math.IsNaN(r.Values[1]) || math.IsNaN(r.Values[0]) {
						t.Errorf("%s: %v, want the streamed run's figure and NaN (not measured)", r.Metric, r.Values)
					}
				case "Mean E2EL (ms)":
					if r.Values[1] != 350 {
						t.Errorf("%s: %v", r.Metric, r.Values)
					}
				}
			}
			if !seen["Mean TTFT (ms)"] || !seen["Mean E2EL (ms)"] {
				t.Errorf("rows %v", seen)
			}
		}},
		{"serve ab", func(t *testing.T) {
			var b bytes.Buffer
			if err := ServeAB(&b, "streamed", "whole", sampleResult(), one); err != nil {
				t.Fatal(err)
			}
			for _, l := range strings.Split(b.String(), "\n") {
				if !regexp.MustCompile(`^\| (Mean|Median|P99) (TTFT|TPOT|ITL) `).MatchString(l) {
					continue
				}
				if cells := strings.Split(l, "|"); len(cells) < 4 || strings.TrimSpace(cells[3]) != "-" || strings.TrimSpace(cells[2]) == "-" {
					t.Errorf("row %q: want the streamed figure and - for the non-streaming run", l)
				}
			}
			if !strings.Contains(b.String(), "Mean TTFT (ms)") {
				t.Errorf("no TTFT rows:\n%s", b.String())
			}
		}},
		{"timeline", func(t *testing.T) {
			var b bytes.Buffer
			if err := VLLMTimelineHTML(&b, one, [2]float64{25, 50}); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(b.String(), "whole answer") {
				t.Error("timeline does not show the whole answers")
			}
		}},
	} {
		t.Run(tc.name, tc.check)
	}
}

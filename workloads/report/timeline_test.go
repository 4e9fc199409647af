package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"llmbench/workloads/metrics"
	"llmbench/workloads/serving"
)

func TestVLLMTimelineHTML(t *testing.T) {
	ms := time.Millisecond
	res := &serving.Result{ModelID: `<script>alert(1)</script>`, Records: []metrics.Record{
		// Index 1 sent later, listed second although first in the slice.
		{Index: 1, Start: 100 * ms, TTFT: 50 * ms, Latency: 150 * ms, ITL: []time.Duration{10 * ms, 10 * ms, 30 * ms, 80 * ms}, Success: true, PromptLen: 5, OutputTokens: 5},
		{Index: 0, Start: 0, TTFT: 20 * ms, Latency: 60 * ms, ITL: []time.Duration{40 * ms}, Success: true},
		{Index: 2, Start: 120 * ms, Latency: 10 * ms, Error: "HTTP 500: boom"},
	}}
	var b bytes.Buffer
	if err := VLLMTimelineHTML(&b, res, DefaultTimelineITLThresholdsMs); err != nil {
		t.Fatal(err)
	}
	h := b.String()
	if strings.Contains(h, "<script>alert") || strings.Contains(h, "ZgotmplZ") {
		t.Fatalf("unescaped text or rejected value:\n%s", h)
	}
	if n := strings.Count(h, `<g class="req`); n != 3 {
		t.Errorf("%d rows; want 3", n)
	}
	// Row order follows the dataset index.
	if i0, i1 := strings.Index(h, "Req 0: sent"), strings.Index(h, "Req 1: sent"); i0 < 0 || i1 < i0 {
		t.Errorf("rows out of order")
	}
	// Req 1: TTFT, then two green gaps merged into one span, one orange, one red.
	row := h[strings.Index(h, "Req 1: sent"):strings.Index(h, "Req 2: sent")]
	for color, want := range map[string]int{tlTTFT: 1, tlFast: 1, tlMid: 1, tlSlow: 1} {
		if got := strings.Count(row, `fill="`+color+`"`); got != want {
			t.Errorf("Req 1: %d spans of %s; want %d\n%s", got, color, want, row)
		}
	}
	// Req 0: a 40 ms gap is orange (25 ≤ 40 < 50).
	row0 := h[strings.Index(h, "Req 0: sent"):strings.Index(h, "Req 1: sent")]
	if strings.Count(row0, `fill="`+tlMid+`"`) != 1 || strings.Contains(row0, tlFast) {
		t.Errorf("Req 0:\n%s", row0)
	}
	if !strings.Contains(h, `class="req failed"`) || !strings.Contains(h, `fill="`+tlFailed+`"`) || !strings.Contains(h, "HTTP 500: boom") {
		t.Error("the failed request is not drawn grey with its error")
	}
	if !strings.Contains(h, "1 failed") || !strings.Contains(h, "ITL ≥ 50 ms") || !strings.Contains(h, "background:#636EFA") {
		t.Errorf("summary or legend missing")
	}
	// Other thresholds recolour: with 5,10 ms every gap of Req 1 is red.
	b.Reset()
	VLLMTimelineHTML(&b, res, [2]float64{5, 10})
	h = b.String()
	row = h[strings.Index(h, "Req 1: sent"):strings.Index(h, "Req 2: sent")]
	if strings.Count(row, `fill="`+tlSlow+`"`) != 1 || strings.Contains(row, tlFast) {
		t.Errorf("thresholds 5,10:\n%s", row)
	}
	if err := VLLMTimelineHTML(&b, &serving.Result{}, DefaultTimelineITLThresholdsMs); err == nil {
		t.Error("an empty result made a timeline")
	}
}

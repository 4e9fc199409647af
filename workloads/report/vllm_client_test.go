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

// TestVLLMClientFigures: the console additions and the JSON state the temperature
// sent, the requests counted by re-tokenizing, the connection figures and the
// request accounting (completed + failed + interrupted = requests).
func TestVLLMClientFigures(t *testing.T) {
	res := sampleResult()
	res.Records[0].Retokenized = true
	res.Records[1].NewConn, res.Records[1].Connect = true, 3*time.Millisecond
	res.Records[3].Fail(metrics.ReasonTimeout, "timeout: no complete response within 1s")
	res.Requests, res.Interrupted, res.WarmConnections = 5, 1, 2
	res.Summary = serving.Summarize(res)
	var out bytes.Buffer
	VLLMFailures(&out, res)
	VLLMExtras(&out, res)
	flat := strings.Join(strings.Fields(out.String()), " ")
	for _, want := range []string{"Failures by reason: timeout 1", "Sampling temperature: 0.00 (default, greedy)",
		"Output tokens re-tokenized (requests): 1/3", "Warm connections (before the clock): 2", "New connections (during the run): 1",
		"P99.9 connect (ms): 3.00", "note: the output tokens of 1 requests were counted by re-tokenizing"} {
		if !strings.Contains(flat, want) {
			t.Errorf("console lacks %q:\n%s", want, out.String())
		}
	}
	var b bytes.Buffer
	if err := VLLMJSON(&b, res, VLLMJSONOptions{Detailed: true}); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"temperature": 0.0, "output_tokens_retokenized": 1.0, "warm_connections": 2.0, "new_connections": 1.0,
		"mean_connect_ms": 3.0, "requests": 5.0, "interrupted_requests": 1.0, "completed": 3.0, "failed": 1.0}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("JSON %s = %v, want %v", k, m[k], v)
		}
	}
	if r, _ := m["failure_reason_per_request"].([]any); len(r) != 4 || r[3] != "timeout" || r[0] != "" {
		t.Errorf("failure_reason_per_request %v", m["failure_reason_per_request"])
	}
	tp := 0.5
	res.Spec.Temperature = &tp
	out.Reset()
	VLLMExtras(&out, res)
	if !strings.Contains(out.String(), "Sampling temperature:                    0.50") {
		t.Errorf("given temperature not stated:\n%s", out.String())
	}
}

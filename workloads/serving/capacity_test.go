package serving

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"llmbench/workloads"
)

// TestCapacity measures the load generator alone against a loopback server that
// streams instantly: SSE chunks/s and requests/s at full speed, and the client send
// lag at a 1000 req/s target. Under LLMBENCH_STRICT=1 (make bench) it runs at full
// size and asserts ≥ 100k chunks/s and ≥ 5k req/s; make test runs a small version.
func TestCapacity(t *testing.T) {
	n, chunks := 600, 64
	if strict() {
		n = 20000
	}
	hs := httptest.NewServer(&scripted{instant: true})
	defer hs.Close()
	c := httpClient("openai", hs.URL, 64, 30*time.Second)
	spec := workloads.ServeSpec{Backend: "openai", RequestRate: workloads.Inf, Burstiness: 1, MaxConcurrency: 64,
		NumWarmups: 64, Dataset: workloads.DatasetSpec{NumPrompts: n}}
	res, _ := runBench(t, context.Background(), spec, fixedDataset(n, chunks), c)
	s := res.Summary
	if s.Failed != 0 {
		t.Fatalf("failures: %v", s.Failures)
	}
	chunkRate := float64(s.Completed*chunks) / res.Duration.Seconds()
	t.Logf("capacity: %d requests × %d chunks in %v: %.0f SSE chunks/s, %.0f requests/s", n, chunks, res.Duration.Round(time.Millisecond), chunkRate, s.RequestThroughput)

	// Requests/s with short streams.
	n2 := 600
	if strict() {
		n2 = 20000
	}
	res2, _ := runBench(t, context.Background(), spec, fixedDataset(n2, 4), c)
	t.Logf("capacity: %d requests × 4 chunks: %.0f requests/s", n2, res2.Summary.RequestThroughput)

	// Send lag at a 1000 req/s target.
	n3 := 500
	if strict() {
		n3 = 5000
	}
	lagSpec := spec
	lagSpec.RequestRate, lagSpec.MaxConcurrency, lagSpec.NumWarmups = 1000, 0, 0
	res3, _ := runBench(t, context.Background(), lagSpec, fixedDataset(n3, 4), c)
	p50, _ := res3.Summary.SendLag.Percentile(50)
	p99, _ := res3.Summary.SendLag.Percentile(99)
	t.Logf("client send lag at 1000 req/s target: p50 %.3f ms, p99 %.3f ms (%d requests, %.0f req/s achieved)", p50, p99, n3, res3.Summary.RequestThroughput)
	if strict() {
		if chunkRate < 100e3 {
			t.Errorf("%.0f SSE chunks/s < 100k", chunkRate)
		}
		if res2.Summary.RequestThroughput < 5e3 {
			t.Errorf("%.0f requests/s < 5k", res2.Summary.RequestThroughput)
		}
	}
}

package metrics

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// vllmConcurrency is vLLM's calculate_metrics (vllm/benchmarks/serve.py) written out
// directly, in float seconds as Python has them: for each successful request, every
// integer second from int(start - min_start) to int(end - min_start) inclusive counts
// it as active; max_concurrent_requests is the largest bucket.
func vllmConcurrency(recs []Record) (int, []float64) {
	minStart, maxEnd, any := math.Inf(1), math.Inf(-1), false
	for _, r := range recs {
		if r.Success {
			any = true
			minStart = math.Min(minStart, r.Start.Seconds())
			maxEnd = math.Max(maxEnd, r.Start.Seconds()+r.Latency.Seconds())
		}
	}
	if !any {
		return 0, nil
	}
	n := int(math.Ceil(maxEnd-minStart)) + 1
	conc := make([]float64, n)
	for _, r := range recs {
		if !r.Success {
			continue
		}
		lo := int(r.Start.Seconds() - minStart)
		hi := int(r.Start.Seconds() + r.Latency.Seconds() - minStart)
		for s := lo; s < min(hi+1, n); s++ {
			conc[s]++
		}
	}
	return int(slices.Max(conc)), conc
}

// TestRegressMaxConcurrentAsVLLM: max_concurrent_requests is the maximum over 1-second
// buckets of the requests active in the bucket, as vLLM computes it (the base commit
// reported the instantaneous peak, a different figure under vLLM's name).
func TestRegressMaxConcurrentAsVLLM(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	cases := map[string][]Record{"sample": sampleRecords()}
	// Sequential requests inside one second: never two at once, three in the bucket.
	cases["sequential"] = []Record{
		{Start: 0, Latency: 200 * msT, Success: true},
		{Start: 300 * msT, Latency: 200 * msT, Success: true},
		{Start: 600 * msT, Latency: 400 * msT, Success: true}, // ends exactly at 1 s: counts in bucket 1 too
		{Start: 1500 * msT, Latency: 100 * msT, Success: true},
	}
	for k := range 5 {
		var recs []Record
		for i := range 300 {
			r := Record{Index: i, Start: time.Duration(rng.Int64N(int64(6 * time.Second))), Latency: time.Duration(rng.Int64N(int64(3 * time.Second)))}
			r.Success = rng.IntN(10) > 0
			r.TTFT = r.Latency / 2
			recs = append(recs, r)
		}
		cases["random"+string(rune('0'+k))] = recs
	}
	for name, recs := range cases {
		s := Summary(recs, 10*time.Second, ServingConfig{})
		want, buckets := vllmConcurrency(recs)
		if s.MaxConcurrentRequests != want {
			t.Errorf("%s: max_concurrent_requests %d, vLLM's algorithm %d", name, s.MaxConcurrentRequests, want)
		}
		if !slices.Equal(s.ConcurrentPerSecond, buckets) {
			t.Errorf("%s: concurrent buckets %v, vLLM's %v", name, s.ConcurrentPerSecond, buckets)
		}
	}
}

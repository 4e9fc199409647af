package metrics

import (
	"testing"
	"time"
)

// TestSummaryNonStreaming: whole answers give E2EL and tokens only: TTFT, TPOT, ITL,
// TTFT content, per-token ITL and warm TTFT stay empty (N 0) and unmeasured, the
// tokens land in the 1-s bucket where each answer arrived, and e2el goodput counts.
func TestSummaryNonStreaming(t *testing.T) {
	ms := time.Millisecond
	recs := []Record{
		{PromptLen: 5, Start: 0, Latency: 1500 * ms, OutputTokens: 30, NonStreaming: true, Success: true},
		{PromptLen: 5, Start: 100 * ms, Latency: 600 * ms, OutputTokens: 10, NonStreaming: true, Success: true},
		{PromptLen: 5, Start: 200 * ms, NonStreaming: true, Error: "HTTP 500"},
	}
	s := Summary(recs, 2*time.Second, ServingConfig{Percentiles: []float64{50}, Goodput: map[string]float64{"e2el": 1000}})
	if !s.NonStreaming {
		t.Fatal("summary not marked non-streaming")
	}
	for name, d := range map[string]Dist{"ttft": s.TTFT, "tpot": s.TPOT, "itl": s.ITL, "ttft_content": s.TTFTContent, "itl_per_token": s.ITLPerToken, "ttft_warm": s.TTFTWarm} {
		if d.N != 0 || s.Measured(name) {
			t.Errorf("%s: %d samples, measured %v", name, d.N, s.Measured(name))
		}
	}
	if !s.Measured("e2el") || s.E2EL.N != 2 || s.E2EL.Mean != 1050 {
		t.Errorf("E2EL %+v", s.E2EL)
	}
	if s.TotalOutput != 40 || s.Completed != 2 || s.Failed != 1 || s.OutputThroughput != 20 {
		t.Errorf("tokens %d completed %d failed %d throughput %v", s.TotalOutput, s.Completed, s.Failed, s.OutputThroughput)
	}
	// answers arrive at 0.7 s (10 tokens) and 1.5 s (30 tokens): one chunk each
	if len(s.TokensPerSecond) < 2 || s.TokensPerSecond[0] != 10 || s.TokensPerSecond[1] != 30 || s.PeakOutputTokensPerS != 30 || s.MaxOutputTokensPerS != 1 {
		t.Errorf("buckets %v, peak %v tokens %v chunks", s.TokensPerSecond, s.PeakOutputTokensPerS, s.MaxOutputTokensPerS)
	}
	if s.RequestGoodput != 0.5 { // one of two within 1000 ms, over 2 s
		t.Errorf("goodput %v", s.RequestGoodput)
	}
	// a streamed summary measures them all
	st := Summary([]Record{{Start: 0, TTFT: 10 * ms, Latency: 30 * ms, ITL: []time.Duration{20 * ms}, OutputTokens: 2, Success: true}}, time.Second, ServingConfig{})
	if st.NonStreaming || !st.Measured("ttft") || st.TTFT.N != 1 {
		t.Errorf("streamed summary: non-streaming %v, TTFT %+v", st.NonStreaming, st.TTFT)
	}
	// a non-streaming run whose requests all failed still says so
	if f := Summary(recs[2:], time.Second, ServingConfig{NonStreaming: true}); !f.NonStreaming || f.Measured("ttft") {
		t.Error("an all-failed non-streaming run lost its mark")
	}
}

// TestLiveNonStreaming: the live view counts whole answers into E2EL and tokens only
// and says TTFT, TPOT and ITL are not measured.
func TestLiveNonStreaming(t *testing.T) {
	l := NewLive(2)
	l.Add(&Record{Start: 0, Latency: 400 * time.Millisecond, OutputTokens: 8, NonStreaming: true, Success: true})
	s := l.Snapshot()
	if !s.NonStreaming || s.Done != 1 || s.OutputTokens != 8 || s.Dists["e2el"].Count != 1 {
		t.Fatalf("snapshot %+v", s)
	}
	for _, k := range []string{"ttft", "tpot", "itl"} {
		if s.Dists[k].Count != 0 {
			t.Errorf("%s counted %d", k, s.Dists[k].Count)
		}
	}
	if s.TTFTP50 != 0 || s.E2ELP50 < 399 {
		t.Errorf("TTFT p50 %v, E2EL p50 %v", s.TTFTP50, s.E2ELP50)
	}
}

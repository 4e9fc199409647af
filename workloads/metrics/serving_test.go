package metrics

import (
	"math"
	"testing"
	"time"
)

const msT = time.Millisecond

// sampleRecords are three successes and one failure with hand-checked figures.
func sampleRecords() []Record {
	return []Record{
		{PromptLen: 10, Start: 0, Arrival: 0, TTFT: 100 * msT, ITL: []time.Duration{10 * msT, 20 * msT}, Latency: 130 * msT, OutputTokens: 3, Success: true},
		{PromptLen: 10, Start: 500 * msT, Arrival: 500 * msT, TTFT: 200 * msT, ITL: []time.Duration{30 * msT}, Latency: 230 * msT, OutputTokens: 2, Success: true},
		{PromptLen: 10, Start: 1200 * msT, Arrival: 1200 * msT, TTFT: 50 * msT, Latency: 50 * msT, OutputTokens: 1, Success: true},
		{PromptLen: 10, Start: 1300 * msT, Arrival: 1300 * msT, Error: "HTTP 500: overloaded"},
	}
}

func closeTo(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestSummaryMatchesVLLM(t *testing.T) {
	s := Summary(sampleRecords(), 2*time.Second, ServingConfig{Percentiles: []float64{99}})
	p99 := func(d Dist) float64 { v, _ := d.Percentile(99); return v }
	checks := []struct {
		name      string
		got, want float64
	}{
		{"completed", float64(s.Completed), 3}, {"failed", float64(s.Failed), 1},
		{"input", float64(s.TotalInput), 30}, {"output", float64(s.TotalOutput), 6},
		{"req/s", s.RequestThroughput, 1.5}, {"out tok/s", s.OutputThroughput, 3}, {"total tok/s", s.TotalTokenThroughput, 18},
		{"ttft mean", s.TTFT.Mean, 350.0 / 3}, {"ttft median", s.TTFT.Median, 100}, {"ttft p99", p99(s.TTFT), 198},
		{"ttft std", s.TTFT.Std, math.Sqrt(3888.8888888888887)},
		{"tpot mean", s.TPOT.Mean, 22.5}, {"tpot p99", p99(s.TPOT), 29.85},
		{"itl mean", s.ITL.Mean, 20}, {"itl p99", p99(s.ITL), 29.8},
		{"e2el median", s.E2EL.Median, 130},
		{"peak chunks/s", s.MaxOutputTokensPerS, 5}, {"peak tokens/s", s.PeakOutputTokensPerS, 5},
		{"peak concurrency", float64(s.MaxConcurrentRequests), 2}, // vLLM's 1-s buckets: the first two share second 0
	}
	for _, c := range checks {
		if !closeTo(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if s.Failures["HTTP 500"] != 1 { // a record saved before Reason: kind from its message
		t.Errorf("failures %v", s.Failures)
	}
	recs := sampleRecords()
	recs[3].Fail(ReasonHTTP, "HTTP 500: overloaded")
	recs[3].Status = 500
	if s := Summary(recs, time.Second, ServingConfig{}); s.Failures["http 500"] != 1 || len(s.Failures) != 1 {
		t.Errorf("typed failures %v", s.Failures)
	}
}

func TestGoodput(t *testing.T) {
	for _, c := range []struct {
		slo  map[string]float64
		want float64
	}{
		{map[string]float64{"ttft": 150}, 1},
		{map[string]float64{"ttft": 150, "tpot": 20}, 1},
		{map[string]float64{"e2el": 100}, 0.5},
		{map[string]float64{"tpot": 10}, 0.5}, // only the single-token request (tpot 0)
	} {
		s := Summary(sampleRecords(), 2*time.Second, ServingConfig{Goodput: c.slo})
		if !s.GoodputSet || !closeTo(s.RequestGoodput, c.want) {
			t.Errorf("goodput %v = %v, want %v", c.slo, s.RequestGoodput, c.want)
		}
	}
}

func TestEmptyIsZeroAsVLLM(t *testing.T) {
	var r Record
	r.Fail(ReasonTimeout, "timeout: no complete response within 1s")
	s := Summary([]Record{r}, time.Second, ServingConfig{})
	if s.TTFT.Mean != 0 || s.Completed != 0 || s.Failed != 1 || s.Failures["timeout"] != 1 {
		t.Errorf("%+v", s)
	}
}

func TestMultiTokenChunks(t *testing.T) {
	r := Record{Start: 0, TTFT: 10 * msT, ITL: []time.Duration{20 * msT, 20 * msT}, ChunkTokens: []int32{2, 2}, Latency: 50 * msT, OutputTokens: 5, Success: true}
	s := Summary([]Record{r}, time.Second, ServingConfig{Percentiles: []float64{50}})
	if s.ITLPerToken.N != 4 || !closeTo(s.ITLPerToken.Mean, 10) || !closeTo(s.ITL.Mean, 20) {
		t.Errorf("per-token ITL %+v, ITL %+v", s.ITLPerToken, s.ITL)
	}
	if s.MaxOutputTokensPerS != 3 || s.PeakOutputTokensPerS != 5 {
		t.Errorf("peaks: chunks %v tokens %v, want 3 and 5", s.MaxOutputTokensPerS, s.PeakOutputTokensPerS)
	}
}

// TestRoleChunkCarriesNoTokens: a chat stream's role-only first chunk (TTFT at 5 ms,
// text from 60 ms) carries none of the tokens when the server gives no per-chunk
// counts: 8 tokens over the 4 text chunks are 2 each, so the per-token gaps are
// 55/2, 10/2, 10/2, 10/2 (spread over all 5 chunks they read 55/1.6, 10/1.6, …).
func TestRoleChunkCarriesNoTokens(t *testing.T) {
	r := Record{Start: 0, TTFT: 5 * msT, TTFTContent: 60 * msT,
		ITL: []time.Duration{55 * msT, 10 * msT, 10 * msT, 10 * msT}, Latency: 90 * msT, OutputTokens: 8, Success: true}
	s := Summary([]Record{r}, time.Second, ServingConfig{Percentiles: []float64{50}})
	if s.ITLPerToken.N != 4 || !closeTo(s.ITLPerToken.Mean, (27.5+15)/4) || !closeTo(s.ITLPerToken.Median, 5) {
		t.Errorf("per-token ITL %+v: want 27.5, 5, 5, 5", s.ITLPerToken)
	}
	if s.PeakOutputTokensPerS != 8 {
		t.Errorf("token peak %v, want 8", s.PeakOutputTokensPerS)
	}
}

func TestCompareVerdict(t *testing.T) {
	a := []float64{10, 11, 9, 10, 10.5, 9.5}
	b := []float64{20, 21, 19, 20, 20.5, 19.5}
	r := Compare("mean_ttft_ms", Mean(a), Mean(b), a, b)
	if !closeTo(r.DiffPct, 100) || r.Verdict() != "significant" {
		t.Errorf("%+v %q", r, r.Verdict())
	}
	if r := Compare("x", 1, 1.01, a, a); r.Verdict() != "within noise" {
		t.Errorf("same samples: %q", r.Verdict())
	}
	if r := Compare("x", 1, 2, nil, nil); r.Verdict() != "" {
		t.Errorf("no samples: %q", r.Verdict())
	}
}

func TestLive(t *testing.T) {
	l := NewLive(3)
	for _, r := range sampleRecords() {
		l.Add(&r)
	}
	s := l.Snapshot()
	if s.Done != 3 || s.Failed != 1 || s.TTFTP50 < 99 || s.TTFTP50 > 101 {
		t.Errorf("%+v", s)
	}
}

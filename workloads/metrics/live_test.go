package metrics

import (
	"testing"
	"time"
)

func TestLiveDists(t *testing.T) {
	l := NewLive(2)
	l.Add(&Record{Success: true, TTFT: 100 * time.Millisecond, Latency: 1100 * time.Millisecond, OutputTokens: 11,
		ITL: []time.Duration{90 * time.Millisecond, 110 * time.Millisecond}})
	l.Add(&Record{Success: true, TTFT: 50 * time.Millisecond, Latency: 50 * time.Millisecond, OutputTokens: 1})
	d := l.Snapshot().Dists
	if tp := d["tpot"]; tp.Count != 1 || tp.P50 < 99.9 || tp.P50 > 100.1 {
		t.Errorf("tpot %+v: want one sample of 100 ms (single-token requests have none)", tp)
	}
	var n int64
	for _, b := range d["itl"].Buckets {
		n += b.Count
		if b.FromMs > b.ToMs {
			t.Errorf("bucket %+v", b)
		}
	}
	if n != 2 || d["ttft"].Count != 2 || d["e2el"].Count != 2 {
		t.Errorf("counts: itl buckets %d, ttft %d, e2el %d", n, d["ttft"].Count, d["e2el"].Count)
	}
}

// TestLiveStreamTokens: tokens count as they arrive (a request still streaming moves
// OutputTokens and the peak), and once every request ended the live peak is
// Summary's peak (tokens per 1-s bucket, not chunks), whatever the stream reported.
func TestLiveStreamTokens(t *testing.T) {
	l := NewLive(2)
	l.Begin(0)
	a := &Record{Start: 100 * time.Millisecond}
	a.Stream = l.Stream()
	a.Stream.Tokens(300*time.Millisecond, 1)
	if s := l.Snapshot(); s.OutputTokens != 1 || s.PeakOutputTokensPerS != 1 || s.Done != 0 {
		t.Fatalf("after one streamed token: %+v", s)
	}
	// a: 3 chunks, the last carrying 4 tokens (server counts), 6 tokens in all
	a.Stream.Tokens(600*time.Millisecond, 1)
	a.Stream.Tokens(1200*time.Millisecond, 1) // the client saw a chunk, counted 1
	a.TTFT, a.ITL, a.ChunkTokens = 200*time.Millisecond, []time.Duration{300 * time.Millisecond, 600 * time.Millisecond}, []int32{1, 4}
	a.Latency, a.OutputTokens, a.Success = 1100*time.Millisecond, 6, true
	b := &Record{Start: 150 * time.Millisecond, Reason: ReasonHTTP}
	b.Stream = l.Stream()
	b.Stream.Tokens(400*time.Millisecond, 3) // streamed, then failed: not counted
	if s := l.Snapshot(); s.OutputTokens != 6 || s.PeakOutputTokensPerS != 5 {
		t.Fatalf("streaming: %+v", s)
	}
	l.Add(a)
	l.Add(b)
	s := l.Snapshot()
	sum := Summary([]Record{*a, *b}, 2*time.Second, ServingConfig{})
	if s.OutputTokens != 6 || s.PeakOutputTokensPerS != sum.PeakOutputTokensPerS || s.PeakOutputTokensPerS != 4 {
		t.Fatalf("ended: live %+v, Summary peak %v", s, sum.PeakOutputTokensPerS)
	}
}

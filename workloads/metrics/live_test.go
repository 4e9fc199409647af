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

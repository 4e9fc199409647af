package metrics

import (
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Live accumulates serving records into HDR histograms for live views (the progress
// line, the future TUI). Final results never come from it: they come from Summary over
// the raw records. Live is safe for concurrent use.
type Live struct {
	mu              sync.Mutex
	ttft, itl, e2el *hdrhistogram.Histogram
	done, failed    int
	outputTokens    int64
	total           int
}

// NewLive returns a Live view for a run of total requests. Latencies are held in
// microseconds from 1 µs to 10 minutes with 3 significant digits.
func NewLive(total int) *Live {
	h := func() *hdrhistogram.Histogram { return hdrhistogram.New(1, int64(10*time.Minute/time.Microsecond), 3) }
	return &Live{ttft: h(), itl: h(), e2el: h(), total: total}
}

// Add records one finished request.
func (l *Live) Add(r *Record) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !r.Success {
		l.failed++
		return
	}
	l.done++
	l.outputTokens += int64(r.OutputTokens)
	us := func(d time.Duration) int64 { return max(1, d.Microseconds()) }
	_ = l.ttft.RecordValue(us(r.TTFT))
	_ = l.e2el.RecordValue(us(r.Latency))
	for _, g := range r.ITL {
		_ = l.itl.RecordValue(us(g))
	}
}

// LiveSnapshot is a point-in-time live view; latencies in milliseconds.
type LiveSnapshot struct {
	Done, Failed, Total int
	OutputTokens        int64
	TTFTP50, TTFTP99    float64
	ITLP50, ITLP99      float64
	E2ELP50, E2ELP99    float64
}

// Snapshot returns the current live view.
func (l *Live) Snapshot() LiveSnapshot {
	l.mu.Lock()
	defer l.mu.Unlock()
	q := func(h *hdrhistogram.Histogram, p float64) float64 { return float64(h.ValueAtQuantile(p)) / 1e3 }
	return LiveSnapshot{
		Done: l.done, Failed: l.failed, Total: l.total, OutputTokens: l.outputTokens,
		TTFTP50: q(l.ttft, 50), TTFTP99: q(l.ttft, 99),
		ITLP50: q(l.itl, 50), ITLP99: q(l.itl, 99),
		E2ELP50: q(l.e2el, 50), E2ELP99: q(l.e2el, 99),
	}
}

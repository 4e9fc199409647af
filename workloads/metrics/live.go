package metrics

import (
	"sort"
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
	tpot            *hdrhistogram.Histogram
	coarse          map[string]*liveCoarse // 1-2-5 buckets by metric, for histogram views
	done, failed    int
	outputTokens    int64
	total           int
}

// NewLive returns a Live view for a run of total requests. Latencies are held in
// microseconds from 1 µs to 10 minutes with 3 significant digits.
func NewLive(total int) *Live {
	h := func() *hdrhistogram.Histogram { return hdrhistogram.New(1, int64(10*time.Minute/time.Microsecond), 3) }
	c := map[string]*liveCoarse{}
	for _, n := range liveMetrics {
		c[n] = &liveCoarse{counts: make([]int64, len(liveEdgesUs)-1)}
	}
	return &Live{ttft: h(), tpot: h(), itl: h(), e2el: h(), coarse: c, total: total}
}

// Add records one finished request; one interrupted by the end of the run is
// neither done nor failed.
func (l *Live) Add(r *Record) {
	if r.Interrupted() {
		return
	}
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
	l.coarse["ttft"].add(us(r.TTFT))
	_ = l.e2el.RecordValue(us(r.Latency))
	l.coarse["e2el"].add(us(r.Latency))
	if r.OutputTokens > 1 {
		v := us((r.Latency - r.TTFT) / time.Duration(r.OutputTokens-1))
		_ = l.tpot.RecordValue(v)
		l.coarse["tpot"].add(v)
	}
	for _, g := range r.ITL {
		_ = l.itl.RecordValue(us(g))
		l.coarse["itl"].add(us(g))
	}
}

// LiveSnapshot is a point-in-time live view; latencies in milliseconds.
type LiveSnapshot struct {
	Done, Failed, Total int
	OutputTokens        int64
	TTFTP50, TTFTP99    float64
	ITLP50, ITLP99      float64
	E2ELP50, E2ELP99    float64
	// Dists holds the live distributions by metric name (ttft, tpot, itl, e2el) for
	// histogram views.
	Dists map[string]LiveDist
}

// LiveDist is one metric's live distribution in milliseconds: its mean, percentiles
// (from the HDR histogram) and the non-empty buckets of 1-2-5 edges.
type LiveDist struct {
	Count         int64
	Mean          float64
	P50, P90, P99 float64
	Buckets       []LiveBucket
}

// LiveBucket counts the values in [FromMs, ToMs].
type LiveBucket struct {
	FromMs, ToMs float64
	Count        int64
}

// liveMetrics names the distributions a Live keeps.
var liveMetrics = []string{"ttft", "tpot", "itl", "e2el"}

// liveEdgesUs are the 1-2-5 bucket edges of the coarse histograms, 1 µs to 10 min.
var liveEdgesUs = func() []int64 {
	var e []int64
	for d := int64(1); d <= int64(10*time.Minute/time.Microsecond); d *= 10 {
		e = append(e, d, 2*d, 5*d)
	}
	return e
}()

// liveCoarse counts values in the buckets of liveEdgesUs and sums them (for the
// mean): constant work per value, and a snapshot copies a few dozen counters.
type liveCoarse struct {
	counts []int64
	n, sum int64
}

func (c *liveCoarse) add(us int64) {
	i := sort.Search(len(liveEdgesUs), func(i int) bool { return liveEdgesUs[i] > us }) - 1
	c.counts[min(max(i, 0), len(c.counts)-1)]++
	c.n++
	c.sum += us
}

func (c *liveCoarse) dist(h *hdrhistogram.Histogram) LiveDist {
	q := func(p float64) float64 { return float64(h.ValueAtQuantile(p)) / 1e3 }
	d := LiveDist{Count: c.n, P50: q(50), P90: q(90), P99: q(99)}
	if c.n > 0 {
		d.Mean = float64(c.sum) / float64(c.n) / 1e3
	}
	for i, n := range c.counts {
		if n > 0 {
			d.Buckets = append(d.Buckets, LiveBucket{FromMs: float64(liveEdgesUs[i]) / 1e3, ToMs: float64(liveEdgesUs[i+1]) / 1e3, Count: n})
		}
	}
	return d
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
		Dists: map[string]LiveDist{"ttft": l.coarse["ttft"].dist(l.ttft), "tpot": l.coarse["tpot"].dist(l.tpot),
			"itl": l.coarse["itl"].dist(l.itl), "e2el": l.coarse["e2el"].dist(l.e2el)},
	}
}

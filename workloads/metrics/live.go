package metrics

import (
	"math"
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
	outputTokens    int64 // of the requests that ended
	total           int
	// Output tokens as they stream: streamed counts the tokens of requests still
	// going (reported by their Stream), perSec the tokens of every request in 1-s
	// buckets from origin (the start of sending, Begin).
	streamed float64
	origin   time.Duration
	perSec   []float64
	// nonStreaming: a non-streaming request (no TTFT, TPOT or ITL) has ended.
	nonStreaming bool
}

// Stream counts one request's output tokens into its Live as they arrive, so a live
// view's output tok/s moves while the request streams, not only when it ends. A nil
// *Stream counts nothing. Live.Add replaces what the stream counted by the record's
// exact tokens (the weights Summary uses), so the live peak and Results' peak are the
// same figure: tokens, not chunks, per 1-s bucket.
type Stream struct {
	live    *Live
	n       float64
	buckets map[int]float64
}

// Begin sets the instant (run clock) the 1-s output-token buckets count from: the
// start of sending, as Summary counts from the first send.
func (l *Live) Begin(at time.Duration) {
	l.mu.Lock()
	l.origin = at
	l.mu.Unlock()
}

// Stream returns a counter for one request's tokens.
func (l *Live) Stream() *Stream { return &Stream{live: l, buckets: map[int]float64{}} }

// Tokens counts n output tokens that arrived at at (run clock).
func (s *Stream) Tokens(at time.Duration, n int) {
	if s == nil || n <= 0 {
		return
	}
	l := s.live
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.bucket(at)
	l.addBucket(b, float64(n))
	s.buckets[b] += float64(n)
	s.n += float64(n)
	l.streamed += float64(n)
}

// bucket returns the 1-s bucket of instant at (before origin: bucket 0).
func (l *Live) bucket(at time.Duration) int { return max(0, int((at-l.origin)/time.Second)) }

func (l *Live) addBucket(b int, v float64) {
	for len(l.perSec) <= b {
		l.perSec = append(l.perSec, 0)
	}
	l.perSec[b] += v
}

// settle takes back what r's stream counted (and detaches it) and, for a success,
// counts r's tokens at its chunks' times with Summary's weights. Called with mu held.
func (l *Live) settle(r *Record) {
	if s := r.Stream; s != nil && s.live == l {
		for b, v := range s.buckets {
			l.perSec[b] -= v
		}
		l.streamed -= s.n
		s.buckets, s.n = map[int]float64{}, 0
		r.Stream = nil // counted: the record keeps no hold on the live view
	}
	if !r.Success {
		return
	}
	w := chunkWeights(r)
	t := r.Start + r.TTFT
	if r.NonStreaming { // the whole answer at once, at the end
		t = r.Start + r.Latency
	}
	for j := range w {
		if j > 0 {
			t += r.ITL[j-1]
		}
		l.addBucket(l.bucket(t), w[j])
	}
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
	l.mu.Lock()
	defer l.mu.Unlock()
	l.settle(r)
	if r.Interrupted() {
		return
	}
	if !r.Success {
		l.failed++
		return
	}
	l.done++
	l.outputTokens += int64(r.OutputTokens)
	us := func(d time.Duration) int64 { return max(1, d.Microseconds()) }
	_ = l.e2el.RecordValue(us(r.Latency))
	l.coarse["e2el"].add(us(r.Latency))
	if r.NonStreaming { // TTFT, TPOT and ITL not measured
		l.nonStreaming = true
		return
	}
	_ = l.ttft.RecordValue(us(r.TTFT))
	l.coarse["ttft"].add(us(r.TTFT))
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
	// OutputTokens counts the tokens of the requests that ended and those streamed
	// so far by the requests still going.
	OutputTokens int64
	// PeakOutputTokensPerS is the largest 1-s bucket of output tokens from the start
	// of sending: Summary's PeakOutputTokensPerS (tokens, not chunks) so far.
	PeakOutputTokensPerS float64
	TTFTP50, TTFTP99     float64
	ITLP50, ITLP99       float64
	E2ELP50, E2ELP99     float64
	// NonStreaming is set once a non-streaming request (--non-streaming) has ended:
	// TTFT, TPOT and ITL are not measured (their figures stay 0 and views print n/a).
	NonStreaming bool
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
	peak := 0.0
	for _, v := range l.perSec {
		peak = max(peak, v)
	}
	return LiveSnapshot{
		Done: l.done, Failed: l.failed, Total: l.total, OutputTokens: l.outputTokens + int64(math.Round(l.streamed)),
		PeakOutputTokensPerS: peak, NonStreaming: l.nonStreaming,
		TTFTP50: q(l.ttft, 50), TTFTP99: q(l.ttft, 99),
		ITLP50: q(l.itl, 50), ITLP99: q(l.itl, 99),
		E2ELP50: q(l.e2el, 50), E2ELP99: q(l.e2el, 99),
		Dists: map[string]LiveDist{"ttft": l.coarse["ttft"].dist(l.ttft), "tpot": l.coarse["tpot"].dist(l.tpot),
			"itl": l.coarse["itl"].dist(l.itl), "e2el": l.coarse["e2el"].dist(l.e2el)},
	}
}

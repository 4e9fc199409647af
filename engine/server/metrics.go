package server

import (
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// finishReasons label llmbench_requests_total: how requests ended.
var finishReasons = []string{"stop", "length", "abort", "error"}

// vllmFinishReasons label vllm:request_success_total, as vLLM's FinishReason does.
var vllmFinishReasons = []string{"stop", "length", "abort"}

// vLLM's histogram bucket boundaries (vllm/v1/metrics/loggers.py), in seconds.
var (
	vllmTTFTBuckets = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
		20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}
	vllmITLBuckets = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
		20.0, 40.0, 80.0}
	vllmRequestLatencyBuckets = []float64{0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0,
		60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0}
)

// rateWindow is the window of the tokens/s gauges, in seconds.
const rateWindow = 10

// counters are the server's /metrics figures. Those read at scrape time (gauges, the
// scheduler's counters, the token counts shared by our names and vLLM's) go through
// the collector; the distributions are client_golang histograms and summaries. Every
// series carries the label model_name.
type counters struct {
	reg           *prometheus.Registry
	reasons       map[string]*atomic.Int64 // llmbench_requests_total; filled by newCounters, read-only after
	success       *prometheus.CounterVec   // vllm:request_success_total
	rejected      atomic.Int64             // 429s
	promptTokens  atomic.Int64
	genTokens     atomic.Int64
	ttft, e2e     prometheus.Summary // llmbench_*: sum and count
	vTTFT, vITL   prometheus.Histogram
	vE2E, vQueue  prometheus.Histogram
	vPrefill      prometheus.Histogram
	vDecode       prometheus.Histogram
	mu            sync.Mutex
	genBuckets    [rateWindow + 1]bucket // generated tokens per second, a ring keyed by unix second
	promptBuckets [rateWindow + 1]bucket
}

// newCounters registers the metrics of s on a registry of its own (no global state:
// several servers in one process keep their own figures).
func newCounters(s *Server) *counters {
	c := &counters{reg: prometheus.NewRegistry(), reasons: map[string]*atomic.Int64{}}
	for _, r := range finishReasons {
		c.reasons[r] = new(atomic.Int64)
	}
	lbl := prometheus.Labels{"model_name": s.cfg.Model}
	hist := func(name, help string, buckets []float64) prometheus.Histogram {
		return prometheus.NewHistogram(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets, ConstLabels: lbl})
	}
	c.vTTFT = hist("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds (from arrival, queueing included).", vllmTTFTBuckets)
	c.vITL = hist("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", vllmITLBuckets)
	c.vE2E = hist("vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", vllmRequestLatencyBuckets)
	c.vQueue = hist("vllm:request_queue_time_seconds", "Histogram of time spent waiting (server queue and scheduler queue) in seconds.", vllmRequestLatencyBuckets)
	c.vPrefill = hist("vllm:request_prefill_time_seconds", "Histogram of time spent processing the prompt in seconds.", vllmRequestLatencyBuckets)
	c.vDecode = hist("vllm:request_decode_time_seconds", "Histogram of time from the first generated token to the last in seconds.", vllmRequestLatencyBuckets)
	c.success = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "vllm:request_success_total",
		Help: "Count of finished requests by finish reason.", ConstLabels: lbl}, []string{"finished_reason"})
	for _, r := range vllmFinishReasons {
		c.success.WithLabelValues(r) // every reason shows, 0 until one finishes so
	}
	c.ttft = prometheus.NewSummary(prometheus.SummaryOpts{Name: "llmbench_time_to_first_token_seconds",
		Help: "Time from arrival to the first generated token, queueing included.", ConstLabels: lbl})
	c.e2e = prometheus.NewSummary(prometheus.SummaryOpts{Name: "llmbench_e2e_request_latency_seconds",
		Help: "Time from arrival to the last token, queueing included.", ConstLabels: lbl})
	c.reg.MustRegister(c.vTTFT, c.vITL, c.vE2E, c.vQueue, c.vPrefill, c.vDecode, c.success, c.ttft, c.e2e, &snapshot{s: s, lbl: lbl})
	return c
}

type bucket struct {
	sec int64
	n   int64
}

func addBucket(ring []bucket, now time.Time, n int64) {
	sec := now.Unix()
	b := &ring[sec%int64(len(ring))]
	if b.sec != sec {
		b.sec, b.n = sec, 0
	}
	b.n += n
}

// rate is the tokens per second over the last rateWindow seconds: the buckets of the
// current second and the rateWindow-1 before it, over the time they span (or the
// server's age, when it is younger; at least one second).
func rate(ring []bucket, now, start time.Time) float64 {
	sec := now.Unix()
	var n int64
	for _, b := range ring {
		if b.sec <= sec && b.sec > sec-rateWindow {
			n += b.n
		}
	}
	span := now.Sub(time.Unix(sec-rateWindow+1, 0))
	span = max(min(span, now.Sub(start)), time.Second)
	return float64(n) / span.Seconds()
}

func (c *counters) tokens(prompt, gen int) {
	now := time.Now()
	c.mu.Lock()
	if prompt > 0 {
		addBucket(c.promptBuckets[:], now, int64(prompt))
	}
	if gen > 0 {
		addBucket(c.genBuckets[:], now, int64(gen))
	}
	c.mu.Unlock()
	c.promptTokens.Add(int64(prompt))
	c.genTokens.Add(int64(gen))
}

// firstToken records a request's time to first token.
func (c *counters) firstToken(d time.Duration) {
	c.ttft.Observe(d.Seconds())
	c.vTTFT.Observe(d.Seconds())
}

// finished records how a request that got a generation slot ended: reason is one of
// finishReasons; e2e runs from arrival to the end, ttft to the first token (0: none);
// prefill and decode are the engine's prompt and generation times.
func (c *counters) finished(reason string, e2e, ttft, prefill, decode time.Duration) {
	c.reasons[reason].Add(1)
	if reason != "error" {
		c.success.WithLabelValues(reason).Inc()
	}
	c.e2e.Observe(e2e.Seconds())
	c.vE2E.Observe(e2e.Seconds())
	if ttft > 0 {
		// Waiting is what the time to the first token holds beyond the prompt's processing.
		c.vQueue.Observe(max(ttft-prefill, 0).Seconds())
		c.vPrefill.Observe(prefill.Seconds())
		c.vDecode.Observe(decode.Seconds())
	}
}

// snapshot is the collector of the figures read at scrape time: one SchedulerStats
// snapshot per scrape feeds every series that comes from it.
type snapshot struct {
	s   *Server
	lbl prometheus.Labels
}

// snapshotMetric is one series of snapshot: its descriptor, type and value.
type snapshotMetric struct {
	name, help string
	typ        prometheus.ValueType
	value      func(v *snapshotValues) float64
}

// snapshotValues is what one scrape reads.
type snapshotValues struct {
	running, waiting    float64
	st                  SchedulerStats
	genRate, promptRate float64
	prompt, gen         float64
	rejected            float64
}

func usage(st SchedulerStats) float64 {
	if st.KVBlocksTotal > 0 {
		return float64(st.KVBlocksUsed) / float64(st.KVBlocksTotal)
	}
	return 0
}

var snapshotMetrics = []snapshotMetric{
	{"llmbench_num_requests_running", "Requests generating now.", prometheus.GaugeValue, func(v *snapshotValues) float64 { return v.running }},
	{"llmbench_num_requests_waiting", "Requests waiting for a slot (server queue plus scheduler queue).", prometheus.GaugeValue, func(v *snapshotValues) float64 { return v.waiting }},
	{"llmbench_kv_cache_blocks_used", "Paged KV cache blocks held by requests (free blocks that keep a cached prefix do not count).", prometheus.GaugeValue,
		func(v *snapshotValues) float64 { return float64(v.st.KVBlocksUsed) }},
	{"llmbench_kv_cache_blocks_total", "Paged KV cache blocks in the pool.", prometheus.GaugeValue, func(v *snapshotValues) float64 { return float64(v.st.KVBlocksTotal) }},
	{"llmbench_kv_cache_usage_ratio", "Fraction of the KV cache blocks in use (0 to 1).", prometheus.GaugeValue, func(v *snapshotValues) float64 { return usage(v.st) }},
	{"llmbench_prefix_cache_queries_total", "Prompt tokens looked up in the prefix cache.", prometheus.CounterValue, func(v *snapshotValues) float64 { return float64(v.st.PrefixQueryTokens) }},
	{"llmbench_prefix_cache_hits_total", "Prompt tokens found in the prefix cache.", prometheus.CounterValue, func(v *snapshotValues) float64 { return float64(v.st.PrefixHitTokens) }},
	{"llmbench_prefix_cache_hit_rate", "Prompt tokens found in the prefix cache / prompt tokens looked up, since the start.", prometheus.GaugeValue, func(v *snapshotValues) float64 {
		if v.st.PrefixQueryTokens > 0 {
			return float64(v.st.PrefixHitTokens) / float64(v.st.PrefixQueryTokens)
		}
		return 0
	}},
	{"llmbench_num_preemptions_total", "Requests preempted to free KV cache blocks (they recompute their tokens when readmitted).", prometheus.CounterValue,
		func(v *snapshotValues) float64 { return float64(v.st.Preemptions) }},
	{"llmbench_prompt_tokens_total", "Prompt tokens of admitted requests.", prometheus.CounterValue, func(v *snapshotValues) float64 { return v.prompt }},
	{"llmbench_generation_tokens_total", "Tokens generated.", prometheus.CounterValue, func(v *snapshotValues) float64 { return v.gen }},
	{"llmbench_generation_tokens_per_second", "Tokens generated per second over the last 10 s.", prometheus.GaugeValue, func(v *snapshotValues) float64 { return v.genRate }},
	{"llmbench_prompt_tokens_per_second", "Prompt tokens admitted per second over the last 10 s.", prometheus.GaugeValue, func(v *snapshotValues) float64 { return v.promptRate }},
	{"llmbench_requests_rejected_total", "Requests refused with 429 because the queue was full.", prometheus.CounterValue, func(v *snapshotValues) float64 { return v.rejected }},
	// vLLM's names for the same figures.
	{"vllm:num_requests_running", "Number of requests in model execution batches.", prometheus.GaugeValue, func(v *snapshotValues) float64 { return v.running }},
	{"vllm:num_requests_waiting", "Number of requests waiting to be processed.", prometheus.GaugeValue, func(v *snapshotValues) float64 { return v.waiting }},
	{"vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", prometheus.GaugeValue, func(v *snapshotValues) float64 { return usage(v.st) }},
	{"vllm:prompt_tokens_total", "Number of prefill tokens processed.", prometheus.CounterValue, func(v *snapshotValues) float64 { return v.prompt }},
	{"vllm:generation_tokens_total", "Number of generation tokens processed.", prometheus.CounterValue, func(v *snapshotValues) float64 { return v.gen }},
	{"vllm:prefix_cache_queries_total", "Prefix cache queries, in terms of number of queried tokens.", prometheus.CounterValue,
		func(v *snapshotValues) float64 { return float64(v.st.PrefixQueryTokens) }},
	{"vllm:prefix_cache_hits_total", "Prefix cache hits, in terms of number of cached tokens.", prometheus.CounterValue, func(v *snapshotValues) float64 { return float64(v.st.PrefixHitTokens) }},
	{"vllm:num_preemptions_total", "Cumulative number of preemption from the engine.", prometheus.CounterValue, func(v *snapshotValues) float64 { return float64(v.st.Preemptions) }},
	{"vllm:spec_decode_num_draft_tokens_total", "Number of draft tokens.", prometheus.CounterValue, func(v *snapshotValues) float64 { return float64(v.st.DraftedTokens) }},
	{"vllm:spec_decode_num_accepted_tokens_total", "Number of accepted tokens.", prometheus.CounterValue, func(v *snapshotValues) float64 { return float64(v.st.AcceptedTokens) }},
}

func (c *snapshot) desc(m snapshotMetric) *prometheus.Desc {
	return prometheus.NewDesc(m.name, m.help, nil, c.lbl)
}

// Describe sends the descriptors of every snapshot series.
func (c *snapshot) Describe(ch chan<- *prometheus.Desc) {
	for _, m := range snapshotMetrics {
		ch <- c.desc(m)
	}
	ch <- c.requestsDesc()
}

func (c *snapshot) requestsDesc() *prometheus.Desc {
	return prometheus.NewDesc("llmbench_requests_total", "Finished requests by finish reason (abort: the client left or timed out).", []string{"finished_reason"}, c.lbl)
}

// Collect reads the server's and the scheduler's state once and sends every series.
func (c *snapshot) Collect(ch chan<- prometheus.Metric) {
	s := c.s
	v := &snapshotValues{running: float64(s.running.Load()), waiting: float64(s.waiting.Load())}
	if s.stats != nil {
		v.st = s.stats.SchedulerStats()
		v.running = float64(v.st.Running)
		v.waiting += float64(v.st.Waiting)
	}
	now := time.Now()
	s.m.mu.Lock()
	v.genRate, v.promptRate = rate(s.m.genBuckets[:], now, s.start), rate(s.m.promptBuckets[:], now, s.start)
	s.m.mu.Unlock()
	v.prompt, v.gen, v.rejected = float64(s.m.promptTokens.Load()), float64(s.m.genTokens.Load()), float64(s.m.rejected.Load())
	for _, m := range snapshotMetrics {
		ch <- prometheus.MustNewConstMetric(c.desc(m), m.typ, m.value(v))
	}
	for _, r := range finishReasons {
		ch <- prometheus.MustNewConstMetric(c.requestsDesc(), prometheus.CounterValue, float64(s.m.reasons[r].Load()), r)
	}
}

// metrics serves the registry in Prometheus' text exposition format.
func (s *Server) metrics(w http.ResponseWriter, r *http.Request) {
	promhttp.HandlerFor(s.m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}).ServeHTTP(w, r)
}

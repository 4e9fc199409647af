package server

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// finishReasons label llmbench_requests_total: how requests ended.
var finishReasons = []string{"stop", "length", "abort", "error"}

// rateWindow is the window of the tokens/s gauges, in seconds.
const rateWindow = 10

// counters are the server's own /metrics figures.
type counters struct {
	reasons       map[string]*atomic.Int64 // filled by New, read-only after
	rejected      atomic.Int64             // 429s
	promptTokens  atomic.Int64
	genTokens     atomic.Int64
	ttftSum       atomic.Int64 // nanoseconds
	ttftCount     atomic.Int64
	e2eSum        atomic.Int64 // nanoseconds
	e2eCount      atomic.Int64
	mu            sync.Mutex
	genBuckets    [rateWindow + 1]bucket // generated tokens per second, a ring keyed by unix second
	promptBuckets [rateWindow + 1]bucket
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

// metrics writes the Prometheus text exposition format (version 0.0.4).
func (s *Server) metrics(w http.ResponseWriter, r *http.Request) {
	var b strings.Builder
	lbl := `model_name="` + escapeLabel(s.cfg.Model) + `"`
	put := func(name, typ, help string, v float64, labels ...string) {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
		all := append([]string{lbl}, labels...)
		fmt.Fprintf(&b, "%s{%s} %s\n", name, strings.Join(all, ","), strconv.FormatFloat(v, 'g', -1, 64))
	}
	running, waiting := float64(s.running.Load()), float64(s.waiting.Load())
	var st SchedulerStats
	if s.stats != nil {
		st = s.stats.SchedulerStats()
		running = float64(st.Running)
		waiting += float64(st.Waiting)
	}
	put("llmbench_num_requests_running", "gauge", "Requests generating now.", running)
	put("llmbench_num_requests_waiting", "gauge", "Requests waiting for a slot (server queue plus scheduler queue).", waiting)
	put("llmbench_kv_cache_blocks_used", "gauge", "Paged KV cache blocks held by requests (free blocks that keep a cached prefix do not count).", float64(st.KVBlocksUsed))
	put("llmbench_kv_cache_blocks_total", "gauge", "Paged KV cache blocks in the pool.", float64(st.KVBlocksTotal))
	usage := 0.0
	if st.KVBlocksTotal > 0 {
		usage = float64(st.KVBlocksUsed) / float64(st.KVBlocksTotal)
	}
	put("llmbench_kv_cache_usage_ratio", "gauge", "Fraction of the KV cache blocks in use (0 to 1).", usage)
	put("llmbench_prefix_cache_queries_total", "counter", "Prompt tokens looked up in the prefix cache.", float64(st.PrefixQueryTokens))
	put("llmbench_prefix_cache_hits_total", "counter", "Prompt tokens found in the prefix cache.", float64(st.PrefixHitTokens))
	hit := 0.0
	if st.PrefixQueryTokens > 0 {
		hit = float64(st.PrefixHitTokens) / float64(st.PrefixQueryTokens)
	}
	put("llmbench_prefix_cache_hit_rate", "gauge", "Prompt tokens found in the prefix cache / prompt tokens looked up, since the start.", hit)
	put("llmbench_num_preemptions_total", "counter", "Requests preempted to free KV cache blocks (they recompute their tokens when readmitted).", float64(st.Preemptions))
	put("llmbench_prompt_tokens_total", "counter", "Prompt tokens of admitted requests.", float64(s.m.promptTokens.Load()))
	put("llmbench_generation_tokens_total", "counter", "Tokens generated.", float64(s.m.genTokens.Load()))
	now := time.Now()
	s.m.mu.Lock()
	genRate, promptRate := rate(s.m.genBuckets[:], now, s.start), rate(s.m.promptBuckets[:], now, s.start)
	s.m.mu.Unlock()
	put("llmbench_generation_tokens_per_second", "gauge", "Tokens generated per second over the last 10 s.", genRate)
	put("llmbench_prompt_tokens_per_second", "gauge", "Prompt tokens admitted per second over the last 10 s.", promptRate)
	fmt.Fprintf(&b, "# HELP llmbench_requests_total Finished requests by finish reason (abort: the client left or timed out).\n# TYPE llmbench_requests_total counter\n")
	for _, r := range finishReasons {
		fmt.Fprintf(&b, "llmbench_requests_total{%s,finished_reason=%q} %d\n", lbl, r, s.m.reasons[r].Load())
	}
	put("llmbench_requests_rejected_total", "counter", "Requests refused with 429 because the queue was full.", float64(s.m.rejected.Load()))
	summary := func(name, help string, sum, count int64) {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s summary\n", name, help, name)
		fmt.Fprintf(&b, "%s_sum{%s} %s\n%s_count{%s} %d\n", name, lbl, strconv.FormatFloat(float64(sum)/1e9, 'g', -1, 64), name, lbl, count)
	}
	summary("llmbench_time_to_first_token_seconds", "Time from arrival to the first generated token, queueing included.", s.m.ttftSum.Load(), s.m.ttftCount.Load())
	summary("llmbench_e2e_request_latency_seconds", "Time from arrival to the last token, queueing included.", s.m.e2eSum.Load(), s.m.e2eCount.Load())
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	w.Write([]byte(b.String()))
}

func escapeLabel(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
}

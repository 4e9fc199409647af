package metrics

import (
	"math"
	"sort"
	"time"
)

// Definitions states, in words, how each serving figure is computed. Every JSON export
// carries it so a saved result says what its numbers mean (DESIGN.md §3).
var Definitions = map[string]string{
	"ttft":                      "time to first token: first streamed chunk with non-empty choices minus the time the request was sent (waiting for a --max-concurrency slot excluded), as vLLM",
	"ttft_content":              "llmbench: first chunk that carries generated text minus send time; a role-only chat chunk does not count",
	"tpot":                      "time per output token: (e2el - ttft) / (output_tokens - 1), over requests with more than one output token, as vLLM",
	"itl":                       "inter-token latency: gaps between consecutive streamed chunks of a request, pooled over requests, as vLLM",
	"itl_per_token":             "llmbench: each ITL gap divided by the number of tokens the later chunk carried (chunks with k > 1 tokens under speculative decoding or server batching)",
	"e2el":                      "end-to-end latency: last chunk with choices minus send time, as vLLM",
	"output_tokens":             "usage.completion_tokens when the server reports it, else per-chunk token counts, else our tokenizer on the generated text",
	"throughput":                "request, output-token and total-token throughput: sums over successful requests divided by the run's wall time (first send to last completion)",
	"request_goodput":           "successful requests meeting every given SLO (ttft, tpot, e2el in ms; tpot 0 for single-token outputs) divided by the run's wall time, as vLLM",
	"max_output_tokens_per_s":   "vLLM's peak: streamed chunks per 1-s bucket from the first send (a chunk counts as one token)",
	"peak_output_tokens_per_s":  "llmbench: the peak 1-s bucket counting tokens, not chunks",
	"max_concurrent_requests":   "the largest number of successful requests active in one 1-s bucket from the first send (a request is active in every bucket from int(start) to int(end) inclusive), as vLLM",
	"output_tokens_retokenized": "llmbench: successful requests whose output tokens were counted by re-tokenizing the generated text, because the server reported no count (usage, per-chunk counts)",
	"connect":                   "llmbench: for the requests that opened a new connection, the time from send until the connection was ready (DNS, TCP, TLS, waiting for the transport), in ms; it is inside their TTFT, as in vLLM's",
	"new_connections":           "llmbench: requests of the measured run that opened a new connection instead of reusing a keep-alive one",
	"ttft_warm":                 "llmbench: TTFT over the requests sent on an already-open keep-alive connection (no connection set-up inside); with --warm-connections every request is",
	"warm_connections":          "llmbench: keep-alive connections opened before the clock started (--warm-connections: up to --max-concurrency)",
	"temperature":               "the sampling temperature sent with every request: --temperature, else 0 (greedy) as vllm bench serve sends; TGI gets do_sample false instead of 0",
	"requests":                  "llmbench: the requests a point was to send; completed + failed + interrupted_requests add up to it (a timeout is a failure; only the user's Ctrl-C or esc interrupts)",
	"failure_reasons":           "llmbench: failed requests by reason: timeout, http <status>, malformed (not SSE/JSON, or a line over 1 MiB), stream_closed, connection, server_error, incomplete (no final event or no tokens), request, error",
	"client_send_lag":           "llmbench: how late the load generator released each request against its arrival schedule (Gamma gaps at absolute times from the start)",
	"server_timings":            "llmbench: timings the server reports about itself (llama.cpp /completion's timings object: prompt_n, prompt_ms, predicted_n, predicted_ms, ...), recorded beside ours, never mixed into them; server_timings_mean averages each over the successful requests that reported it; server_timings (with --save-detailed) holds each request's, null where none was reported",
	"non_streaming":             "llmbench: with --non-streaming each request asks for its whole answer at once (stream false; TGI /generate); only e2el (send until the full response is read) is measured, and ttft, ttft_content, tpot, itl and itl_per_token are not measured (null), never zero; output tokens come from the response's usage or details, else our tokenizer",
	"statistics":                "mean, median, population std and percentiles with linear interpolation (numpy's defaults) over the raw samples; an empty set reports 0 as vLLM; milliseconds",
}

// Pct is one percentile of a distribution: P in 0..100, V in milliseconds.
type Pct struct {
	P, V float64
}

// Dist summarises one latency distribution in milliseconds.
type Dist struct {
	N                 int
	Mean, Median, Std float64
	Percentiles       []Pct
}

// Percentile returns the requested percentile if it was computed.
func (d Dist) Percentile(p float64) (float64, bool) {
	for _, x := range d.Percentiles {
		if x.P == p {
			return x.V, true
		}
	}
	return 0, false
}

// Summarise computes a Dist from samples in milliseconds. As vLLM (np.mean(x or 0)),
// an empty set gives zeros.
func Summarise(ms []float64, percentiles []float64) Dist {
	d := Dist{N: len(ms)}
	if len(ms) == 0 {
		for _, p := range percentiles {
			d.Percentiles = append(d.Percentiles, Pct{P: p})
		}
		return d
	}
	sorted := append([]float64(nil), ms...)
	sort.Float64s(sorted)
	d.Mean, d.Std, d.Median = Mean(sorted), Std(sorted), PercentileSorted(sorted, 50)
	for _, p := range percentiles {
		d.Percentiles = append(d.Percentiles, Pct{P: p, V: PercentileSorted(sorted, p)})
	}
	return d
}

// ServingConfig selects what Summary computes.
type ServingConfig struct {
	Percentiles []float64          // --metric-percentiles (default 99)
	Goodput     map[string]float64 // SLOs in ms by metric: ttft, tpot, e2el
	// NonStreaming marks a run whose requests asked for whole answers (--non-streaming):
	// the summary's NonStreaming is set even when no request succeeded.
	NonStreaming bool
}

// Serving is the summary of a serving run, vLLM's BenchmarkMetrics plus llmbench's
// additions. Latency distributions are in milliseconds.
type Serving struct {
	Duration                 time.Duration
	Completed, Failed        int
	TotalInput, TotalOutput  int
	RequestThroughput        float64
	RequestGoodput           float64 // meaningful only when GoodputSet
	GoodputSet               bool
	OutputThroughput         float64
	TotalTokenThroughput     float64
	TTFT, TPOT, ITL, E2EL    Dist
	TTFTContent, ITLPerToken Dist
	// Connect is the connection set-up time of the requests that opened one; NewConns
	// counts them. TTFTWarm is the TTFT of the others (on a keep-alive connection).
	Connect, TTFTWarm Dist
	NewConns          int
	// Retokenized counts successful requests whose output tokens came from our
	// tokenizer because the server reported no count.
	Retokenized                   int
	QueueTime, E2ELInclQueue      Dist
	SendLag                       Dist // always with percentiles 50 and 99
	MaxOutputTokensPerS           float64
	PeakOutputTokensPerS          float64
	MaxConcurrentRequests         int
	OutputLens                    []int          // per record, 0 for failures
	Failures                      map[string]int // Record.FailureKind → count
	TokensPerSecond, ChunksPerSec []float64      // 1-s buckets from the first send
	ConcurrentPerSecond           []float64
	// NonStreaming is set when the requests asked for whole answers (--non-streaming):
	// TTFT, TPOT, ITL, TTFTContent, ITLPerToken and TTFTWarm were not measured (their
	// Dists are empty and exporters print them as n/a); E2EL is send → full response.
	NonStreaming bool `json:",omitempty"`
	// ServerTimings is the mean of each server-reported timing (Record.Extra, e.g.
	// llama.cpp's) over the successful requests that reported it; nil when none did.
	ServerTimings map[string]float64
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// chunkWeights returns the tokens carried by each chunk of r (first chunk first).
func chunkWeights(r *Record) []float64 {
	n := len(r.ITL) + 1
	w := make([]float64, n)
	if r.ChunkTokens != nil && len(r.ChunkTokens) == len(r.ITL) {
		rest := 0
		for i, k := range r.ChunkTokens {
			w[i+1] = float64(k)
			rest += int(k)
		}
		w[0] = math.Max(0, float64(r.OutputTokens-rest))
		return w
	}
	// Chunks before the first one with text (a chat stream's role-only chunk) carry
	// none: the tokens are spread over the chunks from that one on.
	lead := 0
	if r.TTFTContent > r.TTFT {
		for at := r.TTFT; lead < len(r.ITL) && at < r.TTFTContent; lead++ {
			at += r.ITL[lead]
		}
	}
	per := max(0, float64(r.OutputTokens)/float64(n-lead)) // a 0-token success carries none
	for i := lead; i < n; i++ {
		w[i] = per
	}
	return w
}

// Summary computes the serving metrics from the raw per-request records over a run of
// wall time dur, exactly as vLLM's calculate_metrics does for its figures.
func Summary(recs []Record, dur time.Duration, cfg ServingConfig) Serving {
	pcts := cfg.Percentiles
	if len(pcts) == 0 {
		pcts = []float64{99}
	}
	s := Serving{Duration: dur, Failures: map[string]int{}, OutputLens: make([]int, len(recs)), NonStreaming: cfg.NonStreaming}
	var ttft, ttftContent, tpot, allTPOT, itl, itlTok, e2el, queue, e2elQ, lag, conn, warm []float64
	var ttftAll []float64 // per successful request, as e2el (0 where not measured)
	var extraN map[string]int
	for i := range recs {
		r := &recs[i]
		if r.Arrival != 0 || r.Scheduled != 0 {
			lag = append(lag, ms(r.SendLag()))
		}
		if r.NewConn {
			s.NewConns++
			conn = append(conn, ms(r.Connect))
		}
		if !r.Success {
			s.Failed++
			s.Failures[r.FailureKind()]++
			continue
		}
		s.Completed++
		if r.Retokenized {
			s.Retokenized++
		}
		if r.NonStreaming {
			s.NonStreaming = true
		}
		if !r.NewConn && !r.NonStreaming {
			warm = append(warm, ms(r.TTFT))
		}
		for k, v := range r.Extra {
			if s.ServerTimings == nil {
				s.ServerTimings, extraN = map[string]float64{}, map[string]int{}
			}
			s.ServerTimings[k] += v
			extraN[k]++
		}
		out := max(0, r.OutputTokens) // as vLLM: a success with no tokens counts 0
		s.OutputLens[i] = out
		s.TotalInput += r.PromptLen
		s.TotalOutput += out
		e2el = append(e2el, ms(r.Latency))
		queue = append(queue, ms(r.QueueTime()))
		e2elQ = append(e2elQ, ms(r.Latency+r.QueueTime()))
		if r.NonStreaming { // one whole answer: no first token, no gaps to time
			allTPOT = append(allTPOT, 0)
			ttftAll = append(ttftAll, 0)
			continue
		}
		t := 0.0
		if out > 1 {
			t = ms(r.Latency-r.TTFT) / float64(out-1)
			tpot = append(tpot, t)
		}
		allTPOT = append(allTPOT, t)
		ttft = append(ttft, ms(r.TTFT))
		ttftAll = append(ttftAll, ms(r.TTFT))
		if r.TTFTContent > 0 {
			ttftContent = append(ttftContent, ms(r.TTFTContent))
		}
		w := chunkWeights(r)
		for j, g := range r.ITL {
			itl = append(itl, ms(g))
			if k := w[j+1]; k > 0 {
				itlTok = append(itlTok, ms(g)/k)
				if r.ChunkTokens != nil {
					for range int(k) - 1 {
						itlTok = append(itlTok, ms(g)/k)
					}
				}
			}
		}
	}
	for k, n := range extraN {
		s.ServerTimings[k] /= float64(n)
	}
	sec := dur.Seconds()
	if sec > 0 {
		s.RequestThroughput = float64(s.Completed) / sec
		s.OutputThroughput = float64(s.TotalOutput) / sec
		s.TotalTokenThroughput = float64(s.TotalInput+s.TotalOutput) / sec
	}
	if len(cfg.Goodput) > 0 {
		s.GoodputSet = true
		good := 0
		for i := range e2el {
			ok := true
			if v, has := cfg.Goodput["ttft"]; has && ttftAll[i] > v {
				ok = false
			}
			if v, has := cfg.Goodput["tpot"]; has && allTPOT[i] > v {
				ok = false
			}
			if v, has := cfg.Goodput["e2el"]; has && e2el[i] > v {
				ok = false
			}
			if ok {
				good++
			}
		}
		if sec > 0 {
			s.RequestGoodput = float64(good) / sec
		}
	}
	s.TTFT, s.TPOT, s.ITL, s.E2EL = Summarise(ttft, pcts), Summarise(tpot, pcts), Summarise(itl, pcts), Summarise(e2el, pcts)
	s.TTFTContent, s.ITLPerToken = Summarise(ttftContent, pcts), Summarise(itlTok, pcts)
	s.QueueTime, s.E2ELInclQueue = Summarise(queue, pcts), Summarise(e2elQ, pcts)
	s.SendLag = Summarise(lag, []float64{50, 99})
	s.Connect, s.TTFTWarm = Summarise(conn, pcts), Summarise(warm, pcts)
	s.buckets(recs)
	return s
}

// buckets fills the 1-s buckets, the peaks and the peak concurrency as vLLM's
// calculate_metrics does: buckets from the first successful send, a chunk in bucket
// int(t - first), a request active in every bucket from int(start - first) to
// int(end - first) inclusive.
func (s *Serving) buckets(recs []Record) {
	first, last := time.Duration(math.MaxInt64), time.Duration(0)
	any := false
	for i := range recs {
		r := &recs[i]
		if !r.Success {
			continue
		}
		any = true
		first = min(first, r.Start)
		last = max(last, r.Start+r.Latency)
	}
	if !any {
		return
	}
	n := int(math.Ceil((last - first).Seconds())) + 1
	bucket := func(t time.Duration) int { return int((t - first) / time.Second) }
	chunks, tokens, conc := make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range recs {
		r := &recs[i]
		if !r.Success {
			continue
		}
		w := chunkWeights(r)
		t := r.Start + r.TTFT
		if r.NonStreaming { // the whole answer arrived at once, at the end
			t = r.Start + r.Latency
		}
		for j := 0; j <= len(r.ITL); j++ {
			if j > 0 {
				t += r.ITL[j-1]
			}
			if b := bucket(t); b >= 0 && b < n {
				chunks[b]++
				tokens[b] += w[j]
			}
		}
		for b := max(0, bucket(r.Start)); b < min(n, bucket(r.Start+r.Latency)+1); b++ {
			conc[b]++
		}
	}
	for b := range n {
		s.MaxOutputTokensPerS = max(s.MaxOutputTokensPerS, chunks[b])
		s.PeakOutputTokensPerS = max(s.PeakOutputTokensPerS, tokens[b])
		s.MaxConcurrentRequests = max(s.MaxConcurrentRequests, int(conc[b]))
	}
	s.ChunksPerSec, s.TokensPerSecond, s.ConcurrentPerSecond = chunks, tokens, conc
}

// streamOnly names the figures only a streamed answer gives: a non-streaming run
// (Serving.NonStreaming) has none of them.
var streamOnly = map[string]bool{"ttft": true, "tpot": true, "itl": true, "ttft_content": true, "itl_per_token": true, "ttft_warm": true}

// Measured reports whether the figure named key (ttft, tpot, itl, ttft_content,
// itl_per_token, ttft_warm, e2el, …) was measured: false for the streamed-only figures
// of a non-streaming run, which exporters print as n/a (null), never as 0.
func (s *Serving) Measured(key string) bool { return !(s.NonStreaming && streamOnly[key]) }

// NotMeasuredNote is the one line outputs print where a non-streaming run's TTFT, TPOT
// and ITL would be.
const NotMeasuredNote = "TTFT, TPOT, ITL: n/a (--non-streaming: whole answers, only E2EL is measured)"

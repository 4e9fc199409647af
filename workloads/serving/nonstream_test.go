package serving

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"llmbench/engine"
	"llmbench/workloads"
	"llmbench/workloads/metrics"
)

// wholeServer answers every request with one JSON body after a fixed delay, and keeps
// each request's path, Accept header and body.
type wholeServer struct {
	delay time.Duration
	reply string // the response body
	mu    sync.Mutex
	paths []string
	bodys []map[string]any
	acc   []string
}

func (s *wholeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var m map[string]any
	json.Unmarshal(raw, &m)
	s.mu.Lock()
	s.paths, s.bodys, s.acc = append(s.paths, r.URL.Path), append(s.bodys, m), append(s.acc, r.Header.Get("Accept"))
	s.mu.Unlock()
	time.Sleep(s.delay)
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, s.reply)
}

// TestNonStreamingRequests: under --non-streaming each backend sends its
// non-streaming form (stream false without stream_options; TGI /generate, which takes
// no stream member), reads the server's count (usage.completion_tokens, TGI
// details.generated_tokens, llama.cpp tokens_predicted) or, without one, retokenizes
// and flags it; E2EL is at least the server's delay and TTFT, ITL stay unmeasured.
func TestNonStreamingRequests(t *testing.T) {
	const delay = 60 * time.Millisecond
	cases := []struct {
		backend, path, reply string
		stream               any // the body's "stream" member (nil: none)
		tokens               int
		retok                bool
		text                 string
	}{
		{"openai", "/v1/completions", `{"id":"x","choices":[{"index":0,"text":"one two three","finish_reason":"length"}],"usage":{"prompt_tokens":4,"completion_tokens":7,"total_tokens":11}}`, false, 7, false, "one two three"},
		{"openai-chat", "/v1/chat/completions", `{"choices":[{"index":0,"message":{"role":"assistant","content":"a \"b\" c"}}],"usage":{"completion_tokens":5}}`, false, 5, false, `a "b" c`},
		{"openai", "/v1/completions", `{"choices":[{"text":"four words right here"}]}`, false, 8, true, "four words right here"},
		{"tgi", "/generate", `{"generated_text":"x y","details":{"finish_reason":"length","generated_tokens":9}}`, nil, 9, false, "x y"},
		{"llamacpp", "/completion", `{"content":"p q r","stop":true,"tokens_predicted":3,"timings":{"predicted_n":3,"predicted_ms":12.5}}`, false, 3, false, "p q r"},
	}
	for _, tc := range cases {
		t.Run(tc.backend, func(t *testing.T) {
			srv := &wholeServer{delay: delay, reply: tc.reply}
			hs := httptest.NewServer(srv)
			defer hs.Close()
			c := &HTTP{Backend: tc.backend, URL: hs.URL + Endpoint(tc.backend, true), Model: "m", Tok: wordTok{}, KeepText: true,
				HC: &http.Client{Transport: NewTransport(1)}, NonStreaming: true}
			base := time.Now()
			var rec metrics.Record
			c.Do(context.Background(), &Request{Prompt: "hi", OutputLen: 16}, &rec, func() time.Duration { return time.Since(base) })
			if !rec.Success {
				t.Fatalf("failed: %s", rec.Error)
			}
			if srv.paths[0] != tc.path {
				t.Errorf("path %s, want %s", srv.paths[0], tc.path)
			}
			b := srv.bodys[0]
			if got := b["stream"]; got != tc.stream {
				t.Errorf("body stream %v, want %v (%v)", got, tc.stream, b)
			}
			if _, ok := b["stream_options"]; ok {
				t.Errorf("body asks for stream options: %v", b)
			}
			if srv.acc[0] != "application/json" {
				t.Errorf("Accept %q", srv.acc[0])
			}
			if !rec.NonStreaming || rec.TTFT != 0 || rec.TTFTContent != 0 || rec.ITL != nil || rec.ChunkTokens != nil {
				t.Errorf("streamed figures set: non-streaming %v TTFT %v content %v ITL %v", rec.NonStreaming, rec.TTFT, rec.TTFTContent, rec.ITL)
			}
			if rec.Latency < delay {
				t.Errorf("E2EL %v shorter than the server's delay %v", rec.Latency, delay)
			}
			if rec.OutputTokens != tc.tokens || rec.Retokenized != tc.retok || rec.Text != tc.text {
				t.Errorf("tokens %d retokenized %v text %q, want %d %v %q", rec.OutputTokens, rec.Retokenized, rec.Text, tc.tokens, tc.retok, tc.text)
			}
			if tc.backend == "llamacpp" && rec.Extra["llamacpp_predicted_ms"] != 12.5 {
				t.Errorf("llama.cpp timings %v", rec.Extra)
			}
		})
	}
}

// TestNonStreamingBodies: the non-streaming body is the streaming one with stream
// false and no stream_options (TGI's is the same: the endpoint differs).
func TestNonStreamingBodies(t *testing.T) {
	for _, backend := range []string{"openai", "openai-chat", "tgi", "llamacpp"} {
		req := &Request{Prompt: "hello", OutputLen: 9}
		s, _ := (&HTTP{Backend: backend, Model: "m", IgnoreEOS: true}).body(req)
		n, _ := (&HTTP{Backend: backend, Model: "m", IgnoreEOS: true, NonStreaming: true}).body(req)
		var ms, mn map[string]any
		if json.Unmarshal(s, &ms) != nil || json.Unmarshal(n, &mn) != nil {
			t.Fatalf("%s: invalid JSON %s / %s", backend, s, n)
		}
		if backend != "tgi" {
			if ms["stream"] != true || mn["stream"] != false {
				t.Errorf("%s: stream %v → %v", backend, ms["stream"], mn["stream"])
			}
			delete(ms, "stream")
			delete(mn, "stream")
			delete(ms, "stream_options")
		}
		if js, jn := mustJSON(ms), mustJSON(mn); js != jn {
			t.Errorf("%s: bodies differ beyond stream: %s vs %s", backend, js, jn)
		}
	}
	if Endpoint("tgi", true) != "/generate" || Endpoint("tgi", false) != "/generate_stream" || Endpoint("openai", true) != "/v1/completions" {
		t.Errorf("endpoints: %s %s %s", Endpoint("tgi", true), Endpoint("tgi", false), Endpoint("openai", true))
	}
}

func mustJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

// TestNonStreamingFailures: an error object, a body that is not JSON and an answer
// without text fail with their reasons, one line each.
func TestNonStreamingFailures(t *testing.T) {
	for _, tc := range []struct{ backend, reply, reason, detail string }{
		{"openai", `{"error":{"message":"model not found","type":"x"}}`, "server_error", "model not found"},
		{"tgi", `{"error":"Input validation error","error_type":"validation"}`, "server_error", "Input validation error"},
		{"openai", `data: {"choices":[]}`, "malformed", "malformed response"},
		{"openai", `{"choices":[],"usage":{"completion_tokens":3}}`, "incomplete", "no generated text"},
		{"llamacpp", `{"content":"","stop":true,"tokens_predicted":0}`, "incomplete", "no tokens"},
	} {
		hs := httptest.NewServer(&wholeServer{reply: tc.reply})
		c := &HTTP{Backend: tc.backend, URL: hs.URL + Endpoint(tc.backend, true), Model: "m", HC: &http.Client{Transport: NewTransport(1)}, NonStreaming: true}
		var rec metrics.Record
		base := time.Now()
		c.Do(context.Background(), &Request{Prompt: "hi", OutputLen: 4}, &rec, func() time.Duration { return time.Since(base) })
		hs.Close()
		if rec.Success || rec.FailureKind() != tc.reason || !strings.Contains(rec.Error, tc.detail) || strings.Contains(rec.Error, "\n") {
			t.Errorf("%s %s: success %v, %s: %q; want %s with %q", tc.backend, tc.reply, rec.Success, rec.FailureKind(), rec.Error, tc.reason, tc.detail)
		}
	}
}

// TestNonStreamingRun: a run against a server that answers whole after a known delay
// reports E2EL of at least that delay (and below the run's duration), no TTFT, TPOT or
// ITL (empty distributions, Summary.NonStreaming), the server's token counts summed
// for throughput, and e2el goodput.
func TestNonStreamingRun(t *testing.T) {
	const delay, n = 50 * time.Millisecond, 6
	srv := &wholeServer{delay: delay, reply: `{"choices":[{"text":"w"}],"usage":{"completion_tokens":11}}`}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	c := httpClient("openai", hs.URL, 2, 10*time.Second)
	c.NonStreaming = true
	spec := workloads.ServeSpec{Backend: "openai", RequestRate: workloads.Rate(1e9), Burstiness: 1, MaxConcurrency: 2, NonStreaming: true,
		MetricPercentiles: []float64{50, 99}, Goodput: map[string]float64{"e2el": 1e6}, Dataset: workloads.DatasetSpec{NumPrompts: n, Seed: 1}}
	res, _ := runBench(t, context.Background(), spec, fixedDataset(n, 16), c)
	m := res.Summary
	if m.Completed != n || m.Failed != 0 {
		t.Fatalf("completed %d failed %d %v", m.Completed, m.Failed, m.Failures)
	}
	if !m.NonStreaming || m.TTFT.N != 0 || m.TPOT.N != 0 || m.ITL.N != 0 || m.TTFTContent.N != 0 || m.ITLPerToken.N != 0 || m.TTFTWarm.N != 0 {
		t.Errorf("streamed figures summarised: %+v %+v %+v", m.TTFT, m.TPOT, m.ITL)
	}
	for _, k := range []string{"ttft", "tpot", "itl", "ttft_content", "itl_per_token", "ttft_warm"} {
		if m.Measured(k) {
			t.Errorf("%s reported as measured", k)
		}
	}
	if !m.Measured("e2el") || m.E2EL.N != n {
		t.Fatalf("E2EL %+v", m.E2EL)
	}
	if p50, _ := m.E2EL.Percentile(50); p50 < float64(delay)/1e6 || m.E2EL.Mean > res.Duration.Seconds()*1e3 {
		t.Errorf("E2EL p50 %.2f ms mean %.2f ms: want ≥ %v and ≤ the run's %v", p50, m.E2EL.Mean, delay, res.Duration)
	}
	// 6 requests, 2 at a time, each ≥ 50 ms: at least 3 rounds
	if res.Duration < 3*delay {
		t.Errorf("duration %v < 3 × %v", res.Duration, delay)
	}
	if m.TotalOutput != 11*n || m.OutputThroughput != float64(11*n)/res.Duration.Seconds() {
		t.Errorf("output tokens %d (throughput %.2f), want %d", m.TotalOutput, m.OutputThroughput, 11*n)
	}
	if m.PeakOutputTokensPerS < 11 || m.RequestGoodput != m.RequestThroughput {
		t.Errorf("peak %.1f tok/s, goodput %.2f vs throughput %.2f", m.PeakOutputTokensPerS, m.RequestGoodput, m.RequestThroughput)
	}
}

// TestInProcNonStreaming: the in-process backend under --non-streaming delivers the
// answer whole when the engine has finished: E2EL at least the last token's emit
// time, no TTFT or ITL, every token counted.
func TestInProcNonStreaming(t *testing.T) {
	base := time.Now()
	toks := stampScript{{ID: 1, Text: "a"}, {ID: 2, Text: "b"}, {ID: 3, Text: "c"}}
	slow := sleepGen{gen: toks, gap: 20 * time.Millisecond}
	var rec metrics.Record
	(&InProc{Gen: slow, KeepText: true, NonStreaming: true}).Do(context.Background(), &Request{Prompt: "x", OutputLen: 3}, &rec, func() time.Duration { return time.Since(base) })
	if !rec.Success || !rec.NonStreaming || rec.OutputTokens != 3 || rec.Text != "abc" {
		t.Fatalf("success %v non-streaming %v tokens %d text %q (%s)", rec.Success, rec.NonStreaming, rec.OutputTokens, rec.Text, rec.Error)
	}
	if rec.TTFT != 0 || rec.TTFTContent != 0 || rec.ITL != nil || rec.ChunkTokens != nil {
		t.Errorf("streamed figures: TTFT %v ITL %v chunks %v", rec.TTFT, rec.ITL, rec.ChunkTokens)
	}
	if rec.Latency < 3*slow.gap {
		t.Errorf("E2EL %v < the generation's %v", rec.Latency, 3*slow.gap)
	}
}

// sleepGen emits gen's tokens gap apart.
type sleepGen struct {
	gen stampScript
	gap time.Duration
}

func (g sleepGen) Generate(ctx context.Context, req engine.Request, emit func(engine.Token) error) (engine.Stats, error) {
	for _, tok := range g.gen {
		time.Sleep(g.gap)
		if err := emit(tok); err != nil {
			return engine.Stats{}, err
		}
	}
	return engine.Stats{GenTokens: len(g.gen), StopReason: "length"}, nil
}

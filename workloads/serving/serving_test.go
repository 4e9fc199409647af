package serving

import (
	"bufio"
	"context"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"llmbench/workloads"
	"llmbench/workloads/metrics"
)

// strict selects the timing bounds of make bench (LLMBENCH_STRICT=1); make test asserts
// only what holds however busy the machine is.
func strict() bool { return os.Getenv("LLMBENCH_STRICT") == "1" }

// TestTimingAccuracy: the reported TTFT, TPOT, ITL and E2EL match the scripted
// server's own record at p50 and p99: under LLMBENCH_STRICT=1 (make bench) within 1 and
// 3 ms at 1, 64 and 512 concurrent streams. make test (1 and 64 streams) checks
// causality only: a request's TTFT seen by the client is never shorter than the
// server's (the client starts its clock before sending and stops it after reading the
// token the server flushed), so neither is any percentile of it; the other differences
// are logged (the server's E2EL ends at its last flush, which may come after the last
// token).
func TestTimingAccuracy(t *testing.T) {
	if raceEnabled {
		t.Skip("timing under the race detector is not meaningful")
	}
	const p50Tol, p99Tol = 1.0, 3.0
	for _, streams := range []int{1, 64, 512} {
		t.Run(strconv.Itoa(streams), func(t *testing.T) {
			if streams > 64 && (testing.Short() || !strict()) {
				t.Skip("512 streams run in make bench (LLMBENCH_STRICT=1), where nothing else shares the cores")
			}
			// The scripted server shares the 2 cores with the client, so the chunk rate is
			// kept to what both fit in: 512 streams at a 50 ms ITL are 10k chunks/s.
			ttft, itl, tokens := 40*time.Millisecond, 15*time.Millisecond, 12
			if streams > 64 {
				ttft, itl, tokens = 50*time.Millisecond, 50*time.Millisecond, 16
			}
			srv := &scripted{ttft: ttft, itl: itl}
			hs := httptest.NewServer(srv)
			defer hs.Close()
			n := 2 * streams
			if streams == 1 {
				n = 8
			}
			e2el := ttft + time.Duration(tokens-1)*itl
			spec := workloads.ServeSpec{Backend: "openai", RequestRate: workloads.Rate(float64(streams) / e2el.Seconds()),
				Burstiness: 1, MaxConcurrency: streams, NumWarmups: streams, MetricPercentiles: []float64{50, 99},
				Dataset: workloads.DatasetSpec{NumPrompts: n, Seed: 1}}
			c := httpClient("openai", hs.URL, streams, 30*time.Second)
			res, _ := runBench(t, context.Background(), spec, fixedDataset(n, tokens), c)
			if res.Summary.Failed != 0 || res.Summary.Completed != n {
				t.Fatalf("completed %d failed %d (%v)", res.Summary.Completed, res.Summary.Failed, res.Summary.Failures)
			}
			// Drop the warm-up records the server kept: they are the first ones.
			srv.mu.Lock()
			srv.recs = srv.recs[len(srv.recs)-n:]
			srv.mu.Unlock()
			sT, sP, sI, sE := srv.serverDists()
			check := func(name string, got metrics.Dist, server []float64) {
				for _, p := range []float64{50, 99} {
					want := metrics.Percentile(server, p)
					g, _ := got.Percentile(p)
					tol := p50Tol
					if p == 99 {
						tol = p99Tol
					}
					diff := g - want
					t.Logf("%d streams %-4s p%.0f: client %8.3f ms, server %8.3f ms, diff %+.3f ms", streams, name, p, g, want, diff)
					if strict() && math.Abs(diff) > tol {
						t.Errorf("%s p%.0f: client %.3f ms vs server %.3f ms (tolerance %.0f ms)", name, p, g, want, tol)
					}
				}
			}
			s := res.Summary
			checkCausalTTFT(t, res.Records, sT)
			check("TTFT", s.TTFT, sT)
			check("TPOT", s.TPOT, sP)
			check("ITL", s.ITL, sI)
			check("E2EL", s.E2EL, sE)
			lag, _ := s.SendLag.Percentile(99)
			t.Logf("%d streams: client send lag p99 %.3f ms", streams, lag)
		})
	}
}

// TestFailures: 500s, a stream closed mid-way, malformed SSE, a server error event and
// a hang past the timeout are each counted with their reason, and the run finishes.
func TestFailures(t *testing.T) {
	var i atomic.Int64
	good := &scripted{ttft: time.Millisecond, itl: time.Millisecond}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch i.Add(1) % 6 {
		case 0:
			http.Error(w, "overloaded", http.StatusInternalServerError)
		case 1:
			w.Header().Set("Content-Type", "text/event-stream")
			w.Write([]byte("data: {\"choices\":[{\"text\":\"a\"}]}\n\n"))
			w.(http.Flusher).Flush()
			conn, buf, err := w.(http.Hijacker).Hijack()
			if err == nil {
				buf.Flush()
				conn.Close()
			}
		case 2:
			w.Write([]byte("data: {\"choices\":[{\"text\":\"a\"}]}\n\nthis is not sse\n\n"))
		case 3:
			w.Write([]byte("data: {\"choices\":[{\"text\":\"a\"}]}\n\ndata: {\"choices\":[{\"text\n\n"))
		case 4:
			select {
			case <-r.Context().Done():
			case <-time.After(2 * time.Second):
			}
		case 5:
			good.ServeHTTP(w, r)
		}
	}))
	defer hs.Close()
	spec := workloads.ServeSpec{Backend: "openai", RequestRate: workloads.Inf, Burstiness: 1,
		Dataset: workloads.DatasetSpec{NumPrompts: 12}}
	c := httpClient("openai", hs.URL, 12, 400*time.Millisecond)
	start := time.Now()
	res, _ := runBench(t, context.Background(), spec, fixedDataset(12, 4), c)
	if el := time.Since(start); el > 4*time.Second {
		t.Errorf("run took %v: the hanging requests were not cut at the timeout", el)
	}
	s := res.Summary
	if s.Completed != 2 || s.Failed != 10 {
		t.Errorf("completed %d failed %d, want 2 and 10; reasons %v", s.Completed, s.Failed, s.Failures)
	}
	for kind, want := range map[string]int{"http 500": 2, "stream_closed": 2, "malformed": 4, "timeout": 2} {
		if s.Failures[kind] != want {
			t.Errorf("failures[%q] = %d, want %d (all: %v)", kind, s.Failures[kind], want, s.Failures)
		}
	}
	for _, r := range res.Records {
		if !r.Success && (r.Error == "" || strings.Contains(r.Error, "\n")) {
			t.Errorf("failure reason %q: want one line", r.Error)
		}
	}
}

// TestCancelGivesPartial: cancelling mid-run returns what finished, marked partial.
func TestCancelGivesPartial(t *testing.T) {
	srv := &scripted{ttft: 5 * time.Millisecond, itl: 5 * time.Millisecond}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 600*time.Millisecond)
	defer cancel()
	spec := workloads.ServeSpec{Backend: "openai", RequestRate: 20, Burstiness: 1,
		Dataset: workloads.DatasetSpec{NumPrompts: 200}}
	res, d := runBench(t, ctx, spec, fixedDataset(200, 4), httpClient("openai", hs.URL, 8, 10*time.Second))
	if !d.Partial || !res.Partial {
		t.Fatalf("done partial %v, result partial %v", d.Partial, res.Partial)
	}
	if res.Summary.Completed == 0 || res.Summary.Completed >= 200 || res.Interrupted == 0 {
		t.Errorf("completed %d, interrupted %d", res.Summary.Completed, res.Interrupted)
	}
	if res.Summary.Failed != 0 {
		t.Errorf("interrupted requests counted as failures: %v", res.Summary.Failures)
	}
}

// TestChatContentAndChunks: a role-only first chunk sets TTFT but not ttft_content;
// chunks carrying 2 tokens halve the per-token ITL and double the token peak.
func TestChatContentAndChunks(t *testing.T) {
	srv := &scripted{chat: true, roleDelay: 5 * time.Millisecond, ttft: 60 * time.Millisecond, itl: 10 * time.Millisecond, perChunk: 2}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	spec := workloads.ServeSpec{Backend: "openai-chat", RequestRate: workloads.Inf, Burstiness: 1,
		MetricPercentiles: []float64{50}, Dataset: workloads.DatasetSpec{NumPrompts: 2}}
	c := httpClient("openai-chat", hs.URL, 2, 10*time.Second)
	c.KeepText = true
	res, _ := runBench(t, context.Background(), spec, fixedDataset(2, 8), c)
	s := res.Summary
	if s.Completed != 2 {
		t.Fatalf("completed %d: %v", s.Completed, res.Records[0].Error)
	}
	if s.TTFT.Median > 40 || s.TTFTContent.Median < 55 {
		t.Errorf("TTFT median %.1f ms (role chunk at 5), ttft_content %.1f ms (content at 60)", s.TTFT.Median, s.TTFTContent.Median)
	}
	r := res.Records[0]
	if r.OutputTokens != 8 || r.Text != "tok0tok2tok4tok6" {
		t.Errorf("output tokens %d text %q", r.OutputTokens, r.Text)
	}
	if s.ITLPerToken.N == 0 {
		t.Fatal("no per-token ITL")
	}
	// Content gaps are at least 10 ms (the server sleeps; a busy machine only adds) for
	// 2 tokens each: the per-token ITL is each gap halved, so its median is exactly half
	// the chunk ITL's, and at least 5 ms.
	p, _ := s.ITLPerToken.Percentile(50)
	chunk, _ := s.ITL.Percentile(50)
	if math.Abs(p-chunk/2) > 1e-9 || p < 4.5 {
		t.Errorf("per-token ITL median %.3f ms, chunk ITL median %.3f ms: want half of it, ≥ 5", p, chunk)
	}
}

func TestSSEReader(t *testing.T) {
	in := ": comment\nevent: x\ndata: {\"a\":1}\r\n\ndata:{\"b\":2}\n\nid: 3\ndata: [DONE]\n\nnot sse\n"
	sr := &sseReader{br: bufio.NewReaderSize(strings.NewReader(in), 16)}
	var got []string
	var err error
	for {
		var p []byte
		p, err = sr.next()
		if err != nil {
			break
		}
		got = append(got, string(p))
	}
	if strings.Join(got, "|") != `{"a":1}|{"b":2}|[DONE]` || !errors.Is(err, errMalformed) {
		t.Errorf("got %q, err %v", got, err)
	}
}

func TestJSONScan(t *testing.T) {
	p := []byte(`{"choices":[{"index":0,"text":"a\"b\\n\u00e9\ud83d\ude00","x":null}],"usage":{"completion_tokens":12}}`)
	raw, ok := jsonString(p, jsonKey(p, "text"))
	if !ok || string(appendUnescaped(nil, raw)) != "a\"b\\n\u00e9\U0001F600" {
		t.Errorf("text %q %v -> %q", raw, ok, appendUnescaped(nil, raw))
	}
	if n, ok := jsonInt(p, jsonKey(p, "completion_tokens")); !ok || n != 12 {
		t.Errorf("completion_tokens %d %v", n, ok)
	}
	if !jsonNonEmptyArray(p, jsonKey(p, "choices")) || jsonNonEmptyArray([]byte(`{"choices": [ ]}`), 12) {
		t.Error("choices emptiness")
	}
	for s, want := range map[string]bool{`{"a":[1,{"b":"}"}]}`: true, `{"a":1`: false, `{"a":1}x`: false, `[1]`: false} {
		if jsonObject([]byte(s)) != want {
			t.Errorf("jsonObject(%s) != %v", s, want)
		}
	}
}

func TestSchedule(t *testing.T) {
	a := Arrival{Rate: 100, Burstiness: 1, Seed: 3}
	s := a.Schedule(1000)
	if got := s[999].Seconds(); math.Abs(got-10) > 1e-6 {
		t.Errorf("last send at %v s, want 10 (n/rate)", got)
	}
	var gaps []float64
	for i := 1; i < len(s); i++ {
		if s[i] < s[i-1] {
			t.Fatal("schedule goes back")
		}
		gaps = append(gaps, (s[i] - s[i-1]).Seconds())
	}
	// Poisson: the gaps' coefficient of variation is about 1; k = 16 makes it 1/4.
	if cv := metrics.Std(gaps) / metrics.Mean(gaps); cv < 0.85 || cv > 1.15 {
		t.Errorf("Poisson gaps CV %.2f", cv)
	}
	g := Arrival{Rate: 100, Burstiness: 16, Seed: 3}.Schedule(1000)
	gaps = gaps[:0]
	for i := 1; i < len(g); i++ {
		gaps = append(gaps, (g[i] - g[i-1]).Seconds())
	}
	if cv := metrics.Std(gaps) / metrics.Mean(gaps); cv < 0.2 || cv > 0.3 {
		t.Errorf("Gamma k=16 gaps CV %.2f, want ≈0.25", cv)
	}
	if s := (Arrival{Rate: math.Inf(1), Burstiness: 1}).Schedule(5); s[4] != 0 {
		t.Errorf("inf rate: %v", s)
	}
	r := Arrival{RampUp: "linear", RampStart: 1, RampEnd: 11, Burstiness: math.Inf(1)}
	if r.RateAt(0, 11) != 1 || r.RateAt(10, 11) != 11 || r.RateAt(5, 11) != 6 {
		t.Errorf("linear ramp rates %v %v %v", r.RateAt(0, 11), r.RateAt(5, 11), r.RateAt(10, 11))
	}
	if err := (Arrival{RampUp: "exponential", RampStart: 0, RampEnd: 5, Burstiness: 1}).Validate(); err == nil {
		t.Error("exponential ramp from 0 accepted")
	}
}

// checkCausalTTFT checks that the client's TTFTs are never below the server's: each
// request's client clock starts before the server's and stops after the server's
// record of its first flush, so the k-th shortest client TTFT is at least the k-th
// shortest server one. (Percentiles would not do: the two sides estimate them
// differently.)
func checkCausalTTFT(t *testing.T, recs []metrics.Record, server []float64) {
	t.Helper()
	client := make([]float64, 0, len(recs))
	for _, r := range recs {
		client = append(client, msDur(r.TTFT))
	}
	server = slices.Clone(server)
	slices.Sort(client)
	slices.Sort(server)
	if len(client) != len(server) {
		t.Fatalf("%d client TTFTs, %d server ones", len(client), len(server))
	}
	for k := range client {
		if client[k] < server[k] {
			t.Errorf("TTFT #%d (sorted): client %.3f ms < server %.3f ms: the client cannot see a token before the server sends it", k, client[k], server[k])
			return
		}
	}
}

package serving

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"llmbench/workloads"
	"llmbench/workloads/run"
)

// serverRecord is what the scripted server really produced for one request: the
// times it flushed each chunk, measured from when the handler started.
type serverRecord struct {
	flushes []time.Duration
}

// scripted is a loopback OpenAI-completions SSE server with a known TTFT and ITL that
// records the gaps it really produced.
type scripted struct {
	ttft, itl time.Duration
	mu        sync.Mutex
	recs      []serverRecord
	// instant streams every chunk at once in one write (capacity tests).
	instant bool
	// chat sends a role-only chunk first (after roleDelay), then content.
	chat      bool
	roleDelay time.Duration
	// perChunk makes each chunk carry this many tokens (continuous usage stats).
	perChunk int
}

func (s *scripted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	var body struct {
		MaxTokens  int `json:"max_tokens"`
		MaxCompTok int `json:"max_completion_tokens"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	n := max(body.MaxTokens, body.MaxCompTok)
	w.Header().Set("Content-Type", "text/event-stream")
	fl := w.(http.Flusher)
	k := max(1, s.perChunk)
	if s.instant {
		buf := make([]byte, 0, n*80)
		for i := range n {
			buf = fmt.Appendf(buf, "data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"text\":\"t%d\",\"finish_reason\":null}]}\n\n", i)
		}
		buf = fmt.Appendf(buf, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":4,\"completion_tokens\":%d}}\n\ndata: [DONE]\n\n", n)
		w.Write(buf)
		return
	}
	var rec serverRecord
	next := start.Add(s.ttft)
	send := func(line string) {
		time.Sleep(time.Until(next))
		fmt.Fprint(w, line)
		// Taken before Flush hands the bytes to the connection: the client cannot have
		// read them earlier, so the client's TTFT is never below this record's.
		rec.flushes = append(rec.flushes, time.Since(start))
		fl.Flush()
		next = time.Now().Add(s.itl)
	}
	if s.chat {
		next = start.Add(s.roleDelay)
		send(`data: {"choices":[{"index":0,"delta":{"role":"assistant"}}]}` + "\n\n")
		next = start.Add(s.ttft)
	}
	cum := 0
	for i := 0; i < n; i += k {
		cum = min(n, cum+k)
		field := `"text":"tok` + strconv.Itoa(i) + ` \"q\" \u00e9"`
		if s.chat {
			field = `"delta":{"content":"tok` + strconv.Itoa(i) + `"}`
		}
		send(fmt.Sprintf("data: {\"choices\":[{\"index\":0,%s}],\"usage\":{\"completion_tokens\":%d}}\n\n", field, cum))
	}
	// Kept before the end of the stream goes out, so a request's record is in recs
	// before its client can finish it: a warm-up's record cannot land among the
	// measured ones (TestTimingAccuracy keeps the last n).
	s.mu.Lock()
	s.recs = append(s.recs, rec)
	s.mu.Unlock()
	fmt.Fprint(w, "data: {\"choices\":[],\"usage\":{\"completion_tokens\":"+strconv.Itoa(n)+"}}\n\ndata: [DONE]\n\n")
	fl.Flush()
}

// runBench runs a spec against url through the run core and returns the result.
func runBench(t testing.TB, ctx context.Context, spec workloads.ServeSpec, ds *Dataset, c Client) (*Result, run.Done) {
	t.Helper()
	b := &Bench{Spec: spec, Dataset: ds, Client: c, ModelID: "test"}
	_, ch := run.Start(ctx, b)
	var d run.Done
	for e := range ch {
		if x, ok := e.(run.Done); ok {
			d = x
		}
	}
	if d.Err != nil {
		t.Fatalf("run: %v", d.Err)
	}
	res, _ := d.Result.(*Result)
	if res == nil {
		t.Fatal("no result")
	}
	return res, d
}

// fixedDataset returns n prompts asking for out tokens each.
func fixedDataset(n, out int) *Dataset {
	ds := &Dataset{}
	for range n {
		ds.Requests = append(ds.Requests, Request{Prompt: "hello", PromptLen: 4, OutputLen: out})
	}
	return ds
}

func httpClient(backend, url string, conns int, timeout time.Duration) *HTTP {
	return &HTTP{Backend: backend, URL: url + DefaultEndpoint(backend), Model: "m",
		HC: &http.Client{Transport: NewTransport(conns)}, Timeout: timeout}
}

// msDur converts to milliseconds.
func msDur(d time.Duration) float64 { return float64(d) / 1e6 }

// serverDists summarises what the server produced, as the client's metrics do.
func (s *scripted) serverDists() (ttft, tpot, itl, e2el []float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.recs {
		f := r.flushes
		if len(f) == 0 {
			continue
		}
		ttft = append(ttft, msDur(f[0]))
		e2el = append(e2el, msDur(f[len(f)-1]))
		if len(f) > 1 {
			tpot = append(tpot, msDur(f[len(f)-1]-f[0])/float64(len(f)-1))
		}
		for i := 1; i < len(f); i++ {
			itl = append(itl, msDur(f[i]-f[i-1]))
		}
	}
	return
}

package serving

import (
	"context"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"llmbench/engine"
	"llmbench/workloads"
	"llmbench/workloads/metrics"
	"llmbench/workloads/run"
)

// slowGen is a Generator that emits one token every step until MaxTokens, or stops
// with ctx's error as the engine does; it records the sampling it was asked for.
type slowGen struct {
	step time.Duration
	mu   sync.Mutex
	temp []float32
}

func (g *slowGen) Generate(ctx context.Context, req engine.Request, emit func(engine.Token) error) (engine.Stats, error) {
	g.mu.Lock()
	g.temp = append(g.temp, req.Sampling.Temperature)
	g.mu.Unlock()
	var st engine.Stats
	for i := range req.MaxTokens {
		select {
		case <-ctx.Done():
			st.StopReason = "cancelled"
			return st, ctx.Err()
		case <-time.After(g.step):
		}
		if err := emit(engine.Token{ID: int32(i), Text: "x", Index: i}); err != nil {
			return st, err
		}
		st.GenTokens++
	}
	st.StopReason = "length"
	return st, nil
}

// TestInProcTimeoutAndInterrupt: past InProc.Timeout a request fails with
// ReasonTimeout; when the run itself stops it is interrupted, and the run's counts
// add up: completed + failed + interrupted = requests.
func TestInProcTimeoutAndInterrupt(t *testing.T) {
	g := &slowGen{step: 10 * time.Millisecond}
	c := &InProc{Gen: g, Timeout: 50 * time.Millisecond}
	if rec := doOnce(c, 20); rec.Success || rec.Reason != metrics.ReasonTimeout || !strings.HasPrefix(rec.Error, "timeout") {
		t.Errorf("past the timeout: success %v reason %v %q", rec.Success, rec.Reason, rec.Error)
	}
	if rec := doOnce(c, 2); !rec.Success || rec.OutputTokens != 2 || rec.Text != "" {
		t.Errorf("within the timeout: success %v (%s) tokens %d text %q", rec.Success, rec.Error, rec.OutputTokens, rec.Text)
	}
	c.KeepText = true
	if rec := doOnce(c, 2); rec.Text != "xx" {
		t.Errorf("KeepText: text %q", rec.Text)
	}
	// A run cut by its context (Ctrl-C) long before its 10 waves of ≥ 30 ms end: requests
	// in flight or unsent are interrupted, not failed.
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	spec := workloads.ServeSpec{Backend: "inproc", RequestRate: workloads.Inf, Burstiness: 1, MaxConcurrency: 2, Dataset: workloads.DatasetSpec{NumPrompts: 20}}
	b := &Bench{Spec: spec, Dataset: fixedDataset(20, 3), Client: &InProc{Gen: g, Timeout: 45 * time.Millisecond}}
	res := runPartial(t, ctx, b)
	s := res.Summary
	if !res.Partial || s.Completed+s.Failed+res.Interrupted != res.Requests || res.Requests != 20 || res.Interrupted == 0 {
		t.Errorf("partial %v: completed %d + failed %d + interrupted %d, requests %d", res.Partial, s.Completed, s.Failed, res.Interrupted, res.Requests)
	}
	for _, r := range res.Records {
		if r.Reason == metrics.ReasonInterrupted {
			t.Errorf("an interrupted request is kept among the records: %+v", r)
		}
	}
}

// TestInProcDefaultGreedy: with no temperature the in-process engine decodes greedily
// (temperature 0), as the HTTP backends are asked to.
func TestInProcDefaultGreedy(t *testing.T) {
	g := &slowGen{step: time.Microsecond}
	doOnce(&InProc{Gen: g}, 1)
	tp := 0.7
	doOnce(&InProc{Gen: g, Sampling: Sampling{Temperature: &tp}}, 1)
	if len(g.temp) != 2 || g.temp[0] != 0 || g.temp[1] != 0.7 {
		t.Errorf("temperatures asked %v, want [0 0.7]", g.temp)
	}
}

// TestRetokenizedFlagged: when the server reports no count, the tokens are counted by
// re-tokenizing the text and the record and summary say so.
func TestRetokenizedFlagged(t *testing.T) {
	hs := httptest.NewServer(sseHandler(`data: {"choices":[{"index":0,"text":" a"}]}`, `data: {"choices":[{"index":0,"text":" b"}]}`, "data: [DONE]"))
	defer hs.Close()
	c := httpClient("openai", hs.URL, 2, 5*time.Second)
	c.Tok = wordTok{}
	spec := workloads.ServeSpec{Backend: "openai", RequestRate: workloads.Inf, Burstiness: 1, Dataset: workloads.DatasetSpec{NumPrompts: 3}}
	res, _ := runBench(t, context.Background(), spec, fixedDataset(3, 2), c)
	if s := res.Summary; s.Completed != 3 || s.Retokenized != 3 || s.TotalOutput != 12 || !res.Records[0].Retokenized {
		t.Errorf("completed %d, retokenized %d, total output %d", s.Completed, s.Retokenized, s.TotalOutput)
	}
	hs2 := httptest.NewServer(sseHandler(`data: {"choices":[{"index":0,"text":" a"}],"usage":{"completion_tokens":1}}`, "data: [DONE]"))
	defer hs2.Close()
	c2 := httpClient("openai", hs2.URL, 1, 5*time.Second)
	c2.Tok = wordTok{}
	if rec := doOnce(c2, 1); !rec.Success || rec.Retokenized || rec.OutputTokens != 1 {
		t.Errorf("server count: success %v retokenized %v tokens %d", rec.Success, rec.Retokenized, rec.OutputTokens)
	}
}

// runPartial runs b through the run core under ctx and returns its result, partial
// or not.
func runPartial(t *testing.T, ctx context.Context, b *Bench) *Result {
	t.Helper()
	_, ch := run.Start(ctx, b)
	var d run.Done
	for e := range ch {
		if x, ok := e.(run.Done); ok {
			d = x
		}
	}
	res, _ := d.Result.(*Result)
	if res == nil {
		t.Fatalf("no result (%v)", d.Err)
	}
	return res
}

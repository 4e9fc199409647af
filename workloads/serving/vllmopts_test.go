package serving

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"llmbench/engine"
	"llmbench/workloads/metrics"
)

// TestBodyVLLMOptions checks vllm bench serve's extra sampling parameters under each
// backend's names, logprobs, and --extra-body replacing members.
func TestBodyVLLMOptions(t *testing.T) {
	minP, fp, pp, rp, lp := 0.05, 0.5, -0.25, 1.1, 3
	s := Sampling{MinP: &minP, FrequencyPenalty: &fp, PresencePenalty: &pp, RepetitionPenalty: &rp, Logprobs: &lp}
	cases := []struct {
		backend string
		want    map[string]any
		absent  []string
	}{
		{"openai", map[string]any{"min_p": 0.05, "frequency_penalty": 0.5, "presence_penalty": -0.25, "repetition_penalty": 1.1, "logprobs": 3.0}, []string{"top_logprobs"}},
		{"openai-chat", map[string]any{"min_p": 0.05, "frequency_penalty": 0.5, "presence_penalty": -0.25, "repetition_penalty": 1.1, "logprobs": true, "top_logprobs": 3.0}, nil},
		{"llamacpp", map[string]any{"min_p": 0.05, "frequency_penalty": 0.5, "presence_penalty": -0.25, "repeat_penalty": 1.1, "n_probs": 3.0}, []string{"repetition_penalty"}},
	}
	for _, c := range cases {
		raw, err := (&HTTP{Backend: c.backend, Model: "m", Sampling: s}).body(&Request{Prompt: "p", OutputLen: 4})
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]any
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatal(err)
		}
		for k, v := range c.want {
			if got[k] != v {
				t.Errorf("%s: %s = %v; want %v (%s)", c.backend, k, got[k], v, raw)
			}
		}
		for _, k := range c.absent {
			if _, ok := got[k]; ok {
				t.Errorf("%s: %s sent", c.backend, k)
			}
		}
	}
	raw, _ := (&HTTP{Backend: "tgi", Sampling: s}).body(&Request{Prompt: "p", OutputLen: 4})
	var tgi struct{ Parameters map[string]any }
	json.Unmarshal(raw, &tgi)
	if tgi.Parameters["repetition_penalty"] != 1.1 || tgi.Parameters["frequency_penalty"] != 0.5 || tgi.Parameters["top_n_tokens"] != 3.0 || tgi.Parameters["min_p"] != nil {
		t.Errorf("tgi: %s", raw)
	}
	extra := map[string]json.RawMessage{"max_tokens": json.RawMessage("9"), "chat_template_kwargs": json.RawMessage(`{"enable_thinking":false}`)}
	raw, err := (&HTTP{Backend: "openai", Model: "m", ExtraBody: extra}).body(&Request{Prompt: "p", OutputLen: 4})
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	json.Unmarshal(raw, &got)
	if got["max_tokens"] != 9.0 || got["prompt"] != "p" || got["chat_template_kwargs"].(map[string]any)["enable_thinking"] != false {
		t.Errorf("extra body: %s", raw)
	}
	inf := math.Inf(1)
	if _, err := (&HTTP{Backend: "openai", Sampling: Sampling{MinP: &inf}}).body(&Request{}); err == nil {
		t.Error("an infinite min_p made a body")
	}
}

// TestRequestIDAndInsecureTLS runs requests against a TLS server on loopback with a
// self-signed certificate: refused without InsecureTLS, answered with it, each
// carrying x-request-id = prefix + index.
func TestRequestIDAndInsecureTLS(t *testing.T) {
	ids := make(chan string, 4)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ids <- r.Header.Get("x-request-id")
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"text\":\"hi\"}]}\n\ndata: {\"choices\":[],\"usage\":{\"completion_tokens\":1}}\n\ndata: [DONE]\n\n")
	}))
	srv.StartTLS()
	defer srv.Close()
	if !strings.HasPrefix(srv.URL, "https://127.0.0.1:") {
		t.Fatalf("server at %s, want loopback", srv.URL)
	}
	start := time.Now()
	now := func() time.Duration { return time.Since(start) }
	do := func(tr *http.Transport, idx int) *metrics.Record {
		c := &HTTP{Backend: "openai", URL: srv.URL + "/v1/completions", Model: "m", HC: &http.Client{Transport: tr}, RequestIDPrefix: "bench-1234-", Tok: testTok(t)}
		rec := &metrics.Record{Index: idx}
		c.Do(context.Background(), &Request{Prompt: "p", OutputLen: 1}, rec, now)
		return rec
	}
	if rec := do(NewTransport(1), 0); rec.Success || !strings.Contains(rec.Error, "certificate") {
		t.Errorf("self-signed server accepted without --insecure: %+v", rec)
	}
	tr := NewTransport(1)
	InsecureTLS(tr)
	if rec := do(tr, 7); !rec.Success {
		t.Fatalf("--insecure request failed: %+v", rec)
	}
	if id := <-ids; id != "bench-1234-7" {
		t.Errorf("x-request-id %q; want bench-1234-7", id)
	}
}

// reqCapture records the engine request an InProc client makes.
type reqCapture struct{ got *engine.Request }

func (c reqCapture) Generate(ctx context.Context, req engine.Request, emit func(engine.Token) error) (engine.Stats, error) {
	*c.got = req
	emit(engine.Token{Text: "x"})
	return engine.Stats{GenTokens: 1}, nil
}

// TestInProcVLLMSampling: the in-process client hands --min-p, the penalties and
// --logprobs to the engine's sampler (penalties over the whole history, as vLLM's).
func TestInProcVLLMSampling(t *testing.T) {
	minP, fp, pp, rp, lp := 0.05, 0.5, 0.25, 1.1, 2
	var got engine.Request
	c := &InProc{Gen: reqCapture{&got}, Sampling: Sampling{MinP: &minP, FrequencyPenalty: &fp, PresencePenalty: &pp, RepetitionPenalty: &rp, Logprobs: &lp}}
	start := time.Now()
	rec := &metrics.Record{}
	c.Do(context.Background(), &Request{Prompt: "p", OutputLen: 1}, rec, func() time.Duration { return time.Since(start) })
	s := got.Sampling
	if !rec.Success || s.MinP != 0.05 || s.FrequencyPenalty != 0.5 || s.PresencePenalty != 0.25 || s.RepeatPenalty != float32(1.1) || s.RepeatLastN != -1 ||
		!got.Logprobs || got.TopLogprobs != 2 {
		t.Errorf("engine request %+v (record %+v)", got, rec)
	}
	c = &InProc{Gen: reqCapture{&got}}
	c.Do(context.Background(), &Request{Prompt: "p", OutputLen: 1}, &metrics.Record{}, func() time.Duration { return 0 })
	if got.Sampling.RepeatLastN != 0 || got.Sampling.MinP != 0 || got.Logprobs {
		t.Errorf("unset options reached the engine: %+v", got)
	}
}

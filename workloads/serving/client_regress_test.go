package serving

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"llmbench/workloads"
	"llmbench/workloads/metrics"
)

// wordTok is a tokenizer that counts two tokens per space-separated word, so a count
// taken by re-tokenizing the text differs from the server's usage.
type wordTok struct{}

func (wordTok) Encode(text string, _, _ bool) []int32 {
	return make([]int32, 2*len(strings.Fields(text)))
}
func (wordTok) Decode([]int32) string { return "" }
func (wordTok) VocabSize() int        { return 1000 }

// doOnce sends one request with c and returns its record.
func doOnce(c Client, out int) metrics.Record {
	var rec metrics.Record
	start := time.Now()
	c.Do(context.Background(), &Request{Prompt: "hello", PromptLen: 4, OutputLen: out}, &rec, func() time.Duration { return time.Since(start) })
	return rec
}

// sseHandler serves the given SSE lines (each followed by a blank line).
func sseHandler(lines ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, l := range lines {
			fmt.Fprint(w, l+"\n\n")
			w.(http.Flusher).Flush()
		}
	}
}

// TestRegressUsageInLastTextChunk: llama-server puts usage in its last chunk that has
// choices (with text, or with an empty text and the finish reason), not in a separate
// chunk with empty choices; the server's completion_tokens is the count, as vLLM's
// client takes it wherever it appears. The base commit re-tokenized the text (80 here).
func TestRegressUsageInLastTextChunk(t *testing.T) {
	const n = 40
	for _, lastText := range []string{" word", ""} {
		var lines []string
		for i := range n {
			l := `data: {"choices":[{"index":0,"text":" word","finish_reason":null}]}`
			if i == n-1 && lastText != "" {
				l = `data: {"choices":[{"index":0,"text":" word","finish_reason":"length"}],"usage":{"prompt_tokens":4,"completion_tokens":40,"total_tokens":44}}`
			}
			lines = append(lines, l)
		}
		if lastText == "" {
			lines = append(lines, `data: {"choices":[{"index":0,"text":"","finish_reason":"length"}],"usage":{"prompt_tokens":4,"completion_tokens":40,"total_tokens":44},"timings":{"predicted_n":40}}`)
		}
		hs := httptest.NewServer(sseHandler(append(lines, "data: [DONE]")...))
		c := httpClient("openai", hs.URL, 1, 5*time.Second)
		c.Tok = wordTok{}
		rec := doOnce(c, n)
		hs.Close()
		if !rec.Success || rec.OutputTokens != n {
			t.Errorf("last chunk text %q: success %v (%s), output tokens %d, want the server's %d", lastText, rec.Success, rec.Error, rec.OutputTokens, n)
		}
	}
}

// TestRegressSSELineCapped: a stream line longer than the cap fails the request as
// malformed instead of growing the reader's buffer without bound.
func TestRegressSSELineCapped(t *testing.T) {
	huge := `data: {"choices":[{"index":0,"text":"` + strings.Repeat("a", 2<<20) + `"}]}`
	hs := httptest.NewServer(sseHandler(`data: {"choices":[{"index":0,"text":"x"}]}`, huge, "data: [DONE]"))
	defer hs.Close()
	rec := doOnce(httpClient("openai", hs.URL, 1, 5*time.Second), 2)
	if rec.Success || !strings.Contains(rec.Error, "malformed") {
		t.Errorf("2 MiB line: success %v, reason %q; want a malformed failure", rec.Success, rec.Error)
	}
}

// TestRegressTextDroppedByDefault: a record keeps the generated text only when asked
// (--save-detailed); otherwise it is dropped once the tokens are counted, so a long
// run's memory stays flat.
func TestRegressTextDroppedByDefault(t *testing.T) {
	hs := httptest.NewServer(sseHandler(`data: {"choices":[{"index":0,"text":" a"}]}`, `data: {"choices":[{"index":0,"text":" b"}]}`, "data: [DONE]"))
	defer hs.Close()
	c := httpClient("openai", hs.URL, 1, 5*time.Second)
	c.Tok = wordTok{}
	rec := doOnce(c, 2)
	if !rec.Success || rec.Text != "" || rec.OutputTokens != 4 {
		t.Errorf("success %v (%s), text %q, output tokens %d: want the text dropped after counting 4 tokens", rec.Success, rec.Error, rec.Text, rec.OutputTokens)
	}
}

// TestRegressZeroTokenSuccess: a successful request the server says produced 0 tokens
// (a role-only chat stream) counts 0 output tokens, not 1.
func TestRegressZeroTokenSuccess(t *testing.T) {
	hs := httptest.NewServer(sseHandler(`data: {"choices":[{"index":0,"delta":{"role":"assistant"}}]}`,
		`data: {"choices":[],"usage":{"prompt_tokens":4,"completion_tokens":0}}`, "data: [DONE]"))
	defer hs.Close()
	spec := workloads.ServeSpec{Backend: "openai-chat", RequestRate: workloads.Inf, Burstiness: 1, Dataset: workloads.DatasetSpec{NumPrompts: 2}}
	res, _ := runBench(t, context.Background(), spec, fixedDataset(2, 8), httpClient("openai-chat", hs.URL, 2, 5*time.Second))
	s := res.Summary
	if s.Completed != 2 || s.TotalOutput != 0 || s.OutputThroughput != 0 {
		t.Errorf("completed %d, total output %d, output tok/s %.2f; want 2, 0, 0", s.Completed, s.TotalOutput, s.OutputThroughput)
	}
}

// TestRegressDefaultTemperature: with no --temperature every HTTP backend asks for
// greedy decoding, as vllm bench serve sends temperature 0 (TGI refuses 0: greedy is
// do_sample false there), so outputs do not depend on each server's default.
func TestRegressDefaultTemperature(t *testing.T) {
	var mu sync.Mutex
	var bodies []map[string]any
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b map[string]any
		json.NewDecoder(r.Body).Decode(&b)
		mu.Lock()
		bodies = append(bodies, b)
		mu.Unlock()
		http.Error(w, "no", http.StatusTeapot)
	}))
	defer hs.Close()
	for _, backend := range []string{"openai", "openai-chat", "llamacpp", "tgi"} {
		doOnce(httpClient(backend, hs.URL, 1, 5*time.Second), 4)
		mu.Lock()
		b := bodies[len(bodies)-1]
		mu.Unlock()
		if backend == "tgi" {
			p, _ := b["parameters"].(map[string]any)
			if p["do_sample"] == true || (p["temperature"] != nil && p["temperature"] != 0.0) {
				t.Errorf("tgi parameters %v: want greedy (no do_sample, no temperature > 0)", p)
			}
			continue
		}
		if v, ok := b["temperature"]; !ok || v != 0.0 {
			t.Errorf("%s body %v: want \"temperature\": 0 sent explicitly", backend, b)
		}
	}
	temp := 0.7
	c := httpClient("openai", hs.URL, 1, 5*time.Second)
	c.Sampling.Temperature = &temp
	doOnce(c, 4)
	mu.Lock()
	defer mu.Unlock()
	if v := bodies[len(bodies)-1]["temperature"]; v != 0.7 {
		t.Errorf("--temperature 0.7 sent %v", v)
	}
}

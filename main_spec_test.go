package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"llmbench/engine/synth"
)

// TestServeDraft: `llmbench serve -m T -md D` with llama-server's draft flags answers
// greedy requests with the text the model alone gives, and streams a step's accepted
// tokens in one chunk (fewer content chunks than tokens).
func TestServeDraft(t *testing.T) {
	dir := t.TempDir()
	target, err := synth.Ensure(context.Background(), dir, "spec-tiny", "Q8_0", 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	draft, err := synth.Ensure(context.Background(), dir, "spec-tiny-draft", "Q8_0", 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	plain := startServe(t, "-t", "1", "-m", target)
	spec := startServe(t, "-t", "1", "-m", target, "-md", draft, "--draft-max", "24", "--draft-min", "1", "--draft-p-min", "0.6")
	const body = `{"prompt":"Once upon a time","max_tokens":48,"temperature":0,"ignore_eos":true`
	text := func(base string) string {
		r, err := http.Post(base+"/v1/completions", "application/json", strings.NewReader(body+"}"))
		if err != nil {
			t.Fatal(err)
		}
		defer r.Body.Close()
		var a struct{ Choices []struct{ Text string } }
		if err := json.NewDecoder(r.Body).Decode(&a); err != nil || len(a.Choices) != 1 {
			t.Fatalf("answer: %v %+v", err, a)
		}
		return a.Choices[0].Text
	}
	want := text(plain)
	if got := text(spec); got != want || want == "" {
		t.Errorf("with the draft %q, without %q", got, want)
	}
	r, err := http.Post(spec+"/v1/completions", "application/json", strings.NewReader(body+`,"stream":true,"stream_options":{"include_usage":true}}`))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	chunks, tokens := 0, 0
	var streamed strings.Builder
	sc := bufio.NewScanner(r.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var ev struct {
			Choices []struct{ Text string }
			Usage   *struct {
				CompletionTokens int `json:"completion_tokens"`
			}
		}
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatal(err)
		}
		if len(ev.Choices) > 0 && ev.Choices[0].Text != "" {
			chunks++
			streamed.WriteString(ev.Choices[0].Text)
		}
		if ev.Usage != nil {
			tokens = ev.Usage.CompletionTokens
		}
	}
	if streamed.String() != want || tokens != 48 || chunks >= tokens {
		t.Errorf("stream: %d chunks for %d tokens, text %q (want %q)", chunks, tokens, streamed.String(), want)
	}
	t.Logf("%d tokens in %d content chunks", tokens, chunks)
	// vLLM's speculative-decoding counters on /metrics.
	m, err := http.Get(spec + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(m.Body)
	m.Body.Close()
	drafted := metricValue(string(page), "vllm:spec_decode_num_draft_tokens_total")
	accepted := metricValue(string(page), "vllm:spec_decode_num_accepted_tokens_total")
	if !(accepted > 0 && drafted >= accepted) {
		t.Errorf("/metrics: %v drafted, %v accepted", drafted, accepted)
	}
}

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
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

// TestRunCompareAB: a profile with compare: ab runs its two serve runs and then
// prints the A/B table of each sweep point, labelled with the runs' names, with the
// draft's rows.
func TestRunCompareAB(t *testing.T) {
	_, env := homeEnv(t)
	dir := t.TempDir()
	target, err := synth.Ensure(context.Background(), dir, "spec-tiny", "Q8_0", 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	draft, err := synth.Ensure(context.Background(), dir, "spec-tiny-draft", "Q8_0", 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	serve := `    serve:
      backend: inproc
      model: ` + target + `
      threads: 1
      dataset: {dataset_name: random, num_prompts: 4, random_input_len: 16, random_output_len: 24}
`
	prof := "schema: 1\nname: ab\ncompare: ab\nruns:\n  - name: plain\n" + serve + "    sweep: {max_concurrency: [1, 2]}\n" +
		"  - name: drafted\n" + serve + "      engine: {draft: " + draft + ", draft_max: 8, draft_min: 1, draft_p_min: 0.6}\n    sweep: {max_concurrency: [1, 2]}\n"
	path := filepath.Join(dir, "ab.yaml")
	if err := os.WriteFile(path, []byte(prof), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := runEnv(t, env, "run", path, "--headless")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stderr, out)
	}
	if n := strings.Count(out, "| Metric "); n != 2 {
		t.Errorf("%d A/B tables, want one per concurrency (2):\n%s", n, out)
	}
	for _, want := range []string{" plain | ", " drafted | ", "% Difference", "| Output token throughput (tok/s) |", "| Tokens per model step ", "A/B, max concurrency 2"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
}

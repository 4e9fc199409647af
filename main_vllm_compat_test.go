package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestServeBenchVLLMFlags runs a command line copied from vllm bench serve against a
// loopback server: --backend vllm, the extra sampling parameters, --extra-body,
// --request-id-prefix and --logprobs reach every request; spec_bench loads from its
// JSONL; --plot-timeline writes the HTML beside the result JSON; request_rate and
// burstiness are floats; flags with no effect give one note, refused ones one line.
func TestServeBenchVLLMFlags(t *testing.T) {
	var mu sync.Mutex
	var bodies []map[string]any
	var ids []string
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			fmt.Fprint(w, `{"data":[{"id":"loop-model"}]}`)
			return
		}
		raw, _ := io.ReadAll(r.Body)
		var b map[string]any
		json.Unmarshal(raw, &b)
		mu.Lock()
		bodies, ids = append(bodies, b), append(ids, r.Header.Get("x-request-id"))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range 3 {
			fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"text\":\" w%d\"}]}\n\n", i)
			w.(http.Flusher).Flush()
		}
		fmt.Fprint(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":3}}\n\ndata: [DONE]\n\n")
	}))
	defer hs.Close()
	dir := t.TempDir()
	ds := filepath.Join(dir, "question.jsonl")
	os.WriteFile(ds, []byte(`{"category":"writing","turns":["Write a poem."]}`+"\n"+`{"category":"math","turns":["What is 2+2?"]}`+"\n"), 0o644)
	out, stderr, code := run(t, "serve-bench", "--backend", "vllm", "--base-url", hs.URL, "--dataset-name", "spec_bench", "--dataset-path", ds,
		"--num-prompts", "4", "--spec-bench-output-len", "3", "--request-rate", "50", "--burstiness", "2", "--min-p", "0.1",
		"--frequency-penalty", "0.5", "--presence-penalty", "0.25", "--repetition-penalty", "1.1", "--logprobs", "2",
		"--extra-body", `{"chat_template_kwargs":{"enable_thinking":false}}`, "--request-id-prefix", "bench-abc-", "--disable-shuffle",
		"--plot-timeline", "--timeline-itl-thresholds", "1,2", "--save-result", "--result-dir", dir, "--result-filename", "v.json",
		"--trust-remote-code", "--tokenizer-mode", "auto", "--ready-check-timeout-sec", "0")
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, stderr, out)
	}
	if len(bodies) != 4 {
		t.Fatalf("%d requests", len(bodies))
	}
	for i, b := range bodies {
		if b["min_p"] != 0.1 || b["frequency_penalty"] != 0.5 || b["presence_penalty"] != 0.25 || b["repetition_penalty"] != 1.1 ||
			b["logprobs"] != 2.0 || b["max_tokens"] != 3.0 || b["chat_template_kwargs"] == nil {
			t.Errorf("request %d body: %v", i, b)
		}
		if !strings.HasPrefix(ids[i], "bench-abc-") {
			t.Errorf("x-request-id %q", ids[i])
		}
	}
	// With --disable-shuffle and 2 questions oversampled to 4, the first two keep the file's order.
	m := readJSON(t, filepath.Join(dir, "v.json"))
	if m["label"] != "vllm" || m["backend"] != "openai" || m["completed"] != 4.0 {
		t.Errorf("label %v backend %v completed %v", m["label"], m["backend"], m["completed"])
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "v.json"))
	for _, want := range []string{`"request_rate": 50.0`, `"burstiness": 2.0`} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("result JSON lacks %s", want)
		}
	}
	html, err := os.ReadFile(filepath.Join(dir, "v_timeline.html"))
	if err != nil || strings.Count(string(html), `<g class="req`) != 4 || !strings.Contains(string(html), "ITL ≥ 2 ms") {
		t.Errorf("timeline: %v\n%.300s", err, html)
	}
	if n := strings.Count(stderr, "accepted with no effect"); n != 1 || !strings.Contains(stderr, "--trust-remote-code") {
		t.Errorf("notes: %q", stderr)
	}
	for _, args := range [][]string{{"--use-beam-search"}, {"--lora-modules", "a", "b"}, {"--dataset-name", "hf"}, {"--extra-body", "[1]"},
		{"--min-p", "2"}, {"--timeline-itl-thresholds", "5"}, {"--profile"}} {
		_, stderr, code := run(t, append([]string{"serve-bench", "--backend", "openai", "--base-url", hs.URL}, args...)...)
		if code != 2 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want one line and exit 2", args, code, stderr)
		}
	}
}

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestServeBenchNonStreaming: serve-bench --non-streaming against a TGI server that
// answers whole after 20 ms: the requests go to /generate (not /generate_stream), the
// block prints TTFT, TPOT and ITL as n/a with one line saying why, E2EL is at least
// the delay, the saved JSON has null TTFT and the server's token counts; a goodput SLO
// on ttft is refused in one line (exit 2), one on e2el is accepted.
func TestServeBenchNonStreaming(t *testing.T) {
	const delay = 20 * time.Millisecond
	var mu sync.Mutex
	paths := map[string]int{}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		mu.Lock()
		paths[r.URL.Path]++
		mu.Unlock()
		var body struct {
			Parameters struct {
				MaxNewTokens int `json:"max_new_tokens"`
			}
		}
		json.Unmarshal(raw, &body)
		time.Sleep(delay)
		fmt.Fprintf(w, `{"generated_text":" a b","details":{"finish_reason":"length","generated_tokens":%d}}`, body.Parameters.MaxNewTokens)
	}))
	t.Cleanup(hs.Close)
	dir := t.TempDir()
	args := []string{"serve-bench", "--backend", "tgi", "--base-url", hs.URL, "--dataset-name", "random", "--num-prompts", "6",
		"--random-input-len", "8", "--random-output-len", "5", "--random-range-ratio", "0", "--max-concurrency", "2", "--non-streaming"}
	out, stderr, code := run(t, append(args, "--goodput", "e2el:60000", "--percentile-metrics", "ttft,tpot,itl,e2el",
		"--save-result", "--result-dir", dir, "--result-filename", "ns.json")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	mu.Lock()
	if paths["/generate"] < 6 || paths["/generate_stream"] != 0 {
		t.Errorf("requests by path %v: want /generate only", paths)
	}
	mu.Unlock()
	for _, want := range []string{"Mean TTFT (ms):                          n/a", "P99 TPOT (ms):                           n/a",
		"Mean ITL (ms):                           n/a", "TTFT, TPOT, ITL: n/a (--non-streaming", "Successful requests:                     6 ",
		"Total generated tokens:                  30 ", "Request goodput (req/s):"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	m := readJSON(t, filepath.Join(dir, "ns.json"))
	if v, ok := m["mean_ttft_ms"]; !ok || v != nil {
		t.Errorf("mean_ttft_ms %v (present %v): want null", v, ok)
	}
	if e, _ := m["median_e2el_ms"].(float64); e < float64(delay)/1e6 || m["non_streaming"] != true || m["total_output_tokens"] != 30.0 {
		t.Errorf("median E2EL %v ms (want ≥ %v), non_streaming %v, tokens %v", m["median_e2el_ms"], delay, m["non_streaming"], m["total_output_tokens"])
	}
	if spec, _ := m["spec"].(map[string]any); spec["non_streaming"] != true || spec["endpoint"] != "/generate" {
		t.Errorf("spec non_streaming %v endpoint %v", spec["non_streaming"], spec["endpoint"])
	}
	_, stderr, code = run(t, append(args, "--goodput", "ttft:100")...)
	if code != 2 || !strings.Contains(stderr, "goodput ttft") || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
		t.Errorf("goodput ttft under --non-streaming: exit %d, stderr %q", code, stderr)
	}
}

// TestServeBenchInprocNonStreaming: the in-process backend under --non-streaming
// delivers whole answers: TTFT rows n/a, E2EL measured, every token counted
// (--ignore-eos: 4 prompts × 8 tokens), E2EL reported by default, and the note says the engine's wait counts in
// E2EL.
func TestServeBenchInprocNonStreaming(t *testing.T) {
	out, stderr, code := run(t, "serve-bench", "--backend", "inproc", "--num-prompts", "4", "--random-input-len", "16",
		"--random-output-len", "8", "--random-range-ratio", "0", "--ignore-eos", "--max-concurrency", "2", "--non-streaming")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"Mean TTFT (ms):                          n/a", "Total generated tokens:                  32 ",
		"TTFT, TPOT, ITL: n/a (--non-streaming", "counts in E2EL (--non-streaming)"} {
		if !strings.Contains(out+stderr, want) {
			t.Errorf("output lacks %q:\n%s\n%s", want, out, stderr)
		}
	}
	// e2el is reported by default under --non-streaming (vLLM's default list lacks it)
	if m := regexp.MustCompile(`Mean E2EL \(ms\):\s+([0-9.]+)`).FindStringSubmatch(out); m == nil || m[1] == "0.00" {
		t.Errorf("E2EL not reported or 0:\n%s", out)
	}
}

package main

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// sseServer is a loopback OpenAI completions server: a few tokens 2 ms apart, or 500s
// when failing is set.
func sseServer(t *testing.T, failEvery int) *httptest.Server {
	n := 0
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			fmt.Fprint(w, `{"data":[{"id":"loop-model","root":"loop-model"}]}`)
			return
		}
		n++
		if failEvery > 0 && n%failEvery == 0 {
			http.Error(w, "boom", 500)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range 5 {
			time.Sleep(2 * time.Millisecond)
			fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"text\":\" w%d\"}]}\n\n", i)
			w.(http.Flusher).Flush()
		}
		fmt.Fprint(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":5}}\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(hs.Close)
	return hs
}

func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestServeBenchInprocBuiltin(t *testing.T) {
	dir := t.TempDir()
	out, stderr, code := run(t, "serve-bench", "--backend", "inproc", "--num-prompts", "6", "--random-input-len", "16",
		"--random-output-len", "8", "--max-concurrency", "2", "--save-result", "--result-dir", dir, "--result-filename", "r.json",
		"--metadata", "run=ci", "note=x", "--percentile-metrics", "ttft,tpot,itl,e2el", "--metric-percentiles", "50,99")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"============ Serving Benchmark Result ============\n", "Successful requests:                     6         \n",
		"Maximum request concurrency:             2         \n", "P99 E2EL (ms):", "---------------Time to First Token----------------\n",
		"\n==================================================\n", "llmbench additions"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	m := readJSON(t, filepath.Join(dir, "r.json"))
	for _, k := range []string{"completed", "request_throughput", "mean_ttft_ms", "p50_tpot_ms", "max_concurrent_requests", "metric_definitions"} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
	if m["run"] != "ci" || m["note"] != "x" || m["model_id"] != "stories260K" {
		t.Errorf("metadata/model: %v %v %v", m["run"], m["note"], m["model_id"])
	}
}

func TestServeBenchOpenAIFailuresSweepCompare(t *testing.T) {
	hs := sseServer(t, 4)
	dir := t.TempDir()
	t.Setenv("OPENAI_API_KEY", "sk-secret-do-not-save")
	out, stderr, code := run(t, "serve-bench", "--backend", "openai", "--base-url", hs.URL, "--dataset-name", "random",
		"--num-prompts", "12", "--random-input-len", "8", "--random-output-len", "5", "--max-concurrency", "1,4",
		"--save-result", "--save-detailed", "--result-dir", dir, "--result-filename", "s.json", "--header", "X-Test=1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.Count(out, "Serving Benchmark Result") != 2 || !strings.Contains(out, "Failed requests:                         3         \n") ||
		!strings.Contains(out, "Error 0: HTTP 500: boom") {
		t.Errorf("stdout:\n%s", out)
	}
	// One sweep row per point.
	if !strings.Contains(out, "\n1           inf") || !strings.Contains(out, "\n4           inf") {
		t.Errorf("no sweep rows:\n%s", out)
	}
	a, b := filepath.Join(dir, "s-c1-rinf.json"), filepath.Join(dir, "s-c4-rinf.json")
	for _, p := range []string{a, b} {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(raw), "sk-secret") {
			t.Errorf("%s contains the API key", p)
		}
		if m := readJSON(t, p); m["model_id"] != "loop-model" || m["failed"] != 3.0 {
			t.Errorf("%s: model %v failed %v", p, m["model_id"], m["failed"])
		}
	}
	cmp, stderr, code := run(t, "serve-bench", "--compare", a, b)
	if code != 0 || !strings.Contains(cmp, "| mean_ttft_ms") || !strings.Contains(cmp, "% difference") ||
		!(strings.Contains(cmp, "within noise") || strings.Contains(cmp, "significant")) {
		t.Errorf("compare exit %d %s:\n%s", code, stderr, cmp)
	}
}

// TestServeBenchCtrlC: an interrupt prints and saves what was measured, marked partial.
func TestServeBenchCtrlC(t *testing.T) {
	hs := sseServer(t, 0)
	dir := t.TempDir()
	cmd := exec.Command(binPath, "serve-bench", "--backend", "openai", "--base-url", hs.URL, "--model", "m", "--num-prompts", "2000",
		"--request-rate", "50", "--random-input-len", "8", "--random-output-len", "5", "--save-result", "--result-dir", dir, "--result-filename", "p.json")
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Errorf("exit: %v (stderr %s)", err, errb.String())
	}
	if !strings.Contains(out.String(), "Serving Benchmark Result") || !strings.Contains(out.String(), "PARTIAL") {
		t.Errorf("stdout:\n%s", out.String())
	}
	m := readJSON(t, filepath.Join(dir, "p.json"))
	if m["partial"] != true || m["completed"].(float64) < 10 {
		t.Errorf("partial %v completed %v", m["partial"], m["completed"])
	}
}

// TestServeBenchInprocPrefixCache runs a prefix_repetition workload one request at a
// time, so that exactly the first request of each prefix misses, with and without the
// prefix cache, and checks the hit rate printed and saved (the engine's counters over
// the run) and the KV cache fields.
func TestServeBenchInprocPrefixCache(t *testing.T) {
	dir := t.TempDir()
	args := []string{"serve-bench", "--backend", "inproc", "-t", "2", "--dataset-name", "prefix_repetition", "--prefix-repetition-prefix-len", "64",
		"--prefix-repetition-suffix-len", "8", "--prefix-repetition-num-prefixes", "2", "--prefix-repetition-output-len", "4",
		"--num-prompts", "8", "--max-concurrency", "1", "--max-num-seqs", "4", "--save-result", "--result-dir", dir}
	out, stderr, code := run(t, append(args, "--result-filename", "on.json")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// 6 of 8 requests find their 64-token prefix: 384 of 8×72 prompt tokens.
	for _, want := range []string{"Prefix cache hit rate (%):               66.67", "Prefix cache hits/queries (tokens):      384/576", "KV cache type:                           f16"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(stderr, "KV cache: f16, ") {
		t.Errorf("stderr does not describe the KV cache pool:\n%s", stderr)
	}
	m := readJSON(t, filepath.Join(dir, "on.json"))
	eng, _ := m["engine"].(map[string]any)
	if rate, _ := m["prefix_cache_hit_rate"].(float64); math.Abs(rate-200.0/3) > 1e-9 || eng["prefix_cache_hits"] != 384.0 ||
		eng["prefix_cache_queries"] != 576.0 || eng["kv_cache_type"] != "f16" || eng["prefix_cache"] != true {
		t.Errorf("JSON: hit rate %v, engine %v", m["prefix_cache_hit_rate"], eng)
	}
	out, stderr, code = run(t, append(args, "--result-filename", "off.json", "--no-prefix-cache", "--kv-cache-type", "f32", "--block-size", "8")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "Prefix cache:                            off") || strings.Contains(out, "hit rate") {
		t.Errorf("stdout with --no-prefix-cache:\n%s", out)
	}
	m = readJSON(t, filepath.Join(dir, "off.json"))
	eng, _ = m["engine"].(map[string]any)
	if _, ok := m["prefix_cache_hit_rate"]; ok || eng["prefix_cache"] != false || eng["kv_cache_type"] != "f32" || eng["kv_cache_block_size"] != 8.0 {
		t.Errorf("JSON without the prefix cache: hit rate %v, engine %v", m["prefix_cache_hit_rate"], eng)
	}
}

func TestServeBenchUsage(t *testing.T) {
	for _, args := range [][]string{{"serve-bench", "--backend", "nope"}, {"serve-bench", "--max-concurrency", "0"},
		{"serve-bench", "--compare", "onlyone.json"}, {"serve-bench", "--goodput", "ttft"},
		{"serve-bench", "--backend", "inproc", "--kv-cache-type", "q4_0"}, {"serve-bench", "--backend", "inproc", "--kv-cache-memory", "lots"},
		{"serve-bench", "--backend", "inproc", "--kv-cache-memory", "150%"}, {"serve-bench", "--backend", "openai", "--no-prefix-cache"},
		{"serve-bench", "--backend", "openai", "--model-draft", "spec-tiny-draft"},
		{"serve-bench", "--backend", "inproc", "--model-draft", "spec-tiny-draft", "--draft-min", "5", "--draft-max", "2"},
		{"serve-bench", "--backend", "inproc", "--model-draft", "no-such-draft"}} {
		if _, _, code := run(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}

// TestServeBenchAppendResultReadyCheck: --append-result adds one JSON object per run on
// its own line (vLLM's layout) and --compare reads the last; the ready check sends a
// first request before the run, and --ready-check-timeout-sec 0 skips it.
func TestServeBenchAppendResultReadyCheck(t *testing.T) {
	hs := sseServer(t, 0)
	dir := t.TempDir()
	args := []string{"serve-bench", "--backend", "openai", "--base-url", hs.URL, "--model", "m", "--num-prompts", "3",
		"--random-input-len", "8", "--random-output-len", "5", "--save-result", "--append-result", "--result-dir", dir, "--result-filename", "a.json"}
	out, stderr, code := run(t, args...)
	if code != 0 || !strings.Contains(out, "Starting initial single prompt test run...\nInitial test run completed.\n") {
		t.Fatalf("exit %d %s:\n%s", code, stderr, out)
	}
	out, stderr, code = run(t, append(args, "--ready-check-timeout-sec", "0", "--num-prompts", "4")...)
	if code != 0 || !strings.Contains(out, "Skipping endpoint ready check.") {
		t.Fatalf("exit %d %s:\n%s", code, stderr, out)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "a.json"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(raw), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines, want one JSON object per run", len(lines))
	}
	for i, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil || m["completed"] != float64(3+i) {
			t.Errorf("line %d: %v, completed %v", i, err, m["completed"])
		}
	}
	cmp, stderr, code := run(t, "serve-bench", "--compare", filepath.Join(dir, "a.json"), filepath.Join(dir, "a.json"))
	if code != 0 || !strings.Contains(cmp, "mean_ttft_ms") {
		t.Errorf("compare exit %d %s:\n%s", code, stderr, cmp)
	}
}

package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// blockCount reads an integer row of the vLLM block ("Successful requests:  57").
func blockCount(t *testing.T, out, label string) int {
	t.Helper()
	m := regexp.MustCompile(regexp.QuoteMeta(label) + `\s+(\d+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no %q row in:\n%s", label, out)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// storedServing reads the first serving point of the only run kept under home.
func storedServing(t *testing.T, home string) map[string]any {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(home, "runs", "*", "result.json"))
	if len(paths) != 1 {
		t.Fatalf("want one stored run under %s, got %v", home, paths)
	}
	m := readJSON(t, paths[0])
	pts, _ := m["serving"].([]any)
	if len(pts) == 0 {
		t.Fatalf("stored run has no serving point: %v", m)
	}
	return pts[0].(map[string]any)
}

// TestRegressInprocTimeoutIsFailure: an in-process request that passes
// --request-timeout is a failed request with reason timeout, never silently dropped
// as interrupted: successful + failed = the 60 requests sent, in the console block,
// the JSON and the store. (The base commit printed "Successful 8, Failed 0" and
// exited 0 with 52 requests gone.)
func TestRegressInprocTimeoutIsFailure(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	out, stderr, code := runEnv(t, []string{"LLMBENCH_HOME=" + home}, "serve-bench", "--backend", "inproc", "--num-prompts", "60",
		"--max-num-seqs", "1", "--request-timeout", "0.15", "--dataset-name", "random", "--random-input-len", "16",
		"--random-output-len", "64", "--disable-tqdm", "--save-result", "--result-dir", dir, "--result-filename", "t.json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	ok, failed := blockCount(t, out, "Successful requests:"), blockCount(t, out, "Failed requests:")
	if failed == 0 || ok+failed != 60 {
		t.Errorf("console: successful %d + failed %d, want failed > 0 and a sum of 60:\n%s", ok, failed, out)
	}
	if !strings.Contains(out, "timeout") {
		t.Errorf("console names no timeout reason:\n%s", out)
	}
	m := readJSON(t, filepath.Join(dir, "t.json"))
	reasons, _ := m["failure_reasons"].(map[string]any)
	if c, f := m["completed"].(float64), m["failed"].(float64); f == 0 || c+f != 60 || m["interrupted_requests"] != 0.0 || reasons["timeout"] != f {
		t.Errorf("JSON: completed %v failed %v interrupted %v reasons %v", c, f, m["interrupted_requests"], reasons)
	}
	st := storedServing(t, home)
	recs, _ := st["Records"].([]any)
	if len(recs) != 60 || st["Interrupted"] != 0.0 {
		t.Errorf("store: %d records, %v interrupted; want 60 and 0", len(recs), st["Interrupted"])
	}
}

// TestRegressDefaultTemperatureCLI: serve-bench sends temperature 0 when none is
// given (as vllm bench serve), on the HTTP backends and inproc alike, and the result
// says which temperature the run used.
func TestRegressDefaultTemperatureCLI(t *testing.T) {
	var mu sync.Mutex
	var temps []any
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b map[string]any
		json.NewDecoder(r.Body).Decode(&b)
		v, ok := b["temperature"]
		if !ok {
			v = "absent"
		}
		mu.Lock()
		temps = append(temps, v)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"text\":\" a\"}]}\n\ndata: {\"choices\":[],\"usage\":{\"completion_tokens\":1}}\n\ndata: [DONE]\n\n")
	}))
	defer hs.Close()
	dir := t.TempDir()
	out, stderr, code := run(t, "serve-bench", "--backend", "openai", "--base-url", hs.URL, "--model", "m", "--num-prompts", "3",
		"--random-input-len", "8", "--random-output-len", "4", "--ready-check-timeout-sec", "0", "--disable-tqdm",
		"--save-result", "--result-dir", dir, "--result-filename", "o.json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	mu.Lock()
	for i, v := range temps {
		if v != 0.0 {
			t.Errorf("request %d sent temperature %v, want 0", i, v)
		}
	}
	mu.Unlock()
	if !strings.Contains(out, "Sampling temperature:") {
		t.Errorf("console does not state the temperature:\n%s", out)
	}
	if m := readJSON(t, filepath.Join(dir, "o.json")); m["temperature"] != 0.0 {
		t.Errorf("openai JSON temperature %v, want 0", m["temperature"])
	}
	_, stderr, code = run(t, "serve-bench", "--backend", "inproc", "--num-prompts", "2", "--random-input-len", "8", "--random-output-len", "4",
		"--disable-tqdm", "--save-result", "--result-dir", dir, "--result-filename", "i.json")
	if code != 0 {
		t.Fatalf("inproc exit %d: %s", code, stderr)
	}
	if m := readJSON(t, filepath.Join(dir, "i.json")); m["temperature"] != 0.0 {
		t.Errorf("inproc JSON temperature %v, want 0", m["temperature"])
	}
}

// TestRegressConnectTimeReported: connection set-up is measured apart from TTFT;
// --warm-connections opens up to --max-concurrency keep-alive connections before the
// clock starts, so no request of the run opens one, and the result says so.
func TestRegressConnectTimeReported(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			fmt.Fprint(w, "ok")
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range 3 {
			time.Sleep(5 * time.Millisecond)
			fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"text\":\" w%d\"}]}\n\n", i)
			w.(http.Flusher).Flush()
		}
		fmt.Fprint(w, "data: {\"choices\":[],\"usage\":{\"completion_tokens\":3}}\n\ndata: [DONE]\n\n")
	}))
	defer hs.Close()
	dir := t.TempDir()
	args := []string{"serve-bench", "--backend", "openai", "--base-url", hs.URL, "--model", "m", "--num-prompts", "16",
		"--random-input-len", "8", "--random-output-len", "3", "--max-concurrency", "8", "--ready-check-timeout-sec", "0",
		"--disable-tqdm", "--save-result", "--result-dir", dir}
	_, stderr, code := run(t, append(args, "--result-filename", "cold.json")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	cold := readJSON(t, filepath.Join(dir, "cold.json"))
	if n, _ := cold["new_connections"].(float64); n < 1 || n > 16 || !(cold["mean_connect_ms"].(float64) > 0) || cold["warm_connections"] != 0.0 {
		t.Errorf("cold run: new_connections %v, mean_connect_ms %v, warm_connections %v", cold["new_connections"], cold["mean_connect_ms"], cold["warm_connections"])
	}
	out, stderr, code := run(t, append(args, "--result-filename", "warm.json", "--warm-connections")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	warm := readJSON(t, filepath.Join(dir, "warm.json"))
	if warm["new_connections"] != 0.0 || warm["warm_connections"] != 8.0 {
		t.Errorf("warm run: new_connections %v, warm_connections %v; want 0 and 8", warm["new_connections"], warm["warm_connections"])
	}
	if !strings.Contains(out, "Warm connections") {
		t.Errorf("console does not state the warm connections:\n%s", out)
	}
}

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"llmbench/engine"
	"llmbench/kernels"
	"llmbench/workloads"
	"llmbench/workloads/jobs"
)

// startServe starts `llmbench serve` on a free loopback port and returns its base URL;
// the server is interrupted (SIGINT) at cleanup, and must then exit cleanly.
func startServe(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(binPath, append([]string{"serve", "--port", "0"}, args...)...)
	pr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var log strings.Builder
	addr := make(chan string, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			ln := sc.Text()
			mu.Lock()
			log.WriteString(ln + "\n")
			mu.Unlock()
			if rest, ok := strings.CutPrefix(ln, "listening on "); ok {
				addr <- strings.Fields(rest)[0]
			}
		}
		io.Copy(io.Discard, pr)
	}()
	stderr := func() string { mu.Lock(); defer mu.Unlock(); return log.String() }
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGINT)
		werr := make(chan error, 1)
		go func() { <-done; werr <- cmd.Wait() }()
		select {
		case err := <-werr:
			if err != nil || !strings.Contains(stderr(), "shutting down") {
				t.Errorf("serve after SIGINT: %v\n%s", err, stderr())
			}
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			t.Errorf("serve did not stop on SIGINT:\n%s", stderr())
		}
	})
	select {
	case a := <-addr:
		if !strings.HasPrefix(a, "http://127.0.0.1:") {
			t.Fatalf("listening on %s, want loopback by default", a)
		}
		if !strings.Contains(stderr(), "chat template: plain (no tokenizer.chat_template") {
			t.Errorf("startup does not say which chat template:\n%s", stderr())
		}
		if !strings.Contains(stderr(), " waiting (") || !strings.Contains(stderr(), "; 429 beyond)") {
			t.Errorf("startup does not state the queue bound:\n%s", stderr())
		}
		if !strings.Contains(stderr(), "KV cache: ") || !strings.Contains(stderr(), " blocks of ") {
			t.Errorf("startup does not describe the KV cache pool:\n%s", stderr())
		}
		return a
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("serve never listened:\n%s", stderr())
	}
	return ""
}

// TestServeEndToEnd runs our own load generator against `llmbench serve` on the
// built-in model over loopback, as a user would.
func TestServeEndToEnd(t *testing.T) {
	base := startServe(t, "-t", "2", "--api-key", "k1")
	r, err := http.Get(base + "/health")
	if err != nil || r.StatusCode != 200 {
		t.Fatalf("/health: %v %v", r, err)
	}
	r.Body.Close()
	cmd := exec.Command(binPath, "serve-bench", "--backend", "openai", "--base-url", base, "--num-prompts", "8",
		"--random-input-len", "16", "--random-output-len", "8",
		"--ready-check-timeout-sec", "0") // no ready-check request: /metrics then counts exactly what the report served
	cmd.Env = append(os.Environ(), "OPENAI_API_KEY=k1")
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("serve-bench: %v\n%s\n%s", err, out, stderr)
	}
	for _, want := range []string{"============ Serving Benchmark Result ============\n", "Successful requests:                     8         \n",
		"Mean TTFT (ms):", "Output token throughput (tok/s):"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("serve-bench output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "Failed requests") && !strings.Contains(string(out), "Failed requests:                         0") {
		t.Errorf("failed requests:\n%s", out)
	}
	// The engine's paged KV cache and prefix cache show on /metrics.
	r, err = http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(r.Body)
	r.Body.Close()
	checkVLLMMetrics(t, b, "stories260K", 8, outputTokens(t, string(out)))
	for _, name := range []string{"llmbench_kv_cache_blocks_total", "llmbench_prefix_cache_queries_total"} {
		if v := metricValue(string(b), name); v <= 0 {
			t.Errorf("/metrics %s = %v, want > 0:\n%s", name, v, b)
		}
	}
}

// metricValue returns the value of the first sample of name in a Prometheus text page
// (-1 when absent).
func metricValue(page, name string) float64 {
	for _, ln := range strings.Split(page, "\n") {
		if rest, ok := strings.CutPrefix(ln, name+"{"); ok {
			if _, v, ok := strings.Cut(rest, "} "); ok {
				f, err := strconv.ParseFloat(v, 64)
				if err == nil {
					return f
				}
			}
		}
	}
	return -1
}

// TestEngineOptions checks how the engine flags of serve and serve-bench inproc turn
// into engine options, and their errors.
func TestEngineOptions(t *testing.T) {
	good := []struct {
		es   workloads.EngineSpec
		want engine.Options
	}{
		{workloads.EngineSpec{}, engine.Options{}},
		{workloads.EngineSpec{MaxNumSeqs: 8, MaxNumBatchedTokens: 256, BlockSize: 32, KVCacheMemory: "512MiB", KVCacheType: "q8_0", NoPrefixCache: true},
			engine.Options{MaxNumSeqs: 8, MaxNumBatchedTokens: 256, BlockSize: 32, KVCacheMemory: 512 << 20, KVType: kernels.Q8_0, KVTypeSet: true, NoPrefixCache: true}},
		{workloads.EngineSpec{KVCacheMemory: "30%", KVCacheType: "F32"}, engine.Options{KVCacheFraction: 0.3, KVType: kernels.F32, KVTypeSet: true}},
		{workloads.EngineSpec{KVCacheMemory: "2GB", KVCacheType: "f16"}, engine.Options{KVCacheMemory: 2e9, KVType: kernels.F16, KVTypeSet: true}},
		{workloads.EngineSpec{Draft: "d.gguf", DraftMax: 24, DraftMin: 1, DraftPMin: 0.6}, engine.Options{DraftMax: 24, DraftMin: 1, DraftPMin: 0.6}}, // the draft is set by jobs.SetDraft
	}
	for _, c := range good {
		got, err := jobs.EngineOptions(c.es)
		if err != nil || got != c.want {
			t.Errorf("%+v: %+v, %v; want %+v", c.es, got, err, c.want)
		}
	}
	for _, es := range []workloads.EngineSpec{{KVCacheMemory: "0%"}, {KVCacheMemory: "101%"}, {KVCacheMemory: "x"}, {KVCacheType: "q4_0"},
		{KVCacheType: "nope"}, {MaxNumSeqs: -1}, {BlockSize: -2}, {MaxNumBatchedTokens: -3},
		{DraftMax: -1}, {DraftMin: -1}, {DraftMin: 5, DraftMax: 2}, {DraftPMin: 1.5}} {
		if _, err := jobs.EngineOptions(es); err == nil {
			t.Errorf("%+v: no error", es)
		}
	}
}

// TestServeQueue sends more concurrent requests than the engine runs plus the old
// fixed queue (16 + 64) to `llmbench serve` with its defaults: every one completes,
// none is refused. Then, with --max-queue 1 and one slot, two requests whose bodies
// trickle hold both places and a third gets 429 with OpenAI's error object.
func TestServeQueue(t *testing.T) {
	const clients = 240
	base := startServe(t, "-t", "2", "--quiet")
	var wg sync.WaitGroup
	codes := make(chan int, clients)
	hc := &http.Client{Timeout: 60 * time.Second}
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := fmt.Sprintf(`{"prompt":"Once upon a time %d","max_tokens":2,"temperature":0}`, i)
			r, err := hc.Post(base+"/v1/completions", "application/json", strings.NewReader(body))
			if err != nil {
				t.Error(err)
				codes <- 0
				return
			}
			io.Copy(io.Discard, r.Body)
			r.Body.Close()
			codes <- r.StatusCode
		}()
	}
	wg.Wait()
	close(codes)
	n := map[int]int{}
	for c := range codes {
		n[c]++
	}
	if n[200] != clients {
		t.Errorf("%d concurrent requests: status counts %v, want all 200", clients, n)
	}
	// The acceptance run: vLLM's client at 512 concurrent requests, 2,048
	// prompts, short outputs (about 4 s here on the built-in model).
	if !testing.Short() {
		out, err := exec.Command(binPath, "serve-bench", "--backend", "openai", "--base-url", base, "--max-concurrency", "512",
			"--num-prompts", "2048", "--random-input-len", "16", "--random-output-len", "8", "--ready-check-timeout-sec", "0").CombinedOutput()
		if err != nil || !strings.Contains(string(out), "Successful requests:                     2048 ") ||
			(strings.Contains(string(out), "Failed requests") && !strings.Contains(string(out), "Failed requests:                         0 ")) {
			t.Errorf("serve-bench --max-concurrency 512 --num-prompts 2048: %v\n%s", err, out)
		}
	}

	// An explicit small bound: one running, one waiting.
	base = startServe(t, "-t", "2", "--quiet", "--max-num-seqs", "1", "--max-queue", "1")
	host := strings.TrimPrefix(base, "http://")
	for range 2 {
		c, err := net.DialTimeout("tcp", host, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "POST /v1/completions HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"prompt\":", host)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		r, err := http.Get(base + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(r.Body)
		r.Body.Close()
		if metricValue(string(b), "llmbench_num_requests_waiting") == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the two trickling requests never held their places:\n%s", b)
		}
	}
	r, err := hc.Post(base+"/v1/completions", "application/json", strings.NewReader(`{"prompt":"hi","max_tokens":1}`))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	var e struct {
		Error *struct {
			Message string  `json:"message"`
			Type    string  `json:"type"`
			Param   *string `json:"param"`
			Code    string  `json:"code"`
		} `json:"error"`
	}
	if err := json.NewDecoder(r.Body).Decode(&e); err != nil {
		t.Fatal(err)
	}
	if r.StatusCode != http.StatusTooManyRequests || e.Error == nil || e.Error.Type != "rate_limit_error" || e.Error.Code != "queue_full" || e.Error.Message == "" {
		t.Errorf("beyond --max-queue 1: %d %+v, want 429 with an OpenAI error object", r.StatusCode, e.Error)
	}
}

// outputTokens reads "Total generated tokens:" from serve-bench's report.
func outputTokens(t *testing.T, report string) float64 {
	t.Helper()
	for _, ln := range strings.Split(report, "\n") {
		if rest, ok := strings.CutPrefix(ln, "Total generated tokens:"); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			if err != nil {
				t.Fatalf("%q: %v", ln, err)
			}
			return v
		}
	}
	t.Fatalf("no generated tokens in the report:\n%s", report)
	return 0
}

// checkVLLMMetrics parses a /metrics page with Prometheus' own parser and checks that
// every vLLM metric is there with its type and labels, and that the counts agree with
// what was served: requests finished and tokens generated.
func checkVLLMMetrics(t *testing.T, page []byte, modelName string, requests int, tokens float64) {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(page))
	if err != nil {
		t.Fatalf("/metrics does not parse: %v\n%s", err, page)
	}
	want := map[string]dto.MetricType{
		"vllm:num_requests_running": dto.MetricType_GAUGE, "vllm:num_requests_waiting": dto.MetricType_GAUGE, "vllm:kv_cache_usage_perc": dto.MetricType_GAUGE,
		"vllm:prompt_tokens_total": dto.MetricType_COUNTER, "vllm:generation_tokens_total": dto.MetricType_COUNTER,
		"vllm:request_success_total": dto.MetricType_COUNTER, "vllm:prefix_cache_queries_total": dto.MetricType_COUNTER,
		"vllm:prefix_cache_hits_total": dto.MetricType_COUNTER, "vllm:num_preemptions_total": dto.MetricType_COUNTER,
		"vllm:time_to_first_token_seconds": dto.MetricType_HISTOGRAM, "vllm:inter_token_latency_seconds": dto.MetricType_HISTOGRAM,
		"vllm:e2e_request_latency_seconds": dto.MetricType_HISTOGRAM, "vllm:request_queue_time_seconds": dto.MetricType_HISTOGRAM,
		"vllm:request_prefill_time_seconds": dto.MetricType_HISTOGRAM, "vllm:request_decode_time_seconds": dto.MetricType_HISTOGRAM,
	}
	for name, typ := range want {
		f := fams[name]
		if f == nil {
			t.Errorf("/metrics lacks %s", name)
			continue
		}
		if f.GetType() != typ {
			t.Errorf("%s: type %v, want %v", name, f.GetType(), typ)
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			wantLabels := 1
			if name == "vllm:request_success_total" {
				wantLabels = 2
				if labels["finished_reason"] == "" {
					t.Errorf("%s without finished_reason: %v", name, labels)
				}
			}
			if labels["model_name"] != modelName || len(labels) != wantLabels {
				t.Errorf("%s: labels %v, want model_name=%q", name, labels, modelName)
			}
		}
	}
	if t.Failed() {
		return
	}
	one := func(name string) *dto.Metric { return fams[name].GetMetric()[0] }
	if got := one("vllm:generation_tokens_total").GetCounter().GetValue(); got != tokens {
		t.Errorf("vllm:generation_tokens_total = %v, want the %v tokens served", got, tokens)
	}
	if got := one("vllm:prompt_tokens_total").GetCounter().GetValue(); got <= 0 {
		t.Errorf("vllm:prompt_tokens_total = %v", got)
	}
	var done float64
	for _, m := range fams["vllm:request_success_total"].GetMetric() {
		done += m.GetCounter().GetValue()
	}
	if done != float64(requests) {
		t.Errorf("vllm:request_success_total sums to %v, want %d", done, requests)
	}
	for _, name := range []string{"vllm:time_to_first_token_seconds", "vllm:e2e_request_latency_seconds", "vllm:request_queue_time_seconds",
		"vllm:request_prefill_time_seconds", "vllm:request_decode_time_seconds"} {
		if h := one(name).GetHistogram(); h.GetSampleCount() != uint64(requests) {
			t.Errorf("%s: %d observations, want %d", name, h.GetSampleCount(), requests)
		}
	}
	// Every request's tokens after its first have a gap before them.
	if got := one("vllm:inter_token_latency_seconds").GetHistogram().GetSampleCount(); float64(got) != tokens-float64(requests) {
		t.Errorf("vllm:inter_token_latency_seconds: %d observations, want %v", got, tokens-float64(requests))
	}
	if got := one("vllm:kv_cache_usage_perc").GetGauge().GetValue(); got < 0 || got > 1 {
		t.Errorf("vllm:kv_cache_usage_perc = %v, want a fraction", got)
	}
}

// TestServeOpenAINode runs the official OpenAI Node client (npm openai, which .ci/run
// installs under tools/openai-node) against `llmbench serve` on loopback: models,
// completions and chat, streamed and not, n, logprobs, an array prompt, include_usage,
// and the typed errors of a bad model, a bad body and an oversized body.
func TestServeOpenAINode(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the OpenAI Node client check is skipped")
	}
	if _, err := os.Stat("tools/openai-node/node_modules/openai/package.json"); err != nil {
		t.Skip("npm openai is not installed (npm install --prefix tools/openai-node --no-save --no-package-lock openai@5, as .ci/run does): the OpenAI Node client check is skipped")
	}
	base := startServe(t, "-t", "2", "--quiet", "--max-body", "65536")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, node, "tools/openai-node/check.mjs", base, "stories260K").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "all ok") {
		t.Fatalf("OpenAI Node client: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}

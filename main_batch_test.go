package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"llmbench/workloads/store"
)

// batchArgs is a quick TGI benchmark on the built-in model.
var batchArgs = []string{"batch", "--sequence-length", "8", "--decode-length", "3", "--batch-size", "1,2", "-b", "4", "--runs", "2", "--warmups", "0", "-t", "1", "--device", "none"}

// TestBatchCommand: `llmbench batch` prints TGI's tables, keeps the run in the
// store, exports it (md, csv, json), replays it with `run store:ID`, merges two runs'
// JSON exports into one report of two labelled sections, and refuses bad flags
// (the sampling options the sampler lacks included) with one line.
func TestBatchCommand(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	env := []string{"LLMBENCH_HOME=" + home}
	md, csv, js := filepath.Join(dir, "b.md"), filepath.Join(dir, "b.csv"), filepath.Join(dir, "b.json")
	out, stderr, code := runEnv(t, env, append(batchArgs, "--export", md+","+csv+","+js)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"| Step           | Batch Size | Average ", "| Decode (total) | 1 ", "|                | 4 ",
		"| Step    | Batch Size | Average ", "tokens/secs", "| Decode Length      | 3           |", "# CPU - 1 threads"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(stderr, "batch: [") {
		t.Errorf("no progress on stderr:\n%s", stderr)
	}
	if b, err := os.ReadFile(md); err != nil || !strings.Contains(string(b), "| Prefill        | 1 ") {
		t.Errorf("md export: %v\n%s", err, b)
	}
	if b, err := os.ReadFile(csv); err != nil || strings.Count(string(b), "\n") != 1+5*3 {
		t.Errorf("csv export: %v\n%s", err, b)
	}
	if b, err := os.ReadFile(js); err != nil || !json.Valid(b) || !strings.Contains(string(b), `"kind": "batch"`) {
		t.Errorf("json export: %v", err)
	}
	_, list := storedRuns(t, home, 1)
	if list[0].Kind != "batch" || list[0].Status != store.Done {
		t.Fatalf("store: %+v", list[0])
	}
	if out, stderr, code := runEnv(t, env, "run", "--headless", "store:"+list[0].ID); code != 0 || !strings.Contains(out, "| Decode (token) | 1 ") {
		t.Errorf("run store:%s: exit %d\n%s\n%s", list[0].ID, code, out, stderr)
	}
	js2 := filepath.Join(dir, "b2.json")
	if _, stderr, code := runEnv(t, env, "batch", "-s", "8", "-d", "3", "-b", "2", "-r", "2", "-w", "0", "-t", "2", "--label", "Tensor Parallel (TP) - 2 GPUs", "--device", "none", "--export", js2); code != 0 {
		t.Fatalf("second run: exit %d: %s", code, stderr)
	}
	out, stderr, code = runEnv(t, env, "batch", "--merge", js, js2)
	if code != 0 || strings.Count(out, "| Sequence Length") != 1 || strings.Count(out, "| Threads ") != 2 || !strings.Contains(out, "\n# CPU - 1 threads\n") ||
		!strings.Contains(out, "\n# Tensor Parallel (TP) - 2 GPUs\n") || strings.Count(out, "| Step           |") != 2 {
		t.Errorf("--merge: exit %d\n%s\n%s", code, out, stderr)
	}
	for _, bad := range [][]string{{"batch", "--typical-p", "0.9"}, {"batch", "--watermark"}, {"batch", "-d", "1"}, {"batch", "-b", "0"},
		{"batch", "-m", "synth:llama-tiny"}, {"batch", "--temperature", "x"}, {"batch", "--merge"}, {"batch", "--device", "fake", "--power-limit", "300"}} {
		if _, stderr, code := runEnv(t, env, bad...); code != 2 || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line", bad, code, stderr)
		}
	}
}

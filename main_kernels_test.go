package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"llmbench/workloads/store"
)

// kernelsArgs is a quick attention-masks run.
var kernelsArgs = []string{"kernels", "--cases", "causal,document", "--seq-len", "128", "--heads", "1", "--head-dim", "16",
	"--block-size", "32", "--documents", "3", "-r", "1", "-t", "2"}

// TestKernelsCommand: `llmbench kernels` prints attention-gym's sections, keeps the
// run in the store, exports it, replays it with `run store:ID`, fails a --check whose
// masks did not run, and refuses bad flags with one line.
func TestKernelsCommand(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	env := []string{"LLMBENCH_HOME=" + home}
	md, js := filepath.Join(dir, "k.md"), filepath.Join(dir, "k.json")
	out, stderr, code := runEnv(t, env, append(kernelsArgs, "--export", md+","+js)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"║", "Causal Mask", "Document Masking Causal Mask", "Correctness check passed ✅",
		"| Operation    | FW Time (ms) | FW FLOPS (TF/s) | BW Time (ms) | BW FLOPS (TF/s) |", "| block-sparse |",
		"BlockMask(shape=(1, 1, 128, 128), sparsity=", "FW = 4·B·H·Sq·Skv·D·density"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(stderr, "kernels: [") {
		t.Errorf("no progress on stderr:\n%s", stderr)
	}
	if b, err := os.ReadFile(md); err != nil || !strings.Contains(string(b), "## Causal Mask") {
		t.Errorf("md export: %v\n%s", err, b)
	}
	if b, err := os.ReadFile(js); err != nil || !json.Valid(b) || !strings.Contains(string(b), `"kind": "kernels"`) {
		t.Errorf("json export: %v", err)
	}
	_, list := storedRuns(t, home, 1)
	if list[0].Kind != "kernels" || list[0].Status != store.Done {
		t.Fatalf("store: %+v", list[0])
	}
	if out, stderr, code := runEnv(t, env, "run", "--headless", "store:"+list[0].ID); code != 0 || strings.Count(out, "Correctness check passed ✅") != 2 {
		t.Errorf("run store:%s: exit %d\n%s\n%s", list[0].ID, code, out, stderr)
	}
	if _, stderr, code := runEnv(t, env, append(kernelsArgs[:1:1], "--cases", "causal", "--seq-len", "64", "--heads", "1", "--head-dim", "8", "--block-size", "16", "-r", "1", "--check")...); code != 1 || !strings.Contains(stderr, "acceptance check failed") {
		t.Errorf("--check without its masks: exit %d\n%s", code, stderr)
	}
	if out, stderr, code := runEnv(t, env, "kernels", "--suite", "paged-attention", "--cases", "decode-small", "-r", "1"); code != 0 ||
		!strings.Contains(out, "Paged Attention") || !strings.Contains(out, "decode-small | decode") {
		t.Errorf("paged-attention: exit %d\n%s\n%s", code, out, stderr)
	}
	for _, bad := range [][]string{{"kernels", "--suite", "flash"}, {"kernels", "--cases", "diagonal"}, {"kernels", "--heads", "-1"}, {"kernels", "--suite", "paged-attention", "--cases", "decode-huge"}, {"kernels", "--device", "fake", "--power-limit", "300"}} {
		if _, stderr, code := runEnv(t, env, bad...); code != 2 || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line", bad, code, stderr)
		}
	}
}

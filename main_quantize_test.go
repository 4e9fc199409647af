package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestModelQuantize: `model synth` writes a BF16 synthetic model, `model quantize`
// turns it into Q8_0 (llama-quantize's argument order), and the result is a Q8_0 model
// that generates; a wrong argument count prints the usage and fails.
func TestModelQuantize(t *testing.T) {
	dir := t.TempDir()
	bf := filepath.Join(dir, "bf16.gguf")
	if _, stderr, code := run(t, "model", "synth", "--shape", "llama-tiny", "--type", "BF16", "-o", bf); code != 0 {
		t.Fatalf("synth: exit %d: %s", code, stderr)
	}
	q8 := filepath.Join(dir, "q8.gguf")
	out, stderr, code := run(t, "model", "quantize", bf, q8, "q8_0")
	if code != 0 || strings.TrimSpace(out) != q8 {
		t.Fatalf("quantize: exit %d\nstdout %q\nstderr %q", code, out, stderr)
	}
	out, stderr, code = run(t, "model", "info", q8)
	if code != 0 || !strings.Contains(out, "file type:     Q8_0") || !strings.Contains(out, "type mix:      Q8_0 ×") {
		t.Fatalf("info: exit %d: %s\n%s", code, out, stderr)
	}
	out, stderr, code = run(t, "generate", "-m", q8, "-p", "Once upon a time", "-n", "2", "-t", "2")
	if code != 0 || !strings.Contains(stderr, "generation:    2 tokens") {
		t.Errorf("generate: exit %d\nstdout %q\nstderr %q", code, out, stderr)
	}
	if _, _, code := run(t, "model", "quantize", bf, q8); code == 0 {
		t.Error("quantize without a type succeeded")
	}
}

// TestThroughputCommand: `llmbench throughput` on the built-in model with a cache
// shorter than input + output prints JetStream's table saying the rolling window was
// used and every request finished; a missing dataset is a usage error.
func TestThroughputCommand(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "sharegpt.json")
	conv := `{"conversations":[{"from":"human","value":"once upon a time there was a little dog who liked to run in the park"},{"from":"gpt","value":"ok"}]}`
	if err := os.WriteFile(data, []byte("["+conv+","+conv+","+conv+"]"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := run(t, "throughput", "--model", "builtin:stories260K", "--dataset-path", data, "--num-prompts", "3",
		"--batch-size", "2", "--max-cache-length", "24", "--max-input-length", "8", "--max-output-length", "32", "-t", "1", "--data-dir", dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	for _, want := range []string{"| throughput (token/s)", "| f32 / f16 | 2 | 24 | 8 | 32 | ", "used: last 24 positions (cache 24 < 8 + 32)", "3 of 3 finished"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if _, stderr, code := run(t, "throughput", "--data-dir", dir); code != 2 || !strings.Contains(stderr, "--dataset-path") {
		t.Errorf("no dataset: exit %d, %s", code, stderr)
	}
}

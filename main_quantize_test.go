package main

import (
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

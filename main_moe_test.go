package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestModelInfoQwen3MoE writes the small synthetic qwen3moe (about 55 MiB), checks what
// model info prints of its experts (81,729,280 parameters, of which 2 blocks × 3 expert
// tensors × 256·256·8 × 6/8 unused per token: 79,369,984 active), that it generates,
// and that the synth plan lists the full-size Qwen3-30B-A3B shape at llama.cpp's 30.53 B
// parameters without writing it.
func TestModelInfoQwen3MoE(t *testing.T) {
	path := filepath.Join(t.TempDir(), "qwen3moe-tiny.gguf")
	if _, stderr, code := run(t, "model", "synth", "--shape", "qwen3moe-tiny", "--type", "Q4_0", "-o", path); code != 0 {
		t.Fatalf("synth: exit %d: %s", code, stderr)
	}
	out, stderr, code := run(t, "model", "info", path)
	if code != 0 {
		t.Fatalf("info: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"architecture:  qwen3moe", "parameters:    81,729,280 (81.73 M)",
		"experts:       8, 2 per token, feed-forward 256 each (79.37 M parameters active per token)"} {
		if !strings.Contains(out, want) {
			t.Errorf("model info lacks %q:\n%s", want, out)
		}
	}
	if _, stderr, code = run(t, "generate", "-m", path, "-p", "Once upon a time", "-n", "4", "-t", "2"); code != 0 || !strings.Contains(stderr, "generation:    4 tokens") {
		t.Errorf("generate: exit %d: %s", code, stderr)
	}
	out, stderr, code = run(t, "model", "synth", "--list")
	if code != 0 || !strings.Contains(out, "qwen3moe-30b-a3b   30.53 B parameters") {
		t.Errorf("synth --list: exit %d: %s%s", code, out, stderr)
	}
}

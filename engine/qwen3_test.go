package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"llmbench/engine/synth"
)

// qwen3Mini is a small synthetic qwen3 (per-head q/k norms, head size 64 with 4×64 ≠
// 128, tied output, byte-level BPE vocabulary) that writes in well under a second.
var qwen3Mini = synth.Shape{Name: "test-qwen3", Description: "test", Arch: "qwen3",
	Vocab: 1024, Embd: 128, Layers: 2, Heads: 4, HeadsKV: 2, FF: 256, HeadDim: 64,
	Context: 1024, RopeBase: 1e6, RMSEps: 1e-6, Tied: true, QKNorm: true, Tok: synth.VocabQwen2}

// TestQwen3GreedyMatchesLlamaCpp generates 32 greedy tokens from "Once upon a time" on
// qwen3Mini (Q8_0, seed 7) and compares the continuation with what llama.cpp generated
// from the same file (testdata/greedy-qwen3-mini.txt; how it was made is in
// testdata/README-qwen3.md). LLMBENCH_QWEN3_OUT=DIR also writes the model there, to
// remake the reference.
func TestQwen3GreedyMatchesLlamaCpp(t *testing.T) {
	want, err := os.ReadFile("testdata/greedy-qwen3-mini.txt")
	if err != nil {
		t.Fatal(err)
	}
	path := writeSynth(t, "Q8_0", 7, qwen3Mini)
	if dir := os.Getenv("LLMBENCH_QWEN3_OUT"); dir != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "qwen3-mini-Q8_0.gguf"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e, err := Load(context.Background(), path, Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var b strings.Builder
	st, err := e.Generate(context.Background(), Request{Tokens: e.Tok.Encode("Once upon a time", true, true), MaxTokens: 32, IgnoreEOS: true}, func(tok Token) error {
		b.WriteString(tok.Text)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if st.GenTokens != 32 {
		t.Errorf("generated %d tokens, want 32", st.GenTokens)
	}
	if got := b.String(); got != string(want) {
		t.Errorf("greedy text differs from llama.cpp\n got: %q\nwant: %q", got, want)
	}
}

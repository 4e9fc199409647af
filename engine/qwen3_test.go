package engine

import (
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
	greedyMatchesLlamaCpp(t, qwen3Mini, "Q8_0", 7, "testdata/greedy-qwen3-mini.txt", "LLMBENCH_QWEN3_OUT", "qwen3-mini-Q8_0.gguf")
}

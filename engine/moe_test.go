package engine

import (
	"context"
	"testing"

	"llmbench/engine/synth"
)

// qwen3moeMini is a small synthetic qwen3moe (8 experts of 64, 2 per token, qwen3's
// attention with head size 64, untied output, byte-level BPE vocabulary) that writes in
// well under a second.
var qwen3moeMini = synth.Shape{Name: "test-qwen3moe", Description: "test", Arch: "qwen3moe",
	Vocab: 1024, Embd: 128, Layers: 2, Heads: 4, HeadsKV: 2, FF: 384, HeadDim: 64,
	Experts: 8, ExpertsUsed: 2, ExpertFF: 64,
	Context: 1024, RopeBase: 1e6, RMSEps: 1e-6, QKNorm: true, Tok: synth.VocabQwen2}

// TestMoELoads loads qwen3moeMini as the engine does (every expert's matrix handed to
// the backend's Preparer) and checks the model it built: 8 experts of 64 per block, 2
// used, each expert a view of its share of the 3-D tensor.
func TestMoELoads(t *testing.T) {
	e, err := Load(context.Background(), writeSynth(t, "Q4_0", 3, qwen3moeMini), Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	m := e.Model
	if m.Experts != 8 || m.ExpertsUsed != 2 || m.ExpertFF != 64 || len(m.Blocks[1].GateExps) != 8 || m.Blocks[0].Gate != nil {
		t.Fatalf("experts %d used %d of %d, block 1 has %d gate experts", m.Experts, m.ExpertsUsed, m.ExpertFF, len(m.Blocks[1].GateExps))
	}
	ti, _ := e.File.Tensor("blk.1.ffn_down_exps.weight")
	whole := e.File.TensorData(ti)
	d := m.Blocks[1].DownExps
	if d[7].Rows != 128 || d[7].Cols != 64 || len(d[7].Data)*8 != len(whole) || &d[7].Data[len(d[7].Data)-1] != &whole[len(whole)-1] {
		t.Fatalf("expert 7's down projection is not the last eighth of the tensor in place")
	}
	if n := len(m.Matrices()); n != 2*(4+1+3*8)+1 {
		t.Errorf("%d matrices to prepare, want %d", n, 2*(4+1+3*8)+1)
	}
}

// TestQwen3MoEGreedyMatchesLlamaCpp generates 32 greedy tokens from "Once upon a time"
// on qwen3moeMini (Q8_0, seed 7) and compares the continuation with what llama.cpp
// generated from the same file (testdata/greedy-qwen3moe-mini.txt; how it was made is
// in testdata/README-qwen3.md). LLMBENCH_QWEN3MOE_OUT=DIR also writes the model there.
func TestQwen3MoEGreedyMatchesLlamaCpp(t *testing.T) {
	greedyMatchesLlamaCpp(t, qwen3moeMini, "Q8_0", 7, "testdata/greedy-qwen3moe-mini.txt", "LLMBENCH_QWEN3MOE_OUT", "qwen3moe-mini-Q8_0.gguf")
}

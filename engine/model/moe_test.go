package model

import (
	"math"
	"testing"

	"llmbench/kernels"
	"llmbench/kernels/cpu"
)

// TestRoute checks one token's routing against hand-made logits: the k largest
// probabilities, most likely first (the lower index on a tie), renormalised to sum to
// one.
func TestRoute(t *testing.T) {
	logits := []float32{0.5, 2, -1, 2, 1}
	probs := make([]float64, len(logits))
	sel, w := make([]int32, 3), make([]float32, 3)
	route(logits, probs, sel, w)
	if sel[0] != 1 || sel[1] != 3 || sel[2] != 4 {
		t.Fatalf("chose %v, want [1 3 4]", sel)
	}
	e2, e1 := math.Exp(2), math.Exp(1)
	want := []float64{e2 / (2*e2 + e1), e2 / (2*e2 + e1), e1 / (2*e2 + e1)}
	for i := range w {
		if math.Abs(float64(w[i])-want[i]) > 1e-6 {
			t.Errorf("weight %d = %v, want %v", i, w[i], want[i])
		}
	}
}

// TestMoEBatchInvariant runs sequences of a small qwen3moe together, a decode step
// and prompt chunks of different lengths in one ForwardBatch (so an expert's rows come
// from several sequences, and its row count differs from the solo runs'), and checks
// each sequence's logits are bit-identical to its pass alone: grouping tokens by expert
// must not change any token's sum. Then a steady batched decode step allocates nothing.
// The same for a small gpt-oss (sinks, the window of its even layers, biases and the
// clamped SwiGLU in the batched path; its sequences pass the window of 3).
func TestMoEBatchInvariant(t *testing.T) {
	for _, arch := range []string{"qwen3moe", "gpt-oss"} {
		t.Run(arch, func(t *testing.T) { testMoEBatchInvariant(t, arch) })
	}
}

func testMoEBatchInvariant(t *testing.T, arch string) {
	m, err := FromGGUF(writeTiny(t, arch, 11))
	if err != nil {
		t.Fatal(err)
	}
	be := cpu.New(2)
	defer be.Close()
	prompts := [][]int32{{3, 9, 27, 1}, {5, 5, 12, 30, 2, 8}, {39}, {14, 22}}
	parts := []Seq{
		{Tokens: []int32{7}, Logits: true},
		{Tokens: []int32{11, 12, 13, 14, 15}, Logits: true},
		{Tokens: []int32{0, 38, 2}, Logits: true},
		{Tokens: []int32{21}, Logits: true},
	}
	caches := func() []*Cache {
		st := m.NewState(16)
		cs := make([]*Cache, len(prompts))
		for i, p := range prompts {
			if cs[i], err = m.NewCache(32, kernels.F32); err != nil {
				t.Fatal(err)
			}
			if _, err := m.Forward(be, st, cs[i], p, 0, false); err != nil {
				t.Fatal(err)
			}
		}
		return cs
	}
	solo, batched := caches(), caches()
	st := m.NewState(16)
	var want [][]float32
	for i, p := range parts {
		out, err := m.Forward(be, st, solo[i], p.Tokens, len(prompts[i]), false)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, append([]float32(nil), out...))
	}
	seqs := append([]Seq(nil), parts...)
	for i := range seqs {
		seqs[i].Cache, seqs[i].Start = batched[i], len(prompts[i])
	}
	got, err := m.ForwardBatch(be, st, seqs)
	if err != nil {
		t.Fatal(err)
	}
	for r, w := range want {
		for j := range w {
			if g := got[r*m.Vocab+j]; math.Float32bits(g) != math.Float32bits(w[j]) {
				t.Fatalf("sequence %d logit %d: batched %v, alone %v", r, j, g, w[j])
			}
		}
	}
	// Steady decode steps of all four, one token each.
	for i := range seqs {
		seqs[i].Start += len(seqs[i].Tokens)
		seqs[i].Tokens = seqs[i].Tokens[:1]
	}
	step := func() {
		if _, err := m.ForwardBatch(be, st, seqs); err != nil {
			t.Fatal(err)
		}
	}
	step()
	if allocs := testing.AllocsPerRun(20, step); allocs != 0 {
		t.Errorf("%v allocations per batched MoE decode step, want 0", allocs)
	}
}

// TestMoELoadErrors checks the one-line errors of a qwen3moe file whose metadata or
// expert tensors do not fit.
func TestMoELoadErrors(t *testing.T) {
	f := writeTiny(t, "qwen3moe", 1)
	ti, _ := f.Tensor("blk.1.ffn_up_exps.weight")
	ti.Shape = []uint64{ti.Shape[0], ti.Shape[1] * ti.Shape[2]}
	if _, err := FromGGUF(f); err == nil || err.Error() != `model: tensor "blk.1.ffn_up_exps.weight" has shape [32 192], want [32 24 8]` {
		t.Errorf("2-D expert tensor: %v", err)
	}
}

// BenchmarkMoEDecodeStep times one decode step of the small F32 qwen3moe (top-2 of 8
// experts) at position 16: routing, grouping and two experts' products per block.
func BenchmarkMoEDecodeStep(b *testing.B) {
	m, err := FromGGUF(writeTiny(b, "qwen3moe", 11))
	if err != nil {
		b.Fatal(err)
	}
	be := cpu.New(2)
	defer be.Close()
	st := m.NewState(16)
	cache, err := m.NewCache(64, kernels.F16)
	if err != nil {
		b.Fatal(err)
	}
	prompt := make([]int32, 16)
	for i := range prompt {
		prompt[i] = int32(i)
	}
	if _, err := m.Forward(be, st, cache, prompt, 0, false); err != nil {
		b.Fatal(err)
	}
	tok := []int32{7}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Forward(be, st, cache, tok, 16, false); err != nil {
			b.Fatal(err)
		}
	}
}

// TestGptOSSLoadErrors checks the one-line errors of a gpt-oss file whose sinks or
// expert biases do not fit its shape, and YaRN without an original context.
func TestGptOSSLoadErrors(t *testing.T) {
	f := writeTiny(t, "gpt-oss", 1)
	ti, _ := f.Tensor("blk.1.attn_sinks.weight")
	ti.Shape = []uint64{3}
	if _, err := FromGGUF(f); err == nil || err.Error() != `model: tensor "blk.1.attn_sinks.weight" has 3 elements, want 4` {
		t.Errorf("3 sinks for 4 heads: %v", err)
	}
	f = writeTiny(t, "gpt-oss", 1)
	ti, _ = f.Tensor("blk.0.ffn_down_exps.bias")
	ti.Shape = []uint64{ti.Shape[0], ti.Shape[1] - 1}
	if _, err := FromGGUF(f); err == nil || err.Error() != `model: tensor "blk.0.ffn_down_exps.bias" has 224 elements, want 256` {
		t.Errorf("7 down biases for 8 experts: %v", err)
	}
	f = writeTiny(t, "gpt-oss", 1)
	for i := range f.KV {
		if f.KV[i].Key == "gpt-oss.rope.scaling.original_context_length" {
			f.KV[i].Value.V = uint32(0)
		}
	}
	if _, err := FromGGUF(f); err == nil || err.Error() != "model: YaRN scaling over an original context of 0 positions" {
		t.Errorf("YaRN over an original context of 0: %v", err)
	}
}

package micro

import (
	"bytes"
	"context"
	"testing"

	"llmbench/engine/gguf"
	"llmbench/engine/synth"
)

// TestWeightBytesPerTokenCountsActiveExperts writes a small qwen3moe in F32 (so every
// tensor's bytes are 4 per weight) and checks the bytes a token reads against the
// shape's arithmetic: attention, norms, router and output whole, 2 of the 8 experts'
// gate, up and down projections, no token_embd (untied).
func TestWeightBytesPerTokenCountsActiveExperts(t *testing.T) {
	const vocab, embd, layers, q, kv, hd, experts, used, eff = 1024, 128, 2, 256, 128, 64, 8, 2, 64
	sh := synth.Shape{Name: "test-qwen3moe", Description: "test", Arch: "qwen3moe",
		Vocab: vocab, Embd: embd, Layers: layers, Heads: q / hd, HeadsKV: kv / hd, FF: 384, HeadDim: hd,
		Experts: experts, ExpertsUsed: used, ExpertFF: eff,
		Context: 1024, RopeBase: 1e6, RMSEps: 1e-6, QKNorm: true, Tok: synth.VocabQwen2}
	ft, err := synth.ParseFileType("F32")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := synth.Write(context.Background(), &buf, synth.Spec{Shape: sh, Type: ft}, nil); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	perLayer := embd*q + 2*embd*kv + q*embd + 2*embd + 2*hd + // attention, its norms
		embd*experts + // router
		used*3*embd*eff // the experts a token takes
	want := uint64(4 * (layers*perLayer + embd + vocab*embd)) // + output_norm, output
	if got := WeightBytesPerToken(f); got != want {
		t.Errorf("WeightBytesPerToken = %d, want %d (all experts would be %d more)", got, want, 4*layers*(experts-used)*3*embd*eff)
	}
}

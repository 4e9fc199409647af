package engine

import (
	"context"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"llmbench/engine/gguf"
	"llmbench/engine/synth"
	"llmbench/kernels"
)

// gptossMini is a small synthetic gpt-oss (8 experts of 64, 2 per token, 4 heads of 64
// over 2 KV heads, a window of 8 on the even blocks so that 32 generated tokens pass
// it, YaRN ×32 over 4096 positions as the real model, untied output, byte-level BPE
// vocabulary) that writes in well under a second.
var gptossMini = synth.Shape{Name: "test-gpt-oss", Description: "test", Arch: "gpt-oss",
	Vocab: 1024, Embd: 128, Layers: 2, Heads: 4, HeadsKV: 2, FF: 64, HeadDim: 64,
	Experts: 8, ExpertsUsed: 2, ExpertFF: 64, SlidingWindow: 8, YaRNFactor: 32, YaRNContext: 4096,
	Context: 131072, RopeBase: 150000, RMSEps: 1e-5, QKVBias: true, Tok: synth.VocabQwen2}

// TestGptOSSLoads loads gptossMini as the engine does and checks what it built: the
// window on the even blocks only (no rolling cache: the odd blocks see everything),
// sinks and biases in every block, 8 experts of 64 with their biases.
func TestGptOSSLoads(t *testing.T) {
	e, err := Load(context.Background(), writeSynth(t, "Q8_0", 3, gptossMini), Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	m := e.Model
	if m.LayerWindow != 8 || m.SlidingWindow != 0 || m.Experts != 8 || m.ExpertsUsed != 2 || m.AttnScale == 0 {
		t.Fatalf("layer window %d, sliding window %d, %d experts, %d used, attention scale %g", m.LayerWindow, m.SlidingWindow, m.Experts, m.ExpertsUsed, m.AttnScale)
	}
	for i, b := range m.Blocks {
		if len(b.Sinks) != 4 || len(b.OBias) != 128 || len(b.RouterBias) != 8 || len(b.DownExpsBias) != 8 || len(b.GateExpsBias[7]) != 64 {
			t.Fatalf("block %d: %d sinks, o bias %d, router bias %d, %d down biases", i, len(b.Sinks), len(b.OBias), len(b.RouterBias), len(b.DownExpsBias))
		}
	}
}

// TestGptOSSGreedyMatchesLlamaCpp generates 32 greedy tokens from "Once upon a time"
// on gptossMini (Q8_0, seed 11) and compares the continuation with what llama.cpp
// generated from the same file (testdata/greedy-gpt-oss-mini.txt; how it was made is in
// testdata/README-qwen3.md). LLMBENCH_GPTOSS_OUT=DIR also writes the model there.
func TestGptOSSGreedyMatchesLlamaCpp(t *testing.T) {
	greedyMatchesLlamaCpp(t, gptossMini, "Q8_0", 11, "testdata/greedy-gpt-oss-mini.txt", "LLMBENCH_GPTOSS_OUT", "gpt-oss-mini-Q8_0.gguf")
}

// TestGptOSSSharpGreedyMatchesLlamaCpp is TestGptOSSGreedyMatchesLlamaCpp on an F32
// gptossMini (seed 11) whose query and key projections are scaled ×5 and expert gate
// and up projections ×20 (sharpen), so that attention is far from uniform (the scores'
// scale, and so YaRN's magnitude correction, decide the text) and the SwiGLU clamp at
// ±7 acts; the synthetic scale (std 0.02) tests neither. Dropping the sinks, YaRN's
// magnitude, the gate's clamp or the down projections' biases each changes our text;
// dropping YaRN's frequency change does not (within 40 positions it moves few angles
// much): the float64 reference in engine/model checks that.
// Reference: testdata/greedy-gpt-oss-sharp.txt (README-qwen3.md).
func TestGptOSSSharpGreedyMatchesLlamaCpp(t *testing.T) {
	path := sharpen(t, writeSynth(t, "F32", 11, gptossMini), sharpScales, nil)
	greedyFileMatchesLlamaCpp(t, path, "testdata/greedy-gpt-oss-sharp.txt", "LLMBENCH_GPTOSS_OUT", "gpt-oss-sharp-F32.gguf")
}

// sharpScales are the factors of TestGptOSSSharpGreedyMatchesLlamaCpp.
var sharpScales = map[string]float32{"attn_q.weight": 5, "attn_k.weight": 5, "ffn_gate_exps.weight": 20, "ffn_up_exps.weight": 20}

// TestGptOSSMXFP4GreedyMatchesLlamaCpp is the sharpened model with its three expert
// tensors in MXFP4, as gpt-oss's real files hold them (the rest F32): the experts'
// MXFP4 matrix products inside the routed FFN, checked against llama.cpp's text
// (testdata/greedy-gpt-oss-mxfp4.txt, README-qwen3.md).
func TestGptOSSMXFP4GreedyMatchesLlamaCpp(t *testing.T) {
	path := sharpen(t, writeSynth(t, "F32", 11, gptossMini), sharpScales, map[string]kernels.DType{
		"ffn_gate_exps.weight": kernels.MXFP4, "ffn_up_exps.weight": kernels.MXFP4, "ffn_down_exps.weight": kernels.MXFP4})
	greedyFileMatchesLlamaCpp(t, path, "testdata/greedy-gpt-oss-mxfp4.txt", "LLMBENCH_GPTOSS_OUT", "gpt-oss-sharp-MXFP4.gguf")
}

// sharpen copies the F32 model at src with the tensors whose names end in a key of
// scale multiplied by its value and those ending in a key of to converted to its
// type, and returns the copy's path.
func sharpen(t *testing.T, src string, scale map[string]float32, to map[string]kernels.DType) string {
	t.Helper()
	f, err := gguf.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	path := filepath.Join(t.TempDir(), "sharp.gguf")
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	w := gguf.NewWriter(out)
	for _, kv := range f.KV {
		w.AddKV(kv.Key, kv.Value)
	}
	typeOf := func(name string, typ kernels.DType) kernels.DType {
		for suffix, to := range to {
			if strings.HasSuffix(name, suffix) {
				return to
			}
		}
		return typ
	}
	for _, ti := range f.Tensors {
		w.AddTensor(ti.Name, typeOf(ti.Name, ti.Type), ti.Shape...)
	}
	if err := w.WriteHeader(); err != nil {
		t.Fatal(err)
	}
	for i := range f.Tensors {
		ti := &f.Tensors[i]
		data := append([]byte(nil), f.TensorData(ti)...)
		for suffix, k := range scale {
			if !strings.HasSuffix(ti.Name, suffix) {
				continue
			}
			if ti.Type != kernels.F32 {
				t.Fatalf("%s is %s, not F32", ti.Name, ti.Type)
			}
			for j := 0; j < len(data); j += 4 {
				v := math.Float32frombits(binary.LittleEndian.Uint32(data[j:]))
				binary.LittleEndian.PutUint32(data[j:], math.Float32bits(v*k))
			}
		}
		if typ := typeOf(ti.Name, ti.Type); typ != ti.Type {
			if ti.Type != kernels.F32 {
				t.Fatalf("%s is %s, not F32", ti.Name, ti.Type)
			}
			vals := make([]float32, len(data)/4)
			for j := range vals {
				vals[j] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*j:]))
			}
			tr := kernels.TraitsOf(typ)
			data = make([]byte, len(vals)/tr.BlockSize*tr.BlockBytes)
			tr.FromFloat(vals, data)
		}
		tw, err := w.BeginTensor(ti.Name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

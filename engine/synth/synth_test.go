package synth

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"llmbench/engine/gguf"
	"llmbench/engine/tokenizer"
	"llmbench/kernels"
)

// Small shapes that exercise every code path (SPM and both BPE vocabularies, biases,
// tied embeddings, an explicit head size, rows that K types cannot hold) in a few MB.
var (
	miniLlama = Shape{Name: "test-llama", Description: "test", Arch: "llama",
		Vocab: 512, Embd: 256, Layers: 4, Heads: 4, HeadsKV: 2, FF: 512,
		Context: 512, RopeBase: 10000, RMSEps: 1e-5, Tok: VocabSPM}
	miniQwen = Shape{Name: "test-qwen", Description: "test", Arch: "qwen2",
		Vocab: 1024, Embd: 128, Layers: 3, Heads: 4, HeadsKV: 2, FF: 256,
		Context: 1024, RopeBase: 1e6, RMSEps: 1e-6, Tied: true, QKVBias: true, Tok: VocabQwen2}
	miniQwen3 = Shape{Name: "test-qwen3", Description: "test", Arch: "qwen3",
		Vocab: 1024, Embd: 128, Layers: 2, Heads: 4, HeadsKV: 2, FF: 256, HeadDim: 64,
		Context: 1024, RopeBase: 1e6, RMSEps: 1e-6, Tied: true, QKNorm: true, Tok: VocabQwen2}
	miniQwen3MoE = Shape{Name: "test-qwen3moe", Description: "test", Arch: "qwen3moe",
		Vocab: 1024, Embd: 128, Layers: 2, Heads: 4, HeadsKV: 2, FF: 384, HeadDim: 64,
		Experts: 8, ExpertsUsed: 2, ExpertFF: 64,
		Context: 1024, RopeBase: 1e6, RMSEps: 1e-6, QKNorm: true, Tok: VocabQwen2}
	miniLlama3 = Shape{Name: "test-llama3", Description: "test", Arch: "llama",
		Vocab: 1024, Embd: 192, Layers: 2, Heads: 4, HeadsKV: 1, FF: 256, HeadDim: 64,
		Context: 8192, RopeBase: 5e5, RMSEps: 1e-5, Tok: VocabLlama3}
)

func TestParams(t *testing.T) {
	tests := []struct {
		shape  string
		lo, hi float64 // billions
	}{
		{"llama-tiny", 0.0150, 0.0155},
		{"llama-small", 0.109, 0.110},
		{"llama-1b", 1.095, 1.105},
		{"llama-7b", 6.73, 6.75},
		{"llama-8b", 8.02, 8.04},
		{"qwen2-0.5b", 0.49, 0.50}, // tied: 0.63 B if the embedding were counted twice
		{"qwen2-7b", 7.60, 7.63},
		{"qwen3-tiny", 0.0408, 0.0410}, // the tied 151936×256 embedding is 38.9 M of it
		{"qwen3-0.6b", 0.595, 0.597},   // 0.44 B besides the embedding, as Qwen's card says
		{"qwen3moe-tiny", 0.0817, 0.0818},
		{"qwen3moe-30b-a3b", 30.525, 30.535}, // llama-bench: "qwen3moe 30B.A3B … 30.53 B"
		{"gpt-oss-tiny", 0.1065, 0.1066},     // the untied 201088×256 embedding and output are 103 M
		{"gpt-oss-20b", 20.91, 20.92},        // OpenAI's card: 21 B
		{"gpt-oss-120b", 116.825, 116.835},   // llama-bench: "gpt-oss 120B … 116.83 B"
		{"mistral-nemo-12b", 12.2, 12.3},
		{"llama-13b", 13.01, 13.02},
		{"llama-70b", 68.97, 68.98},
		{"spec-tiny", 0.00180, 0.00181},
		{"spec-tiny-draft", 0.00073, 0.00074},
		{"spec-base", 0.0818, 0.0819},
		{"spec-base-draft", 0.0125, 0.0126},
	}
	for _, tt := range tests {
		t.Run(tt.shape, func(t *testing.T) {
			spec, err := NewSpec(tt.shape, "Q4_K_M", 0)
			if err != nil {
				t.Fatal(err)
			}
			if err := spec.Shape.Validate(); err != nil {
				t.Fatal(err)
			}
			b := float64(spec.Params()) / 1e9
			if b < tt.lo || b > tt.hi {
				t.Fatalf("%s has %.4f B parameters, want %.3f–%.3f", tt.shape, b, tt.lo, tt.hi)
			}
			size, err := spec.FileSize()
			if err != nil {
				t.Fatal(err)
			}
			// Q4_K_M averages roughly 4.5–5.5 bits per weight (more where a Q8_0
			// tied embedding dominates a small model, or the Q6_K output head a draft
			// of one block).
			bpw := float64(size) * 8 / float64(spec.Params())
			if bpw < 4.5 || bpw > 6.5 && !spec.Shape.Tied && spec.Shape.DraftOf == "" {
				t.Errorf("%s Q4_K_M: %.2f bits per weight", tt.shape, bpw)
			}
		})
	}
	if len(Shapes()) != len(tests) {
		t.Errorf("Shapes() = %v; test covers %d", Shapes(), len(tests))
	}
}

// TestFullSizeLlama2 checks the full-size Llama 2 shapes against what llama-bench
// prints for the real models: the exact parameter count (its params column is
// n/1e9 with two decimals: "13.02 B", "68.98 B") and the weight bytes of published
// rows ("llama 13B Q4_K - M | 7.33 GiB", "llama 70B Q4_0 | 36.20 GiB"; size is
// the tensors' bytes over 2^30), all from the shape table, without writing a file.
func TestFullSizeLlama2(t *testing.T) {
	for _, c := range []struct {
		shape, typ string
		params     int64
		printed    string
		gib        string
	}{
		// 2·32000·5120 (embedding, output) + 5120 + 40·(4·5120² + 3·5120·13824 + 2·5120)
		{"llama-13b", "Q4_K_M", 13015864320, "13.02", "7.33"},
		// 2·32000·8192 + 8192 + 80·(2·8192² + 2·8192·1024 + 3·8192·28672 + 2·8192)
		{"llama-70b", "Q4_0", 68976648192, "68.98", "36.20"},
	} {
		spec, err := NewSpec(c.shape, c.typ, 0)
		if err != nil {
			t.Fatal(err)
		}
		n := spec.Params()
		if n != c.params || fmt.Sprintf("%.2f", float64(n)/1e9) != c.printed {
			t.Errorf("%s: %d parameters (%.2f B), want %d (%s B)", c.shape, n, float64(n)/1e9, c.params, c.printed)
		}
		var bytes int64
		for _, ts := range spec.Tensors() {
			bytes += ts.Bytes()
		}
		if got := fmt.Sprintf("%.2f", float64(bytes)/(1<<30)); got != c.gib {
			t.Errorf("%s %s: %s GiB of weights, llama-bench prints %s GiB", c.shape, c.typ, got, c.gib)
		}
	}
}

func TestLookupAndParse(t *testing.T) {
	if s, err := Lookup("LLAMA-1B"); err != nil || s.Name != "llama-1b" {
		t.Fatalf("Lookup(LLAMA-1B) = %v, %v", s.Name, err)
	}
	if _, err := Lookup("gpt-5"); err == nil || !strings.Contains(err.Error(), "llama-1b") {
		t.Fatalf("Lookup(gpt-5) error %v should list the known shapes", err)
	}
	for in, want := range map[string]uint32{"q4_k_m": 15, "Q4_K": 15, "q4_0": 2, "F16": 1, "bf16": 32, "Q6_K": 18, "Q8_0": 7, "Q5_K": 17, "Q3_K_M": 12, "Q2_K": 10, "F32": 0, "Q5_1": 9} {
		ft, err := ParseFileType(in)
		if err != nil || ft.ID != want {
			t.Errorf("ParseFileType(%q) = %v (%d), %v; want id %d", in, ft, ft.ID, err, want)
		}
	}
	if got := FileTypeName(15); got != "Q4_K_M" {
		t.Errorf("FileTypeName(15) = %q", got)
	}
	if got := FileTypeName(99); got != "unknown (99)" {
		t.Errorf("FileTypeName(99) = %q", got)
	}
	for _, bad := range []string{"", "Q4", "IQ2_XXS", "q4_k_x"} {
		if _, err := ParseFileType(bad); err == nil {
			t.Errorf("ParseFileType(%q): want an error", bad)
		}
	}
	if _, err := NewSpec("llama-1b", "Q9_9", 0); err == nil {
		t.Error("NewSpec with a bad type: want an error")
	}
	bad := miniLlama
	bad.HeadsKV = 3
	if bad.Validate() == nil {
		t.Error("heads not a multiple of KV heads: want an error")
	}
	bad = miniLlama
	bad.Vocab = 10
	if _, err := (Spec{Shape: bad, Type: mustType(t, "F16")}).FileSize(); err == nil {
		t.Error("tiny vocabulary: want an error")
	}
}

func mustType(t testing.TB, s string) FileType {
	t.Helper()
	ft, err := ParseFileType(s)
	if err != nil {
		t.Fatal(err)
	}
	return ft
}

// typeMap returns tensor name → type for a spec.
func typeMap(s Spec) map[string]kernels.DType {
	m := map[string]kernels.DType{}
	for _, t := range s.Tensors() {
		m[t.Name] = t.Type
	}
	return m
}

// TestTypeSelectionMatchesLlamaCpp compares the type of every tensor of the shape of
// llama.cpp's quantization reference model (../shared/models/quant-reference: llama,
// 256 wide, 2 layers, 4 heads, 2 KV heads, n_ff 512, vocabulary 512, untied) under
// IQ4_NL, IQ4_XS and Q4_K_M with what llama-quantize chose in those files.
func TestTypeSelectionMatchesLlamaCpp(t *testing.T) {
	sh := Shape{Name: "tiny-llama", Description: "quant-reference", Arch: "llama",
		Vocab: 512, Embd: 256, Layers: 2, Heads: 4, HeadsKV: 2, FF: 512,
		Context: 256, RopeBase: 10000, RMSEps: 1e-5, Tok: VocabSPM}
	for _, c := range []struct{ typ, file string }{{"IQ4_NL", "tiny-llama-IQ4_NL.gguf"}, {"IQ4_XS", "tiny-llama-IQ4_XS.gguf"}, {"Q4_K_M", "tiny-llama-Q4_K_M.gguf"}} {
		t.Run(c.typ, func(t *testing.T) {
			f, err := gguf.Open(filepath.Join("../../../shared/models/quant-reference", c.file))
			if errors.Is(err, os.ErrNotExist) {
				t.Skipf("llama.cpp reference file absent (%s): not checked", c.file)
			}
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			m := typeMap(Spec{Shape: sh, Type: mustType(t, c.typ)})
			if len(m) != len(f.Tensors) {
				t.Errorf("%d tensors, llama.cpp's file has %d", len(m), len(f.Tensors))
			}
			for _, ti := range f.Tensors {
				if got, ok := m[ti.Name]; !ok || got != ti.Type {
					t.Errorf("%s: %v (%v), llama.cpp %v", ti.Name, got, ok, ti.Type)
				}
			}
			if id, _ := f.Uint("general.file_type"); uint32(id) != mustType(t, c.typ).ID {
				t.Errorf("general.file_type %d, ours %d", id, mustType(t, c.typ).ID)
			}
		})
	}
}

func TestTypeSelection(t *testing.T) {
	// TinyLlama has 22 layers: use_more_bits picks layers < 22/8 = 2, ≥ 7·22/8 = 19, and
	// (l−2) % 3 == 2 in between.
	moreBits := []int{0, 1, 4, 7, 10, 13, 16, 19, 20, 21}
	spec, _ := NewSpec("llama-1b", "Q4_K_M", 0)
	m := typeMap(spec)
	for l := range 22 {
		want := kernels.Q4_K
		if slices.Contains(moreBits, l) {
			want = kernels.Q6_K
		}
		for _, n := range []string{"attn_v", "ffn_down"} {
			if got := m[fmt.Sprintf("blk.%d.%s.weight", l, n)]; got != want {
				t.Errorf("llama-1b Q4_K_M blk.%d.%s = %v, want %v", l, n, got, want)
			}
		}
		for _, n := range []string{"attn_q", "attn_k", "attn_output", "ffn_gate", "ffn_up"} {
			if got := m[fmt.Sprintf("blk.%d.%s.weight", l, n)]; got != kernels.Q4_K {
				t.Errorf("llama-1b Q4_K_M blk.%d.%s = %v, want Q4_K", l, n, got)
			}
		}
		for _, n := range []string{"attn_norm", "ffn_norm"} {
			if got := m[fmt.Sprintf("blk.%d.%s.weight", l, n)]; got != kernels.F32 {
				t.Errorf("blk.%d.%s = %v, want F32", l, n, got)
			}
		}
	}
	tests := []struct {
		shape, typ string
		want       map[string]kernels.DType
	}{
		{"llama-1b", "Q4_K_M", map[string]kernels.DType{
			"token_embd.weight": kernels.Q4_K, "output.weight": kernels.Q6_K, "output_norm.weight": kernels.F32}},
		// Q4_0 too gets a Q6_K output, as llama-quantize does.
		{"llama-1b", "Q4_0", map[string]kernels.DType{
			"token_embd.weight": kernels.Q4_0, "output.weight": kernels.Q6_K, "blk.0.attn_v.weight": kernels.Q4_0,
			"blk.0.ffn_down.weight": kernels.Q4_0}},
		{"llama-1b", "Q8_0", map[string]kernels.DType{
			"token_embd.weight": kernels.Q8_0, "output.weight": kernels.Q8_0}},
		{"llama-1b", "F16", map[string]kernels.DType{
			"token_embd.weight": kernels.F16, "output.weight": kernels.F16, "blk.0.attn_q.weight": kernels.F16,
			"blk.0.attn_norm.weight": kernels.F32}},
		{"llama-1b", "Q4_K_S", map[string]kernels.DType{
			"blk.3.attn_v.weight": kernels.Q5_K, "blk.4.attn_v.weight": kernels.Q4_K,
			"blk.1.ffn_down.weight": kernels.Q5_K, "blk.2.ffn_down.weight": kernels.Q4_K}},
		{"llama-1b", "Q3_K_M", map[string]kernels.DType{
			"blk.1.attn_v.weight": kernels.Q5_K, "blk.2.attn_v.weight": kernels.Q4_K,
			"blk.0.ffn_down.weight": kernels.Q5_K, "blk.1.ffn_down.weight": kernels.Q4_K,
			"blk.0.attn_output.weight": kernels.Q4_K, "blk.0.attn_q.weight": kernels.Q3_K}},
		// TinyLlama has 8 query heads per KV head, so Q2_K keeps attn_v at Q4_K.
		{"llama-1b", "Q2_K", map[string]kernels.DType{
			"blk.0.attn_v.weight": kernels.Q4_K, "blk.0.ffn_down.weight": kernels.Q3_K,
			"blk.0.attn_output.weight": kernels.Q3_K, "blk.0.ffn_up.weight": kernels.Q2_K}},
		{"llama-7b", "Q2_K", map[string]kernels.DType{"blk.0.attn_v.weight": kernels.Q3_K}},
		// stories15M: rows of 288 fit neither 256-blocks (Q4_K → Q5_0) nor, for the
		// tied embedding/output, Q6_K (→ Q8_0); ffn_down rows of 768 do.
		{"llama-tiny", "Q4_K_M", map[string]kernels.DType{
			"token_embd.weight": kernels.Q8_0, "blk.0.attn_q.weight": kernels.Q5_0,
			// 6 layers: use_more_bits picks layers 2 and 5.
			"blk.2.attn_v.weight": kernels.Q8_0, "blk.0.attn_v.weight": kernels.Q5_0,
			"blk.5.ffn_down.weight": kernels.Q6_K, "blk.0.ffn_down.weight": kernels.Q4_K}},
		// stories110M: every row is a multiple of 256, so Q4_K_M is the real mix (12
		// layers: use_more_bits picks layers 0, 3, 6, 9, 10, 11).
		{"llama-small", "Q4_K_M", map[string]kernels.DType{
			"token_embd.weight": kernels.Q6_K, "blk.0.attn_q.weight": kernels.Q4_K,
			"blk.0.attn_v.weight": kernels.Q6_K, "blk.1.attn_v.weight": kernels.Q4_K,
			"blk.0.ffn_down.weight": kernels.Q6_K, "blk.1.ffn_down.weight": kernels.Q4_K,
			"blk.1.ffn_up.weight": kernels.Q4_K}},
		{"llama-tiny", "Q4_0", map[string]kernels.DType{
			"token_embd.weight": kernels.Q8_0, "blk.0.attn_q.weight": kernels.Q4_0}},
		// Qwen2 0.5B: n_embd 896 is not a multiple of 256.
		{"qwen2-0.5b", "Q4_K_M", map[string]kernels.DType{
			"token_embd.weight": kernels.Q8_0, "blk.0.attn_q.weight": kernels.Q5_0,
			"blk.0.attn_q.bias": kernels.F32, "blk.0.attn_v.weight": kernels.Q8_0,
			"blk.3.attn_v.weight": kernels.Q5_0, "blk.0.ffn_down.weight": kernels.Q6_K,
			"blk.3.ffn_down.weight": kernels.Q4_K}},
		{"qwen2-7b", "Q4_K_M", map[string]kernels.DType{
			"token_embd.weight": kernels.Q4_K, "output.weight": kernels.Q6_K, "blk.0.attn_k.bias": kernels.F32}},
		// IQ4 without an importance matrix: attn_v Q5_K where 4+ query heads share a KV
		// head (TinyLlama: 8), ffn_down Q5_K in the first eighth of the layers (22/8 = 2).
		{"llama-1b", "IQ4_NL", map[string]kernels.DType{
			"token_embd.weight": kernels.IQ4_NL, "output.weight": kernels.Q6_K, "blk.0.attn_q.weight": kernels.IQ4_NL,
			"blk.5.attn_v.weight": kernels.Q5_K, "blk.1.ffn_down.weight": kernels.Q5_K, "blk.2.ffn_down.weight": kernels.IQ4_NL,
			"blk.0.attn_output.weight": kernels.IQ4_NL}},
		{"llama-7b", "IQ4_XS", map[string]kernels.DType{
			"blk.0.attn_v.weight": kernels.IQ4_XS, "blk.3.ffn_down.weight": kernels.Q5_K, "blk.4.ffn_down.weight": kernels.IQ4_XS}},
		// stories15M: rows of 288 take IQ4_NL for IQ4_XS; the tied output Q8_0.
		{"llama-tiny", "IQ4_XS", map[string]kernels.DType{
			"token_embd.weight": kernels.Q8_0, "blk.0.attn_q.weight": kernels.IQ4_NL, "blk.0.ffn_down.weight": kernels.IQ4_XS}},
	}
	for _, tt := range tests {
		spec, err := NewSpec(tt.shape, tt.typ, 0)
		if err != nil {
			t.Fatal(err)
		}
		m := typeMap(spec)
		for name, want := range tt.want {
			if got, ok := m[name]; !ok || got != want {
				t.Errorf("%s %s: %s = %v, want %v", tt.shape, tt.typ, name, got, want)
			}
		}
	}
	for _, tt := range []struct {
		in   kernels.DType
		row  int
		want kernels.DType
	}{
		{kernels.Q4_K, 288, kernels.Q5_0}, {kernels.Q5_K, 288, kernels.Q5_1}, {kernels.Q6_K, 288, kernels.Q8_0},
		{kernels.Q2_K, 96, kernels.Q4_0}, {kernels.Q3_K, 96, kernels.Q4_0}, {kernels.Q4_K, 48, kernels.F16},
		{kernels.Q4_K, 512, kernels.Q4_K},
	} {
		if got := fallbackType(tt.in, tt.row); got != tt.want {
			t.Errorf("fallbackType(%v, %d) = %v, want %v", tt.in, tt.row, got, tt.want)
		}
	}
}

// collectKVs returns the keys a spec writes, in order.
func collectKVs(s Spec) []gguf.KV {
	var out []gguf.KV
	s.addKVs(func(k string, v any) { out = append(out, gguf.KV{Key: k, Value: gguf.Value{V: v}}) })
	return out
}

// sameValue compares a value given to AddKV with one read back.
func sameValue(want any, got gguf.Value) bool {
	if a, ok := got.V.(gguf.Array); ok {
		return reflect.DeepEqual(want, a.Values)
	}
	return reflect.DeepEqual(want, got.V)
}

// writeSpec writes spec in memory and parses it back.
func writeSpec(t *testing.T, spec Spec) (*gguf.File, []byte) {
	t.Helper()
	var buf bytes.Buffer
	var last, total int64
	err := Write(context.Background(), &buf, spec, func(d, tot int64) { last, total = d, tot })
	if err != nil {
		t.Fatalf("%s: %v", spec, err)
	}
	if last != total || total == 0 {
		t.Errorf("%s: progress ended at %d of %d", spec, last, total)
	}
	size, err := spec.FileSize()
	if err != nil {
		t.Fatal(err)
	}
	if int64(buf.Len()) != size {
		t.Fatalf("%s: wrote %d bytes, FileSize says %d", spec, buf.Len(), size)
	}
	f, err := gguf.Parse(buf.Bytes())
	if err != nil {
		t.Fatalf("%s: reading back: %v", spec, err)
	}
	return f, buf.Bytes()
}

// checkFile checks every key, every tensor's name, type and shape, and that each
// tensor's dequantized values have the intended mean and spread.
func checkFile(t *testing.T, spec Spec, f *gguf.File) {
	t.Helper()
	for _, kv := range collectKVs(spec) {
		got, ok := f.Get(kv.Key)
		if !ok {
			t.Errorf("%s: key %s missing", spec, kv.Key)
			continue
		}
		if !sameValue(kv.Value.V, got) {
			t.Errorf("%s: key %s = %s, want %v", spec, kv.Key, gguf.FormatValue(got), kv.Value.V)
		}
	}
	ts := spec.Tensors()
	if len(f.Tensors) != len(ts) {
		t.Fatalf("%s: %d tensors, want %d", spec, len(f.Tensors), len(ts))
	}
	for i, want := range ts {
		got := &f.Tensors[i]
		if got.Name != want.Name || got.Type != want.Type || !slices.Equal(got.Shape, want.Shape) {
			t.Errorf("%s: tensor %d = %s %v %v, want %s %v %v", spec, i, got.Name, got.Type, got.Shape, want.Name, want.Type, want.Shape)
			continue
		}
		tr := kernels.TraitsOf(got.Type)
		if tr.ToFloat == nil {
			t.Fatalf("no dequantizer for %v", got.Type)
		}
		vals := make([]float32, got.Elements())
		tr.ToFloat(f.TensorData(got), vals)
		var sum, sq float64
		for _, v := range vals {
			sum += float64(v)
		}
		mean := sum / float64(len(vals))
		for _, v := range vals {
			sq += (float64(v) - mean) * (float64(v) - mean)
		}
		std := math.Sqrt(sq / float64(len(vals)))
		// Low-bit types add quantization noise; 2- and 3-bit ones a lot of it.
		// Small tensors get the sampling error of their size on top (4 standard errors).
		tol := 0.15
		if got.Type == kernels.Q2_K || got.Type == kernels.Q3_K {
			tol = 0.35
		}
		n := float64(len(vals))
		tol += 4 / math.Sqrt(2*n)
		if math.Abs(mean-float64(want.mean)) > float64(want.std)*(0.1+4/math.Sqrt(n)) || math.Abs(std/float64(want.std)-1) > tol {
			t.Errorf("%s: %s (%v): mean %.4f std %.4f, want %.4f and %.4f", spec, got.Name, got.Type, mean, std, want.mean, want.std)
		}
	}
}

func TestWriteReadBack(t *testing.T) {
	types := []string{"F32", "F16", "BF16", "Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q2_K", "Q3_K_M", "Q4_K_S", "Q4_K_M", "Q5_K_M", "Q6_K", "IQ4_NL", "IQ4_XS"}
	for _, sh := range []Shape{miniLlama, miniQwen, miniQwen3, miniQwen3MoE, miniLlama3} {
		for _, typ := range types {
			t.Run(sh.Name+"/"+typ, func(t *testing.T) {
				spec := Spec{Shape: sh, Type: mustType(t, typ), Seed: 5}
				f, _ := writeSpec(t, spec)
				checkFile(t, spec, f)
			})
		}
	}
}

// TestLlamaTinyKeys checks the keys of a real shape against literal values, so that the
// read-back test is not only comparing the writer with itself.
func TestLlamaTinyKeys(t *testing.T) {
	spec, _ := NewSpec("llama-tiny", "Q4_K_M", 0)
	f, _ := writeSpec(t, spec)
	checkFile(t, spec, f)
	u := map[string]uint64{
		"general.file_type": 15, "general.quantization_version": 2,
		"llama.vocab_size": 32000, "llama.context_length": 2048, "llama.embedding_length": 288,
		"llama.block_count": 6, "llama.feed_forward_length": 768, "llama.attention.head_count": 6,
		"llama.attention.head_count_kv": 6, "llama.rope.dimension_count": 48,
		"tokenizer.ggml.bos_token_id": 1, "tokenizer.ggml.eos_token_id": 2, "tokenizer.ggml.unknown_token_id": 0,
	}
	for k, want := range u {
		if got, ok := f.Uint(k); !ok || got != want {
			t.Errorf("%s = %d (%v), want %d", k, got, ok, want)
		}
	}
	s := map[string]string{"general.architecture": "llama", "tokenizer.ggml.model": "llama", "tokenizer.ggml.pre": "default"}
	for k, want := range s {
		if got, _ := f.String(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if eps, _ := f.Float("llama.attention.layer_norm_rms_epsilon"); math.Abs(eps-1e-5) > 1e-9 {
		t.Errorf("rms eps = %g", eps)
	}
	if base, _ := f.Float("llama.rope.freq_base"); base != 10000 {
		t.Errorf("rope base = %g", base)
	}
	if _, ok := f.Tensor("output.weight"); ok {
		t.Error("llama-tiny has tied embeddings: no output.weight expected")
	}
	if toks, _ := f.Strings("tokenizer.ggml.tokens"); len(toks) != 32000 {
		t.Errorf("%d tokens", len(toks))
	}
	if n := len(f.Tensors); n != 2+6*9 {
		t.Errorf("%d tensors, want %d", n, 2+6*9)
	}
}

// TestQwen3Tensors checks qwen3-0.6b's tensors against llama.cpp's names and counts:
// per block eleven tensors, the q and k norms one F32 head (128) each, no biases, no
// output.weight (tied), 310 in all as in Qwen's own GGUF files.
func TestQwen3Tensors(t *testing.T) {
	spec, err := NewSpec("qwen3-0.6b", "Q4_K_M", 0)
	if err != nil {
		t.Fatal(err)
	}
	ts := spec.Tensors()
	if len(ts) != 310 {
		t.Errorf("%d tensors, want 310", len(ts))
	}
	byName := map[string]TensorSpec{}
	for _, x := range ts {
		byName[x.Name] = x
	}
	for _, name := range []string{"blk.0.attn_q_norm.weight", "blk.27.attn_k_norm.weight"} {
		x, ok := byName[name]
		if !ok || x.Type != kernels.F32 || !slices.Equal(x.Shape, []uint64{128}) {
			t.Errorf("%s: %v %v %v, want F32 [128]", name, ok, x.Type, x.Shape)
		}
	}
	for _, name := range []string{"blk.0.attn_q.bias", "output.weight"} {
		if _, ok := byName[name]; ok {
			t.Errorf("%s present", name)
		}
	}
	if q := byName["blk.0.attn_q.weight"]; !slices.Equal(q.Shape, []uint64{1024, 2048}) {
		t.Errorf("attn_q shape %v, want [1024 2048]", q.Shape)
	}
}

// TestQwen3MoETensors checks qwen3moe-30b-a3b against what llama.cpp reports for
// Qwen3-30B-A3B Q4_K_M (llama-bench: "qwen3moe 30B.A3B Q4_K - Medium", 17.28 GiB,
// 30.53 B params; 579 tensors): twelve tensors per block, the router F32, the experts
// 3-D [row, rows, 128] with ffn_down_exps raised to Q6_K in use_more_bits layers, and
// 3.35 B parameters active per token (8 of 128 experts). Then qwen3moe-tiny's 8 experts
// take llama.cpp's 8-expert rules: attn_k and attn_v Q8_0, attn_output Q5_K.
func TestQwen3MoETensors(t *testing.T) {
	spec, err := NewSpec("qwen3moe-30b-a3b", "Q4_K_M", 0)
	if err != nil {
		t.Fatal(err)
	}
	ts := spec.Tensors()
	if len(ts) != 579 {
		t.Errorf("%d tensors, want 579", len(ts))
	}
	size, err := spec.FileSize()
	if err != nil {
		t.Fatal(err)
	}
	if gib := float64(size) / (1 << 30); math.Abs(gib-17.28) > 0.005 {
		t.Errorf("Q4_K_M file of %.3f GiB, llama.cpp's is 17.28", gib)
	}
	if a := float64(spec.ActiveParams()) / 1e9; a < 3.34 || a > 3.36 {
		t.Errorf("%.3f B active parameters, want 3.35", a)
	}
	byName := map[string]TensorSpec{}
	for _, x := range ts {
		byName[x.Name] = x
	}
	for name, want := range map[string]struct {
		typ   kernels.DType
		shape []uint64
	}{
		"blk.0.ffn_gate_inp.weight":  {kernels.F32, []uint64{2048, 128}},
		"blk.0.ffn_gate_exps.weight": {kernels.Q4_K, []uint64{2048, 768, 128}},
		"blk.0.ffn_up_exps.weight":   {kernels.Q4_K, []uint64{2048, 768, 128}},
		"blk.0.ffn_down_exps.weight": {kernels.Q6_K, []uint64{768, 2048, 128}}, // first eighth
		"blk.7.ffn_down_exps.weight": {kernels.Q4_K, []uint64{768, 2048, 128}},
		"blk.8.ffn_down_exps.weight": {kernels.Q6_K, []uint64{768, 2048, 128}}, // (8-6)%3 == 2
		"blk.47.attn_k.weight":       {kernels.Q4_K, []uint64{2048, 512}},
		"blk.47.attn_output.weight":  {kernels.Q4_K, []uint64{4096, 2048}},
		"blk.0.attn_q_norm.weight":   {kernels.F32, []uint64{128}},
		"output.weight":              {kernels.Q6_K, []uint64{2048, 151936}},
		"token_embd.weight":          {kernels.Q4_K, []uint64{2048, 151936}},
	} {
		x, ok := byName[name]
		if !ok || x.Type != want.typ || !slices.Equal(x.Shape, want.shape) {
			t.Errorf("%s: %v %v %v, want %v %v", name, ok, x.Type, x.Shape, want.typ, want.shape)
		}
	}
	for _, name := range []string{"blk.0.ffn_gate.weight", "blk.0.ffn_down.weight"} {
		if _, ok := byName[name]; ok {
			t.Errorf("%s present in a model of experts only", name)
		}
	}
	kvs := map[string]any{}
	for _, kv := range collectKVs(spec) {
		kvs[kv.Key] = kv.Value.V
	}
	for key, want := range map[string]uint32{"qwen3moe.expert_count": 128, "qwen3moe.expert_used_count": 8,
		"qwen3moe.expert_feed_forward_length": 768, "qwen3moe.feed_forward_length": 6144} {
		if kvs[key] != want {
			t.Errorf("%s = %v, want %d", key, kvs[key], want)
		}
	}
	tiny, err := NewSpec("qwen3moe-tiny", "Q4_K_M", 0)
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]kernels.DType{}
	for _, x := range tiny.Tensors() {
		types[x.Name] = x.Type
	}
	for name, want := range map[string]kernels.DType{
		"blk.1.attn_k.weight": kernels.Q8_0, "blk.1.attn_v.weight": kernels.Q8_0,
		"blk.1.attn_output.weight": kernels.Q5_K, "blk.1.attn_q.weight": kernels.Q4_K,
		"blk.1.ffn_gate_inp.weight": kernels.F32,
	} {
		if types[name] != want {
			t.Errorf("qwen3moe-tiny Q4_K_M %s: %v, want %v (llama.cpp's 8-expert rules)", name, types[name], want)
		}
	}
}

func TestDeterministic(t *testing.T) {
	spec := Spec{Shape: miniQwen, Type: mustType(t, "Q4_K_M"), Seed: 11}
	_, a := writeSpec(t, spec)
	old := runtime.GOMAXPROCS(1)
	_, b := writeSpec(t, spec)
	runtime.GOMAXPROCS(old)
	if !bytes.Equal(a, b) {
		t.Fatal("output depends on the number of workers")
	}
	spec.Seed = 12
	_, c := writeSpec(t, spec)
	if len(a) != len(c) || bytes.Equal(a, c) {
		t.Fatal("a different seed should give different weights of the same size")
	}
}

func TestVocabs(t *testing.T) {
	t.Run("spm", func(t *testing.T) {
		v := buildSPM(32000)
		if len(v.tokens) != 32000 || len(v.scores) != 32000 || len(v.types) != 32000 {
			t.Fatalf("sizes %d %d %d", len(v.tokens), len(v.scores), len(v.types))
		}
		if v.tokens[0] != "<unk>" || v.tokens[1] != "<s>" || v.tokens[2] != "</s>" || v.tokens[3] != "<0x00>" || v.tokens[258] != "<0xFF>" {
			t.Fatalf("layout: %q", v.tokens[:4])
		}
		if v.types[0] != tokUnknown || v.types[1] != tokControl || v.types[3] != tokByte || v.types[300] != tokNormal {
			t.Fatalf("types: %v", v.types[:4])
		}
		checkUnique(t, v.tokens)
		for i := 260; i < len(v.scores); i++ {
			if v.scores[i] >= v.scores[i-1] {
				t.Fatalf("scores must decrease: %d", i)
			}
		}
		for _, w := range []string{"▁the", "▁Once", "▁upon", "▁time", "▁t", "e", "▁"} {
			if !slices.Contains(v.tokens, w) {
				t.Errorf("piece %q missing", w)
			}
		}
		// Prefix-closed: every piece's prefixes of two or more characters are pieces.
		set := map[string]bool{}
		for _, tok := range v.tokens {
			set[tok] = true
		}
		for _, tok := range v.tokens[259:] {
			r := []rune(tok)
			for k := 2; k < len(r); k++ {
				if !set[string(r[:k])] {
					t.Fatalf("prefix %q of %q missing", string(r[:k]), tok)
				}
			}
		}
	})
	for _, tc := range []struct {
		kind    VocabKind
		n       int
		pre     string
		special map[int]string
		bos     uint32
		eos     uint32
	}{
		{VocabLlama3, 128256, "llama-bpe", map[int]string{128000: "<|begin_of_text|>", 128001: "<|end_of_text|>",
			128006: "<|start_header_id|>", 128009: "<|eot_id|>", 128255: "<|reserved_special_token_250|>"}, 128000, 128001},
		{VocabQwen2, 151936, "qwen2", map[int]string{151643: "<|endoftext|>", 151644: "<|im_start|>",
			151645: "<|im_end|>", 151935: "[PAD151935]"}, 151643, 151643},
		{VocabQwen2, 152064, "qwen2", map[int]string{151643: "<|endoftext|>", 152063: "[PAD152063]"}, 151643, 151643},
	} {
		t.Run(tc.pre, func(t *testing.T) {
			v := buildBPE(tc.kind, tc.n)
			if len(v.tokens) != tc.n || len(v.types) != tc.n {
				t.Fatalf("%d tokens, want %d", len(v.tokens), tc.n)
			}
			if v.pre != tc.pre || v.model != "gpt2" || v.bos != tc.bos || v.eos != tc.eos {
				t.Fatalf("pre %q model %q bos %d eos %d", v.pre, v.model, v.bos, v.eos)
			}
			for id, s := range tc.special {
				if v.tokens[id] != s {
					t.Errorf("token %d = %q, want %q", id, v.tokens[id], s)
				}
			}
			checkUnique(t, v.tokens)
			// Merges are in rank order: each joins two symbols that are byte characters or
			// made by an earlier merge, and makes a regular token.
			index := map[string]int{}
			for i, tok := range v.tokens {
				index[tok] = i
			}
			made := map[string]bool{}
			for _, c := range gpt2ByteChars() {
				made[c] = true
			}
			seenMerge := map[string]bool{}
			for r, m := range v.merges {
				a, b, ok := strings.Cut(m, " ")
				if !ok || seenMerge[m] {
					t.Fatalf("merge %d %q malformed or repeated", r, m)
				}
				seenMerge[m] = true
				ic, okc := index[a+b]
				if !made[a] || !made[b] || !okc || ic >= int(tc.bos) {
					t.Fatalf("merge %d %q: inputs made %v %v, result id %d", r, m, made[a], made[b], ic)
				}
				made[a+b] = true
			}
			for i := 256; i < int(tc.bos); i++ {
				if !made[v.tokens[i]] {
					t.Fatalf("regular token %d %q is made by no merge", i, v.tokens[i])
				}
			}
		})
	}
}

func checkUnique(t *testing.T, toks []string) {
	t.Helper()
	seen := map[string]int{}
	for i, s := range toks {
		if j, ok := seen[s]; ok {
			t.Fatalf("token %q at %d and %d", s, j, i)
		}
		seen[s] = i
	}
}

// TestTokenizerRoundTrip loads each vocabulary family with llmbench's tokenizer and
// checks that English text survives Encode/Decode and is cut into word-sized tokens.
func TestTokenizerRoundTrip(t *testing.T) {
	text := "Once upon a time, there was a little girl named Lily. She liked to play in the garden with her dog!\nThe end: 42 apples & 7 pears."
	for _, sh := range []Shape{
		mustShape(t, "llama-tiny"),
		{Name: "l3", Arch: "llama", Vocab: 128256, Embd: 32, Layers: 1, Heads: 1, HeadsKV: 1, FF: 32, Context: 64, RopeBase: 1, RMSEps: 1e-5, Tok: VocabLlama3},
		{Name: "q2", Arch: "qwen2", Vocab: 151936, Embd: 32, Layers: 1, Heads: 1, HeadsKV: 1, FF: 32, Context: 64, RopeBase: 1, RMSEps: 1e-6, Tied: true, QKVBias: true, Tok: VocabQwen2},
	} {
		t.Run(sh.Name, func(t *testing.T) {
			f, _ := writeSpec(t, Spec{Shape: sh, Type: mustType(t, "Q8_0")})
			tok, err := tokenizer.FromGGUF(f)
			if err != nil {
				t.Fatal(err)
			}
			if tok.VocabSize() != sh.Vocab {
				t.Fatalf("vocab %d, want %d", tok.VocabSize(), sh.Vocab)
			}
			ids := tok.Encode(text, false, false)
			got := tok.Detokenize(ids, false, false)
			if got != text {
				t.Fatalf("round trip:\n got %q\nwant %q", got, text)
			}
			// Word-sized tokens: well under one token per character, and one token per
			// common word.
			if len(ids) > len(text)/2 {
				t.Errorf("%d tokens for %d characters", len(ids), len(text))
			}
			withBOS := tok.Encode("Once upon a time", true, false)
			if n := len(tok.Encode("Once upon a time", false, false)); n != 4 {
				t.Errorf("\"Once upon a time\" is %d tokens, want 4", n)
			}
			var pieces []string
			for _, id := range ids {
				pieces = append(pieces, tok.Token(id))
			}
			t.Logf("%s: %d tokens %q; \"Once upon a time\" → %v", sh.Name, len(ids), pieces, withBOS)
			if sh.Tok != VocabQwen2 && (len(withBOS) == 0 || withBOS[0] != tok.BOS()) {
				t.Errorf("BOS not added: %v", withBOS)
			}
		})
	}
}

func mustShape(t *testing.T, name string) Shape {
	t.Helper()
	s, err := Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestPath(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", "/x/cache")
	t.Setenv("HOME", "/x/home")
	if got, want := Path("", "llama-1b", "q4_k_m"), "/x/cache/llmbench/synth/llama-1b-Q4_K_M.gguf"; got != want {
		t.Errorf("Path = %q, want %q", got, want)
	}
	if got, want := Path("/d", "llama-1b", "Q4_K"), "/d/llama-1b-Q4_K_M.gguf"; got != want {
		t.Errorf("Path = %q, want %q", got, want)
	}
	if got, want := PathSeed("/d", "llama-1b", "Q4_0", 7), "/d/llama-1b-Q4_0-seed7.gguf"; got != want {
		t.Errorf("PathSeed = %q, want %q", got, want)
	}
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

func TestEnsure(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	path, err := Ensure(ctx, dir, "llama-tiny", "Q8_0", 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if path != Path(dir, "llama-tiny", "Q8_0") {
		t.Fatalf("path %s", path)
	}
	spec, _ := NewSpec("llama-tiny", "Q8_0", 0)
	size, _ := spec.FileSize()
	st, err := os.Stat(path)
	if err != nil || st.Size() != size {
		t.Fatalf("stat %v, %v; want %d bytes", st, err, size)
	}
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	checkFile(t, spec, f)
	f.Close()

	// A second call reuses the file: it must not even need free space.
	mtime := st.ModTime()
	time.Sleep(10 * time.Millisecond)
	noSpace := Cache{Dir: dir, FreeSpace: func(string) (uint64, error) { return 0, nil }}
	if p2, err := noSpace.Ensure(ctx, "llama-tiny", "Q8_0", 0, nil); err != nil || p2 != path {
		t.Fatalf("reuse: %s, %v", p2, err)
	}
	if st2, _ := os.Stat(path); !st2.ModTime().Equal(mtime) {
		t.Fatal("cached file was rewritten")
	}

	// A truncated file is replaced.
	if err := os.Truncate(path, size-100); err != nil {
		t.Fatal(err)
	}
	if _, err := Ensure(ctx, dir, "llama-tiny", "Q8_0", 0, nil); err != nil {
		t.Fatal(err)
	}
	if st3, _ := os.Stat(path); st3.Size() != size {
		t.Fatalf("not rewritten: %d bytes", st3.Size())
	}
	// A different seed is a different file.
	p4, err := Ensure(ctx, dir, "llama-tiny", "Q8_0", 3, nil)
	if err != nil || p4 == path {
		t.Fatalf("seed 3: %s, %v", p4, err)
	}
	if names := dirNames(t, dir); len(names) != 2 {
		t.Fatalf("cache holds %v", names)
	}
}

func TestEnsureNoSpace(t *testing.T) {
	dir := t.TempDir()
	var asked string
	c := Cache{Dir: dir, FreeSpace: func(d string) (uint64, error) { asked = d; return 10 << 20, nil }}
	_, err := c.Ensure(context.Background(), "llama-tiny", "F16", 0, nil)
	if err == nil {
		t.Fatal("want a free-space error")
	}
	msg := err.Error()
	for _, want := range []string{"llama-tiny F16", "needs", "29.7 MiB", "10.0 MiB is free", dir, "--cache-dir"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	if asked != dir {
		t.Errorf("free space asked for %q", asked)
	}
	if names := dirNames(t, dir); len(names) != 0 {
		t.Fatalf("refused write left %v", names)
	}
	// Just enough for the file but not the margin is refused too.
	spec, _ := NewSpec("llama-tiny", "F16", 0)
	size, _ := spec.FileSize()
	c.FreeSpace = func(string) (uint64, error) { return uint64(size), nil }
	if _, err := c.Ensure(context.Background(), "llama-tiny", "F16", 0, nil); err == nil {
		t.Fatal("no margin: want an error")
	}
	c.FreeSpace = func(string) (uint64, error) { return 0, errors.New("statfs broke") }
	if _, err := c.Ensure(context.Background(), "llama-tiny", "F16", 0, nil); err == nil || !strings.Contains(err.Error(), "statfs broke") {
		t.Fatalf("free-space failure: %v", err)
	}
	// The real statfs answers for an existing directory.
	if n, err := statfsFree(dir); err != nil || n == 0 {
		t.Fatalf("statfsFree = %d, %v", n, err)
	}
}

func TestEnsureCancel(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	_, err := Ensure(ctx, dir, "llama-tiny", "F16", 0, func(done, total int64) {
		calls++
		if calls == 3 {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if names := dirNames(t, dir); len(names) != 0 {
		t.Fatalf("cancelled write left %v", names)
	}
	// Already cancelled: nothing is written.
	if _, err := Ensure(ctx, dir, "llama-tiny", "F16", 0, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if names := dirNames(t, dir); len(names) != 0 {
		t.Fatalf("cancelled write left %v", names)
	}
}

type failWriter struct{ n, limit int }

func (w *failWriter) Write(p []byte) (int, error) {
	if w.n+len(p) > w.limit {
		return 0, errors.New("disk full")
	}
	w.n += len(p)
	return len(p), nil
}

func TestWriteError(t *testing.T) {
	spec, _ := NewSpec("llama-tiny", "Q4_0", 0)
	err := Write(context.Background(), &failWriter{limit: 4 << 20}, spec, nil)
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("err = %v", err)
	}
}

// TestBigShapes writes llama-1b in Q4_0 and Q4_K_M (the acceptance models), reads them
// back and reports the time and peak memory. It runs only with LLMBENCH_SYNTH_BIG=1
// (and not in -short mode); LLMBENCH_SYNTH_DIR picks the directory (default: a temp dir,
// removed afterwards).
func TestBigShapes(t *testing.T) {
	if testing.Short() || os.Getenv("LLMBENCH_SYNTH_BIG") != "1" {
		t.Skip("set LLMBENCH_SYNTH_BIG=1 to write the 1B models")
	}
	dir := os.Getenv("LLMBENCH_SYNTH_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	shapes := strings.Fields(os.Getenv("LLMBENCH_SYNTH_SHAPES"))
	if len(shapes) == 0 {
		shapes = []string{"llama-1b:Q4_0", "llama-1b:Q4_K_M"}
	}
	for _, st := range shapes {
		name, typ, _ := strings.Cut(st, ":")
		start := time.Now()
		path, err := Ensure(context.Background(), dir, name, typ, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		el := time.Since(start)
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		fi, _ := os.Stat(path)
		t.Logf("%s %s: %s, %.2f GB in %v (%.0f MB/s); peak RSS so far %d MiB", name, typ, filepath.Base(path), float64(fi.Size())/1e9, el.Round(time.Millisecond), float64(fi.Size())/1e6/el.Seconds(), ru.Maxrss/1024)
		f, err := gguf.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		spec, _ := NewSpec(name, typ, 0)
		ts := spec.Tensors()
		if len(f.Tensors) != len(ts) {
			t.Fatalf("%d tensors, want %d", len(f.Tensors), len(ts))
		}
		for i, want := range ts {
			if got := f.Tensors[i]; got.Name != want.Name || got.Type != want.Type || !slices.Equal(got.Shape, want.Shape) {
				t.Fatalf("tensor %d: %s %v %v, want %s %v %v", i, got.Name, got.Type, got.Shape, want.Name, want.Type, want.Shape)
			}
		}
		f.Close()
	}
}

func BenchmarkFill(b *testing.B) {
	f := make([]float32, chunkElems)
	b.SetBytes(4 * chunkElems)
	for b.Loop() {
		fill(f, 1, 2, 3, 0, 0.02)
	}
}

func BenchmarkWrite(b *testing.B) {
	for _, typ := range []string{"F16", "Q8_0", "Q4_0", "Q4_K_M"} {
		b.Run("llama-tiny/"+typ, func(b *testing.B) {
			spec, _ := NewSpec("llama-tiny", typ, 0)
			size, _ := spec.FileSize()
			b.SetBytes(size)
			for b.Loop() {
				if err := Write(context.Background(), &failWriter{limit: math.MaxInt}, spec, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// countWriter counts the bytes written to it.
type countWriter struct{ n int64 }

func (w *countWriter) Write(p []byte) (int, error) { w.n += int64(len(p)); return len(p), nil }

// TestWriteProgress: the progress of a write counts bytes of the file, never goes
// back, keeps one total (the planned size) and ends at it.
func TestWriteProgress(t *testing.T) {
	spec, _ := NewSpec("llama-tiny", "Q4_K_M", 0)
	size, err := spec.FileSize()
	if err != nil {
		t.Fatal(err)
	}
	var w countWriter
	var last int64 = -1
	calls := 0
	err = Write(context.Background(), &w, spec, func(done, total int64) {
		calls++
		if total != size {
			t.Fatalf("call %d: total %d; want the file size %d", calls, total, size)
		}
		if done < last || done > total {
			t.Fatalf("call %d: done %d after %d (total %d)", calls, done, last, total)
		}
		last = done
	})
	if err != nil {
		t.Fatal(err)
	}
	if calls < 2 || last != size || w.n != size {
		t.Errorf("%d calls, last done %d, %d bytes written; want several calls ending at %d", calls, last, w.n, size)
	}
}

// TestPlan: the plan of a model is known without writing: its size equals the file
// Ensure then writes, free space is asked of the nearest existing folder, and a
// cached model needs no room.
func TestPlan(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "not", "yet")
	var asked string
	c := Cache{Dir: dir, FreeSpace: func(d string) (uint64, error) { asked = d; return 1 << 40, nil }}
	p, err := c.Plan("llama-tiny", "Q8_0", 0)
	if err != nil {
		t.Fatal(err)
	}
	if p.Cached || p.Path != Path(dir, "llama-tiny", "Q8_0") || p.Need <= p.Size || p.Free != 1<<40 || !p.Fits() || asked != root {
		t.Errorf("plan %+v (free asked of %s); want an uncached plan asking %s", p, asked, root)
	}
	if _, err := os.Stat(dir); err == nil {
		t.Errorf("Plan created %s", dir)
	}
	if s := p.String(); !strings.Contains(s, "llama-tiny Q8_0: ") || !strings.Contains(s, human(p.Size)+" to write, 1.0 TiB free") {
		t.Errorf("String() = %q", s)
	}
	path, err := c.Ensure(context.Background(), "llama-tiny", "Q8_0", 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Size() != p.Size {
		t.Fatalf("written %v, %v; planned %d bytes", st, err, p.Size)
	}
	c.FreeSpace = func(string) (uint64, error) { return 0, nil }
	if p, err = c.Plan("llama-tiny", "Q8_0", 0); err != nil || !p.Cached || p.Need != 0 || !p.Fits() || !strings.HasSuffix(p.String(), ", cached") {
		t.Errorf("after Ensure: %+v, %v (%q); want cached, fitting with no room", p, err, p)
	}
	if p, err = c.Plan("llama-tiny", "F16", 0); err != nil || p.Cached || p.Fits() || !strings.Contains(p.String(), "needs") {
		t.Errorf("no room: %+v, %v (%q); want a plan that does not fit", p, err, p)
	}
	if _, err := c.Plan("llama-huge", "Q8_0", 0); err == nil {
		t.Error("unknown shape: want an error")
	}
}

// TestDraftShape writes a pair target and its draft and checks the draft is the
// target's vocabulary, embeddings, output head and first blocks byte for byte, with
// fewer blocks; the target's later blocks are drawn at ExtraScale and its output norm
// at OutputScale.
func TestDraftShape(t *testing.T) {
	target, err := NewSpec("spec-tiny", "Q8_0", 0)
	if err != nil {
		t.Fatal(err)
	}
	draft, err := NewSpec("SPEC-TINY-draft", "Q8_0", 0)
	if err != nil {
		t.Fatal(err)
	}
	if draft.Shape.Layers != target.Shape.DraftLayers || draft.Shape.DraftOf != "spec-tiny" {
		t.Fatalf("draft shape %+v", draft.Shape)
	}
	if !slices.Contains(Shapes(), "spec-tiny-draft") {
		t.Errorf("Shapes() = %v lacks the draft", Shapes())
	}
	if _, err := Lookup("llama-tiny-draft"); err == nil {
		t.Error("a shape that is no pair target has a draft")
	}
	parse := func(s Spec) *gguf.File {
		var b bytes.Buffer
		if err := Write(context.Background(), &b, s, nil); err != nil {
			t.Fatal(err)
		}
		f, err := gguf.Parse(b.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	tf, df := parse(target), parse(draft)
	if n, _ := df.Uint("llama.block_count"); int(n) != draft.Shape.Layers {
		t.Errorf("draft block_count %d", n)
	}
	if got, _ := df.String("llmbench.synth.draft_of"); got != "spec-tiny" {
		t.Errorf("draft_of %q", got)
	}
	tt, _ := tf.Strings("tokenizer.ggml.tokens")
	dt, _ := df.Strings("tokenizer.ggml.tokens")
	if !slices.Equal(tt, dt) {
		t.Error("the draft's vocabulary differs from the target's")
	}
	if len(df.Tensors) >= len(tf.Tensors) {
		t.Errorf("draft has %d tensors, target %d", len(df.Tensors), len(tf.Tensors))
	}
	for _, d := range df.Tensors {
		tg, ok := tf.Tensor(d.Name)
		if !ok {
			t.Fatalf("draft tensor %s not in the target", d.Name)
		}
		if !bytes.Equal(df.TensorData(&d), tf.TensorData(tg)) {
			t.Errorf("tensor %s differs between draft and target", d.Name)
		}
	}
	// The scales: rms of a shared block's ffn_down against a later one's, and the
	// output norm's mean.
	rms := func(name string) float64 {
		ti, ok := tf.Tensor(name)
		if !ok {
			t.Fatalf("no tensor %s", name)
		}
		vals := make([]float32, ti.Elements())
		kernels.TraitsOf(ti.Type).ToFloat(tf.TensorData(ti), vals)
		var s float64
		for _, v := range vals {
			s += float64(v) * float64(v)
		}
		return math.Sqrt(s / float64(len(vals)))
	}
	sh := target.Shape
	if r := rms("blk.1.ffn_down.weight") / rms("blk.0.ffn_down.weight"); math.Abs(r-float64(sh.ExtraScale)) > 0.1*float64(sh.ExtraScale) {
		t.Errorf("a later block's residual weights are %.3f of a shared one's, want %g", r, sh.ExtraScale)
	}
	if r := rms("output_norm.weight"); math.Abs(r-float64(sh.OutputScale)) > 0.02*float64(sh.OutputScale) {
		t.Errorf("output norm rms %.2f, want about %g", r, sh.OutputScale)
	}
}

// TestGptOSSTensors checks the gpt-oss shapes against llama.cpp's gpt-oss layout
// (LLM_ARCH_OPENAI_MOE): nineteen tensors per block (q/k/v/o with biases, attn_sinks of
// one logit per head, post_attention_norm before the experts, a router with a bias, and
// the three expert stacks each with one bias row per expert), 459 tensors in gpt-oss-20b
// as in ggml-org's file; the keys of the alternating sliding window and YaRN scaling;
// and the active parameters of OpenAI's model card (3.6 B and 5.1 B besides the input
// embedding, whose 201088×2880 rows a token reads one of).
func TestGptOSSTensors(t *testing.T) {
	for _, tt := range []struct {
		shape   string
		tensors int
		active  float64 // billions, input embedding excluded
		experts uint32
	}{{"gpt-oss-20b", 459, 3.61, 32}, {"gpt-oss-120b", 687, 5.13, 128}} {
		spec, err := NewSpec(tt.shape, "Q8_0", 0)
		if err != nil {
			t.Fatal(err)
		}
		ts := spec.Tensors()
		if len(ts) != tt.tensors {
			t.Errorf("%s: %d tensors, want %d", tt.shape, len(ts), tt.tensors)
		}
		embd := int64(spec.Shape.Vocab * spec.Shape.Embd)
		if a := float64(spec.ActiveParams()-embd) / 1e9; math.Abs(a-tt.active) > 0.005 {
			t.Errorf("%s: %.3f B active parameters besides the embedding, want %.2f", tt.shape, a, tt.active)
		}
		byName := map[string]TensorSpec{}
		for _, x := range ts {
			byName[x.Name] = x
		}
		ne := uint64(tt.experts)
		for name, want := range map[string]struct {
			typ   kernels.DType
			shape []uint64
		}{
			"blk.0.attn_q.weight":              {kernels.Q8_0, []uint64{2880, 4096}},
			"blk.0.attn_q.bias":                {kernels.F32, []uint64{4096}},
			"blk.0.attn_k.bias":                {kernels.F32, []uint64{512}},
			"blk.0.attn_output.weight":         {kernels.Q8_0, []uint64{4096, 2880}},
			"blk.0.attn_output.bias":           {kernels.F32, []uint64{2880}},
			"blk.0.attn_sinks.weight":          {kernels.F32, []uint64{64}},
			"blk.0.post_attention_norm.weight": {kernels.F32, []uint64{2880}},
			"blk.0.ffn_gate_inp.weight":        {kernels.F32, []uint64{2880, ne}},
			"blk.0.ffn_gate_inp.bias":          {kernels.F32, []uint64{ne}},
			"blk.0.ffn_gate_exps.weight":       {kernels.Q8_0, []uint64{2880, 2880, ne}},
			"blk.0.ffn_gate_exps.bias":         {kernels.F32, []uint64{2880, ne}},
			"blk.0.ffn_up_exps.bias":           {kernels.F32, []uint64{2880, ne}},
			"blk.0.ffn_down_exps.weight":       {kernels.Q8_0, []uint64{2880, 2880, ne}},
			"blk.0.ffn_down_exps.bias":         {kernels.F32, []uint64{2880, ne}},
			"output.weight":                    {kernels.Q8_0, []uint64{2880, 201088}},
		} {
			x, ok := byName[name]
			if !ok || x.Type != want.typ || !slices.Equal(x.Shape, want.shape) {
				t.Errorf("%s %s: %v %v %v, want %v %v", tt.shape, name, ok, x.Type, x.Shape, want.typ, want.shape)
			}
		}
		if _, ok := byName["blk.0.ffn_norm.weight"]; ok {
			t.Errorf("%s: ffn_norm present (gpt-oss names it post_attention_norm)", tt.shape)
		}
		kvs := map[string]any{}
		for _, kv := range collectKVs(spec) {
			kvs[kv.Key] = kv.Value.V
		}
		for key, want := range map[string]any{"gpt-oss.expert_count": tt.experts, "gpt-oss.expert_used_count": uint32(4),
			"gpt-oss.expert_feed_forward_length": uint32(2880), "gpt-oss.attention.sliding_window": uint32(128),
			"gpt-oss.rope.scaling.type": "yarn", "gpt-oss.rope.scaling.factor": float32(32),
			"gpt-oss.rope.scaling.original_context_length": uint32(4096), "gpt-oss.context_length": uint32(131072),
			"gpt-oss.rope.freq_base": float32(150000), "gpt-oss.attention.key_length": uint32(64)} {
			if kvs[key] != want {
				t.Errorf("%s: %s = %v, want %v", tt.shape, key, kvs[key], want)
			}
		}
	}
}

// TestMXFP4MoE checks llama.cpp's MXFP4_MOE mix (llama_ftype 38, "MXFP4 MoE"): in
// gpt-oss-20b the three expert stacks of every block MXFP4, the output, the embedding
// and the attention projections Q8_0, norms, biases, sinks and the router F32, and the
// file sizes llama-bench prints for both gpt-oss models; a model without experts is
// Q8_0 throughout.
func TestMXFP4MoE(t *testing.T) {
	spec, err := NewSpec("gpt-oss-20b", "mxfp4_moe", 0)
	if err != nil {
		t.Fatal(err)
	}
	if spec.Type.ID != 38 || gguf.FileTypeName(spec.Type.ID) != "MXFP4 MoE" {
		t.Errorf("file type %d (%s)", spec.Type.ID, gguf.FileTypeName(spec.Type.ID))
	}
	count := map[kernels.DType]int{}
	for _, x := range spec.Tensors() {
		count[x.Type]++
		want := kernels.Q8_0
		switch {
		case len(x.Shape) == 3:
			want = kernels.MXFP4
		case len(x.Shape) == 1 || strings.HasSuffix(x.Name, ".bias") || strings.HasSuffix(x.Name, "ffn_gate_inp.weight"):
			want = kernels.F32
		}
		if x.Type != want {
			t.Errorf("%s: %s, want %s", x.Name, x.Type, want)
		}
	}
	if count[kernels.MXFP4] != 72 || count[kernels.Q8_0] != 4*24+2 {
		t.Errorf("type counts %v", count)
	}
	// llama-bench: "gpt-oss 20B MXFP4 MoE | 11.27 GiB | 20.91 B" and
	// "gpt-oss 120B MXFP4 MoE | 59.02 GiB | 116.83 B" (published runs of ggml-org's files).
	for name, gib := range map[string]float64{"gpt-oss-20b": 11.27, "gpt-oss-120b": 59.02} {
		sp, err := NewSpec(name, "MXFP4_MOE", 0)
		if err != nil {
			t.Fatal(err)
		}
		var size int64 // llama-bench's size is the tensors' (llama_model_size), not the file's
		for _, x := range sp.Tensors() {
			size += x.Bytes()
		}
		if got := float64(size) / (1 << 30); math.Abs(got-gib) > 0.005 {
			t.Errorf("%s MXFP4_MOE: %.3f GiB of tensors, llama-bench says %.2f", name, got, gib)
		}
	}
	dense, err := NewSpec("llama-tiny", "MXFP4_MOE", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range dense.Tensors() {
		if len(x.Shape) == 2 && x.Type != kernels.Q8_0 {
			t.Errorf("llama-tiny MXFP4_MOE %s: %s, want Q8_0", x.Name, x.Type)
		}
	}
}
